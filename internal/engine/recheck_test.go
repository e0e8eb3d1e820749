package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestRecheckAfterGetMore is model-based: a cursor reads part of its
// results, random updates and deletes land, the cursor is restored (a
// getMore) and read to its end. Its remaining documents must be those the
// snapshot would still have given, in its order, each as the model holds
// it now, without those deleted since or not matching now: MongoDB's
// fetch after a yield. Collection scans, index scans and unions are tried.
func TestRecheckAfterGetMore(t *testing.T) {
	filters := []struct {
		filter, hint string
		collScan     bool
		match        func(a, b int32) bool
	}{
		{`{"a": {"$gte": 3}}`, `{"$natural": 1}`, true, func(a, _ int32) bool { return a >= 3 }},
		{`{"a": {"$gte": 3}}`, `{"a": 1}`, false, func(a, _ int32) bool { return a >= 3 }},
		{`{"$or": [{"a": 1}, {"b": 2}]}`, ``, false, func(a, b int32) bool { return a == 1 || b == 2 }},
		{`{}`, `{"_id": 1}`, true, func(int32, int32) bool { return true }},
	}
	for round := range 40 {
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		tc := filters[round%len(filters)]
		t.Run(fmt.Sprintf("%d %s %s", round, tc.filter, tc.hint), func(t *testing.T) {
			e := newTestEngine(t)
			mustCreateIndex(t, e, "r", `{"a": 1}`, false)
			mustCreateIndex(t, e, "r", `{"b": 1}`, false)
			type ab struct{ a, b int32 }
			model := map[int32]ab{}
			var docs []bson.Raw
			for i := range int32(60) {
				model[i] = ab{rng.Int32N(8), rng.Int32N(5)}
				docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: i}, {Key: "a", Value: model[i].a}, {Key: "b", Value: model[i].b}}))
			}
			if _, _, err := e.Insert("test", "r", docs, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			o := FindOptions{Filter: ext(t, tc.filter)}
			if tc.hint != "" {
				o.Hint = ext(t, `{"h": `+tc.hint+`}`).Lookup("h")
			}
			// the snapshot's order, read by a cursor opened at the same state
			order := idsOf(t, e, o)
			cur, err := e.Find("test", "r", o)
			if err != nil {
				t.Fatal(err)
			}
			defer cur.Close()
			first := rng.IntN(len(order) + 1)
			for i := range first {
				doc, err := cur.Next()
				if err != nil || doc == nil || doc.Lookup("_id").Int32() != order[i] {
					t.Fatalf("document %d: %v %v, want _id %d", i, doc, err, order[i])
				}
			}
			for range 25 {
				id := rng.Int32N(60)
				if _, ok := model[id]; !ok {
					continue
				}
				f := ext(t, fmt.Sprintf(`{"_id": %d}`, id))
				if rng.IntN(3) == 0 {
					if _, err := e.Delete("test", "r", f, 1, bson.RawValue{}, WriteOptions{}); err != nil {
						t.Fatal(err)
					}
					delete(model, id)
					continue
				}
				next := ab{rng.Int32N(8), rng.Int32N(5)}
				upd := ext(t, fmt.Sprintf(`{"$set": {"a": %d, "b": %d}}`, next.a, next.b))
				if _, err := e.Update("test", "r", UpdateSpec{Filter: f, Update: upd}); err != nil {
					t.Fatal(err)
				}
				model[id] = next
			}
			if err := cur.(*scanCursor).Restore(); err != nil {
				t.Fatal(err)
			}
			// An index scan's candidates are the documents its snapshot
			// indexed in bounds; a collection scan's, every document the
			// snapshot held, in _id order, from the last one returned on.
			candidates := order[first:]
			if tc.collScan {
				candidates = nil
				from := int32(0)
				if first > 0 {
					from = order[first-1] + 1
				}
				for id := from; id < 60; id++ {
					candidates = append(candidates, id)
				}
			}
			var want []string
			for _, id := range candidates {
				if v, ok := model[id]; ok && tc.match(v.a, v.b) {
					want = append(want, fmt.Sprintf("%d:%d,%d", id, v.a, v.b))
				}
			}
			var got []string
			for _, doc := range cursorDocs(t, cur) {
				got = append(got, fmt.Sprintf("%d:%d,%d", doc.Lookup("_id").Int32(), doc.Lookup("a").Int32(), doc.Lookup("b").Int32()))
			}
			if !slices.Equal(got, want) {
				t.Errorf("after the getMore:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestRecheckKeepsSnapshots: a cursor in a transaction reads the
// transaction's snapshot to its end, and a cursor whose collection nothing
// changed does not read its documents again.
func TestRecheckKeepsSnapshots(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range int32(4) {
		docs = append(docs, bsonDoc(bson.D{{Key: "_id", Value: i}}))
	}
	if _, _, err := e.Insert("test", "k", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	quiet, err := e.Find("test", "k", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	if err := quiet.(*scanCursor).Restore(); err != nil {
		t.Fatal(err)
	}
	if quiet.(*scanCursor).scan.recheck.on {
		t.Error("a cursor rechecks documents no commit changed")
	}
	txn, err := e.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Abort()
	cur, err := e.Find("test", "k", FindOptions{Txn: txn})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if _, err := cur.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Delete("test", "k", ext(t, `{"_id": 3}`), 1, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cur.(*scanCursor).Restore(); err != nil {
		t.Fatal(err)
	}
	if n := 1 + len(cursorDocs(t, cur)); n != 4 {
		t.Errorf("the transaction's cursor read %d documents, want its snapshot's 4", n)
	}
}

// idsOf is the _ids a find returns, in order.
func idsOf(t *testing.T, e *Engine, o FindOptions) []int32 {
	t.Helper()
	var ids []int32
	for _, doc := range findDocs(t, e, "r", o) {
		ids = append(ids, doc.Lookup("_id").Int32())
	}
	return ids
}

// TestRecheckTextAndNear: after a getMore, a $text search drops a document
// changed so that it no longer holds the key it was found by (its term, at
// its score), and keeps one whose key survives, as MongoDB's fetch of a
// key read before a yield does; a $near search returns the documents it
// read before the getMore as it read them, as MongoDB's near stage returns
// its buffered ones (jstests getmore_invalidated_documents.js).
func TestRecheckTextAndNear(t *testing.T) {
	points := `[{"_id": 1, "g": [0, 0]}, {"_id": 2, "g": [-1, 0]}, {"_id": 3, "g": [0, -1]}, {"_id": 4, "g": [-1, -1]}]`
	texts := `[{"_id": 1, "a": "bar"}, {"_id": 2, "a": "bar"}, {"_id": 3, "a": "bar"}]`
	tests := []struct {
		name, index, docs, filter string
		// write runs between the first two documents and the rest:
		// an update of filter w with u, or a delete of w (u empty)
		w, u string
		// want are the documents the cursor returns next; a $near
		// search's later ones depend on how far it had read
		want string
	}{
		{"text term gone", `{"a": "text"}`, texts, `{"$text": {"$search": "bar"}}`, `{"_id": 3}`, `{"$set": {"a": "nomatch"}}`, `[]`},
		{"text score changed", `{"a": "text"}`, texts, `{"$text": {"$search": "bar"}}`, `{"_id": 3}`, `{"$set": {"a": "bar bar"}}`, `[]`},
		{"text key kept", `{"a": "text"}`, texts, `{"$text": {"$search": "bar"}}`, `{"_id": 3}`, `{"$set": {"x": 1}}`, `[{"_id": 3, "a": "bar", "x": 1}]`},
		{"text deleted", `{"a": "text"}`, texts, `{"$text": {"$search": "bar"}}`, `{"_id": 3}`, ``, `[]`},
		{"2dsphere near moved", `{"g": "2dsphere"}`, points, `{"g": {"$nearSphere": [0, 0], "$maxDistance": 5}}`, `{}`, `{"$set": {"g": [15, 15]}}`,
			`[{"_id": 3, "g": [0, -1]}]`},
		{"2d near moved", `{"g": "2d"}`, points, `{"g": {"$near": [0, 0], "$maxDistance": 5}}`, `{}`, `{"$set": {"g": [15, 15]}}`,
			`[{"_id": 3, "g": [0, -1]}, {"_id": 4, "g": [-1, -1]}]`},
		{"2d near deleted", `{"g": "2d"}`, points, `{"g": {"$near": [0, 0], "$maxDistance": 5}}`, `{}`, ``,
			`[{"_id": 3, "g": [0, -1]}, {"_id": 4, "g": [-1, -1]}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEngine(t)
			mustCreateIndex(t, e, "tn", tc.index, false)
			var docs []bson.Raw
			vals, _ := ext(t, `{"d": `+tc.docs+`}`).Lookup("d").Array().Values()
			for _, v := range vals {
				docs = append(docs, v.Document())
			}
			if _, _, err := e.Insert("test", "tn", docs, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			cur, err := e.Find("test", "tn", FindOptions{Filter: ext(t, tc.filter)})
			if err != nil {
				t.Fatal(err)
			}
			defer cur.Close()
			for range 2 {
				if doc, err := cur.Next(); doc == nil || err != nil {
					t.Fatalf("first documents: %v %v", doc, err)
				}
			}
			if tc.u == "" {
				_, err = e.Delete("test", "tn", ext(t, tc.w), 0, bson.RawValue{}, WriteOptions{})
			} else {
				_, err = e.Update("test", "tn", UpdateSpec{Filter: ext(t, tc.w), Update: ext(t, tc.u), Multi: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := cur.(*scanCursor).Restore(); err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, doc := range cursorDocs(t, cur) {
				got = append(got, doc.String())
			}
			wv, _ := ext(t, `{"d": `+tc.want+`}`).Lookup("d").Array().Values()
			wantS := []string{}
			for _, v := range wv {
				wantS = append(wantS, v.Document().String())
			}
			if strings.HasPrefix(tc.name, "2dsphere") && len(got) > len(wantS) {
				got = got[:len(wantS)]
			}
			if !slices.Equal(got, wantS) {
				t.Errorf("after the getMore:\n got %v\nwant %v", got, wantS)
			}
		})
	}
}
