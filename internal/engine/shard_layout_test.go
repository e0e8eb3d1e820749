package engine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/querygen"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// shardKeys are the shard keys TestShardedDifferential tries, over the
// scalar fields k and k2 it adds to the generated documents.
var shardKeys = []string{
	`{"k": 1}`, `{"k": 1, "k2": 1}`, `{"k": "hashed"}`, `{"k2": 1, "k": "hashed"}`, `{"_id": "hashed"}`, `{"_id": 1}`,
}

// TestShardedDifferential checks a sharded collection against a twin
// that is not: both get the same random indexes, documents (half of them
// before the sharding, copied by it, half after), queries, updates,
// deletes and findAndModifys, which must answer alike and leave the same
// documents; the sharded one must validate, its documents stored in shard
// key order.
func TestShardedDifferential(t *testing.T) {
	e := newTestEngine(t)
	for _, seed := range diffSeeds(12) {
		if t.Failed() {
			break
		}
		checkSharded(t, e, seed, 40)
	}
}

func checkSharded(t *testing.T, e *Engine, seed uint64, n int) {
	t.Helper()
	g := querygen.New(seed)
	k := datasetCount.Add(1)
	sharded, plain := fmt.Sprintf("s%d", k), fmt.Sprintf("s%dplain", k)
	key := shardKeys[g.Intn(len(shardKeys))]
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d (-diffseed=%d), shard key %s: %s", seed, seed, key, fmt.Sprintf(format, args...))
	}
	for _, coll := range []string{sharded, plain} {
		if err := e.CreateCollection("test", coll, CollectionOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, spec := range g.Indexes() {
		if spec.Unique {
			continue // a multi-document write stopped by one fails midway, at a point that depends on the order
		}
		is := IndexSpec{Key: bsonDoc(spec.Key), Sparse: spec.Sparse, ExpireAfter: -1}
		if spec.Partial != nil {
			is.Partial = bsonDoc(spec.Partial)
		}
		for _, coll := range []string{sharded, plain} {
			if _, err := e.CreateIndexes("test", coll, []IndexSpec{is}, nil); err != nil {
				fail("index %v: %v", spec.Key, err)
			}
		}
	}
	scalar := func() any {
		for {
			if v := g.Scalar(); g.Intn(8) > 0 {
				if _, ok := v.(bson.A); !ok {
					return v
				}
			} else {
				return nil
			}
		}
	}
	insert := func(i int) {
		doc := g.Doc(int32(i))
		doc = append(doc, bson.E{Key: "k", Value: scalar()}, bson.E{Key: "k2", Value: scalar()})
		if g.Intn(10) == 0 {
			doc = doc[:len(doc)-1] // a missing shard key field counts as null
		}
		raw := []bson.Raw{bsonDoc(doc)}
		_, werrsA, errA := e.Insert("test", sharded, raw, true, WriteOptions{})
		_, werrsB, errB := e.Insert("test", plain, raw, true, WriteOptions{})
		if fmt.Sprint(len(werrsA), errA) != fmt.Sprint(len(werrsB), errB) {
			fail("insert %s: %v %v, unsharded %v %v", bson.Raw(raw[0]), werrsA, errA, werrsB, errB)
		}
	}
	docs := 20 + g.Intn(60)
	for i := range docs / 2 {
		insert(i)
	}
	if err := e.ShardCollection(t.Context(), "test", sharded, ext(t, key)); err != nil {
		fail("sharding: %v", err)
	}
	for i := docs / 2; i < docs; i++ {
		insert(i)
	}
	insert(0) // a duplicate _id, with other shard key values: refused alike
	byID := ext(t, `{"s": {"_id": 1}}`).Lookup("s").Document()
	same := func(what string) {
		t.Helper()
		a, b := sortedDocs(t, e, sharded, nil, byID), sortedDocs(t, e, plain, nil, byID)
		if !bytes.Equal(a, b) {
			fail("after %s the collections differ", what)
		}
	}
	same("the inserts")
	for i := 0; i < n; i++ {
		filter := bsonDoc(g.Query())
		var what, got, want string
		switch g.Intn(6) {
		case 5:
			// A retryable write or a transaction changing one document's
			// shard key value, its filter pinning the whole key, moves it.
			id := g.Intn(docs)
			cur := bson.Raw(sortedDocs(t, e, sharded, bsonDoc(bson.D{{Key: "_id", Value: int32(id)}}), nil))
			if len(cur) == 0 {
				continue // deleted
			}
			pin := bson.D{{Key: "_id", Value: int32(id)}}
			for _, f := range []string{"k", "k2"} {
				v, err := cur.LookupErr(f)
				if err != nil {
					v = bson.RawValue{Type: bson.TypeNull}
				}
				pin = append(pin, bson.E{Key: f, Value: v})
			}
			if slices.ContainsFunc(pin, func(e bson.E) bool { v, ok := e.Value.(bson.RawValue); return ok && v.Type == bson.TypeRegex }) {
				continue // a regex in a filter matches, it does not pin
			}
			filter = bsonDoc(pin)
			upd := bsonDoc(bson.D{{Key: "$set", Value: bson.D{{Key: []string{"k", "k2"}[g.Intn(2)], Value: scalar()}, {Key: "n", Value: int32(i)}}}})
			what = "shard key update " + bson.Raw(filter).String() + " " + bson.Raw(upd).String()
			var a UpdateResult
			var errA error
			if g.Intn(2) == 0 {
				a, errA = e.Update("test", sharded, UpdateSpec{Filter: filter, Update: upd, WriteOptions: WriteOptions{Record: nopRecorder{}}})
			} else {
				txn, err := e.Begin()
				if err != nil {
					t.Fatal(err)
				}
				if a, errA = e.Update("test", sharded, UpdateSpec{Filter: filter, Update: upd, WriteOptions: WriteOptions{Txn: txn}}); errA == nil {
					errA = txn.Commit()
				} else {
					txn.Abort()
				}
			}
			b, errB := e.Update("test", plain, UpdateSpec{Filter: filter, Update: upd})
			got, want = fmt.Sprint(a.Matched, a.Modified, errA), fmt.Sprint(b.Matched, b.Modified, errB)
		case 0:
			what = "delete " + bson.Raw(filter).String()
			a, errA := e.Delete("test", sharded, filter, 0, bson.RawValue{}, WriteOptions{})
			b, errB := e.Delete("test", plain, filter, 0, bson.RawValue{}, WriteOptions{})
			got, want = fmt.Sprint(a, errA), fmt.Sprint(b, errB)
		case 1, 2:
			set := bson.D{{Key: "n", Value: int32(i)}}
			if g.Intn(2) == 0 {
				set = append(set, bson.E{Key: []string{"a", "b", "c"}[g.Intn(3)], Value: g.Scalar()})
			}
			upd := bsonDoc(bson.D{{Key: "$set", Value: set}})
			what = "update " + bson.Raw(filter).String() + " " + bson.Raw(upd).String()
			a, errA := e.Update("test", sharded, UpdateSpec{Filter: filter, Update: upd, Multi: true})
			b, errB := e.Update("test", plain, UpdateSpec{Filter: filter, Update: upd, Multi: true})
			got, want = fmt.Sprint(a.Matched, a.Modified, errA), fmt.Sprint(b.Matched, b.Modified, errB)
			if errA != nil && errB != nil && mongoerr.As(errA).Code == mongoerr.As(errB).Code {
				// Stopped midway by a document an index refuses (an array
				// in a hashed index, parallel arrays): the documents changed
				// before it depend on the order, which sharding changes. The
				// errors must agree; the twin then takes the sharded documents.
				got, want = mongoerr.As(errA).Code.Name(), mongoerr.As(errB).Code.Name()
				copyDocs(t, e, sharded, plain)
			}
		case 3:
			upd := bsonDoc(bson.D{{Key: "$inc", Value: bson.D{{Key: "popped", Value: int32(1)}}}})
			sort := bsonDoc(bson.D{{Key: "_id", Value: int32(1)}})
			what = "findAndModify " + bson.Raw(filter).String()
			a, errA := e.FindAndModify("test", sharded, FindAndModifySpec{Filter: filter, Sort: sort, Update: upd, New: true})
			b, errB := e.FindAndModify("test", plain, FindAndModifySpec{Filter: filter, Sort: sort, Update: upd, New: true})
			got, want = fmt.Sprint(a.Value, a.N, errA), fmt.Sprint(b.Value, b.N, errB)
		default:
			what = "find " + bson.Raw(filter).String()
			for _, hint := range []bson.Raw{nil, ext(t, `{"h": "_id_"}`)} {
				a, b := sortedDocs(t, e, sharded, filter, byID), sortedDocs(t, e, plain, filter, byID)
				if hint != nil {
					a = sortedDocsHinted(t, e, sharded, filter, byID, hint.Lookup("h"))
				}
				got, want = fmt.Sprintf("%x", a), fmt.Sprintf("%x", b)
				if got != want {
					break
				}
			}
		}
		if got != want {
			fail("%s: %s, unsharded %s", what, got, want)
		}
		same(what)
	}
	c := e.Collection("test", sharded)
	if _, ok := c.Sharded(); !ok {
		fail("the collection is not sharded")
	}
	if !strings.Contains(key, "hashed") {
		// The natural order is the shard key's, then _id's.
		order := bson.D{}
		elems, _ := ext(t, key).Elements()
		for _, el := range elems {
			order = append(order, bson.E{Key: el.Key(), Value: int32(1)})
		}
		if order[len(order)-1].Key != "_id" {
			order = append(order, bson.E{Key: "_id", Value: int32(1)})
		}
		if a, b := collDocs(t, e, sharded), sortedDocs(t, e, sharded, nil, bsonDoc(order)); !bytes.Equal(a, b) {
			fail("the natural order is not the shard key's")
		}
	}
	res, err := e.Validate(c)
	if err != nil || len(res.Errors) > 0 || len(res.Extra) > 0 || len(res.Missing) > 0 {
		fail("validate: %v %+v", err, res)
	}
	if res.KeysPerIndex[idIndexName] != res.Records {
		fail("the _id index holds %d keys for %d documents", res.KeysPerIndex[idIndexName], res.Records)
	}
}

// sortedDocs is coll's documents matching filter (nil: all) in sort
// order, concatenated.
func sortedDocs(t *testing.T, e *Engine, coll string, filter, sort bson.Raw) []byte {
	t.Helper()
	return sortedDocsHinted(t, e, coll, filter, sort, bson.RawValue{})
}

func sortedDocsHinted(t *testing.T, e *Engine, coll string, filter, sort bson.Raw, hint bson.RawValue) []byte {
	t.Helper()
	cur, err := e.Find("test", coll, FindOptions{Filter: filter, Sort: sort, Hint: hint})
	if err != nil {
		return []byte(err.Error())
	}
	defer cur.Close()
	var out []byte
	for {
		doc, err := cur.Next()
		if err != nil {
			return append(out, err.Error()...)
		}
		if doc == nil {
			return out
		}
		out = append(out, doc...)
	}
}

// copyDocs replaces the documents of collection to by those of from.
func copyDocs(t *testing.T, e *Engine, from, to string) {
	t.Helper()
	if _, err := e.Delete("test", to, ext(t, `{}`), 0, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var docs []bson.Raw
	for rest := sortedDocs(t, e, from, nil, nil); len(rest) > 0; {
		doc, tail, ok := bsoncore.ReadDocument(rest)
		if !ok {
			t.Fatalf("copying %s: %s", from, rest)
		}
		docs, rest = append(docs, bson.Raw(doc)), tail
	}
	if len(docs) == 0 {
		return
	}
	if _, werrs, err := e.Insert("test", to, docs, true, WriteOptions{}); len(werrs) > 0 || err != nil {
		t.Fatalf("copying %s: %v %v", from, werrs, err)
	}
}

// TestFrontendsShardWhileOthersWrite shards a collection on one frontend
// while two others $inc its documents and insert new ones: every
// acknowledged write is in the sharded collection (writes wait while it
// is frozen, none is lost to the copy), which validates and is sharded on
// every frontend.
func TestFrontendsShardWhileOthersWrite(t *testing.T) {
	fe := openFrontends(t, 3, time.Second)
	const docs = 2000
	var batch []bson.Raw
	for i := range docs {
		batch = append(batch, ext(t, fmt.Sprintf(`{"_id": %d, "g": %d, "n": 0}`, i, i%37)))
	}
	if _, _, err := fe[0].Insert("test", "c", batch, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	incs := make([][docs]int, 2)
	inserted := make([][]int, 2)
	for w, e := range fe[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				id := rng.IntN(docs)
				insert := rng.IntN(4) == 0
				newID := docs + w*1_000_000 + i
				if insert {
					_, _, err = e.Insert("test", "c", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d, "g": %d, "n": 0}`, newID, rng.IntN(37)))}, true, WriteOptions{})
				} else {
					_, err = e.Update("test", "c", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, `{"$inc": {"n": 1}}`)})
				}
				if mongoerr.Is(err, mongoerr.NotWritablePrimary) {
					continue // refused before writing: a heartbeat late on a loaded machine
				}
				if err != nil {
					t.Error(err)
					return
				}
				if insert {
					inserted[w] = append(inserted[w], newID)
				} else {
					incs[w][id]++
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	err := fe[0].ShardCollection(t.Context(), "test", "c", ext(t, `{"g": 1}`))
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range fe {
		if _, ok := e.Collection("test", "c").Sharded(); !ok {
			t.Errorf("frontend %d does not see the collection sharded", i)
		}
		res := mustValidate(t, e, "c")
		if want := int64(docs + len(inserted[0]) + len(inserted[1])); res.Records != want || res.KeysPerIndex[idIndexName] != want {
			t.Errorf("frontend %d: %d documents, %d _id keys, want %d", i, res.Records, res.KeysPerIndex[idIndexName], want)
		}
	}
	for id := range docs {
		d := findOne(t, fe[0], "c", fmt.Sprintf(`{"_id": %d}`, id))
		if n := d.Lookup("n").Int32(); int(n) != incs[0][id]+incs[1][id] {
			t.Fatalf("document %d: n = %d after %d acknowledged $inc", id, n, incs[0][id]+incs[1][id])
		}
	}
	for _, ids := range inserted {
		for _, id := range ids {
			if findOne(t, fe[2], "c", fmt.Sprintf(`{"_id": %d}`, id)) == nil {
				t.Fatalf("inserted document %d is gone", id)
			}
		}
	}
}

// TestShardKillsOpenCursors: a cursor opened before the sharding reads the
// documents the sharding removes, so its next getMore fails with
// QueryPlanKilled; one opened after reads the new layout.
func TestShardKillsOpenCursors(t *testing.T) {
	e := newTestEngine(t)
	if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 1, "g": 2}`), ext(t, `{"_id": 2, "g": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.Find("test", "c", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if err := e.ShardCollection(t.Context(), "test", "c", ext(t, `{"g": 1}`)); err != nil {
		t.Fatal(err)
	}
	if err := cur.(*scanCursor).Restore(); !mongoerr.Is(err, mongoerr.QueryPlanKilled) {
		t.Errorf("restore after the sharding: %v, want QueryPlanKilled", err)
	}
	after, err := e.Find("test", "c", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if err := after.(*scanCursor).Restore(); err != nil {
		t.Errorf("restore of a cursor opened after the sharding: %v", err)
	}
	if d, err := after.Next(); err != nil || d.Lookup("g").Int32() != 1 {
		t.Errorf("first document in natural order %v (%v), want g 1", d, err)
	}
}

// nopRecorder stands for a retryable write's session record.
type nopRecorder struct{}

func (nopRecorder) Stage(storage.Txn, []Write) error { return nil }
func (nopRecorder) Committed()                       {}

// TestShardKeyUpdateRules: changing a document's shard key value follows
// MongoDB 7.0's rules (the filter pins the whole key, one document, a
// retryable write or a transaction); allowed, it moves the document, its
// index entries (a unique one's included) following it.
func TestShardKeyUpdateRules(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "c", `{"u": 1}`, true)
	if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 1, "g": 5, "u": "a"}`), ext(t, `{"_id": 2, "g": 5, "u": "b"}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.ShardCollection(t.Context(), "test", "c", ext(t, `{"g": 1}`)); err != nil {
		t.Fatal(err)
	}
	set := ext(t, `{"$set": {"g": 9}}`)
	for _, c := range []struct {
		filter string
		multi  bool
		rec    Recorder
		code   mongoerr.Code
	}{
		{`{"_id": 1}`, false, nopRecorder{}, mongoerr.ShardKeyUpdateWithoutFullKey},
		{`{"_id": 1, "g": 5}`, false, nil, mongoerr.IllegalOperation},
		{`{"g": 5}`, true, nil, mongoerr.InvalidOptions},
	} {
		_, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, c.filter), Update: set, Multi: c.multi, WriteOptions: WriteOptions{Record: c.rec}})
		if !mongoerr.Is(err, c.code) {
			t.Errorf("%s (multi %v): %v, want %s", c.filter, c.multi, err, c.code.Name())
		}
	}
	// A multi-update that leaves the key alone is fine.
	if res, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{"g": 5}`), Update: ext(t, `{"$set": {"x": 1}}`), Multi: true}); err != nil || res.Modified != 2 {
		t.Fatalf("multi-update of another field: %+v %v", res, err)
	}
	res, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{"_id": 1, "g": 5}`), Update: set, WriteOptions: WriteOptions{Record: nopRecorder{}}})
	if err != nil || res.Modified != 1 {
		t.Fatalf("retryable shard key update: %+v %v", res, err)
	}
	txn, err := e.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.FindAndModify("test", "c", FindAndModifySpec{Filter: ext(t, `{"_id": 2, "g": 5}`), Update: ext(t, `{"$set": {"g": 1}}`), WriteOptions: WriteOptions{Txn: txn}}); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if d := findOne(t, e, "c", `{"u": "a"}`); d == nil || d.Lookup("g").Int32() != 9 {
		t.Errorf("by the unique index after the move: %v", d)
	}
	if got := collDocs(t, e, "c"); !bytes.Equal(got, append(append([]byte(nil), findOne(t, e, "c", `{"_id": 2}`)...), findOne(t, e, "c", `{"_id": 1}`)...)) {
		t.Errorf("natural order after the moves is not g's: %s", got)
	}
	// The unique entry of a moved document still holds its key.
	if _, werrs, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 3, "g": 0, "u": "a"}`)}, true, WriteOptions{}); err != nil || len(werrs) != 1 || !mongoerr.Is(werrs[0].Err, mongoerr.DuplicateKey) {
		t.Errorf("insert of a moved document's unique key: %v %v", werrs, err)
	}
	res2 := mustValidate(t, e, "c")
	if res2.Records != 2 || res2.KeysPerIndex["u_1"] != 2 || res2.KeysPerIndex[idIndexName] != 2 {
		t.Errorf("validate after the moves: %+v", res2)
	}
}

// TestShardCollectionInterrupted: a sharding whose operation ends (killOp,
// maxTimeMS, disconnect) stops copying and leaves the collection as it was:
// not sharded, not frozen, every document in place, writable.
func TestShardCollectionInterrupted(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 600 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "g": %d}`, i, i%7)))
	}
	if _, _, err := e.Insert("test", "c", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := e.ShardCollection(ctx, "test", "c", ext(t, `{"g": 1}`)); !mongoerr.Is(err, mongoerr.Interrupted) {
		t.Fatalf("sharding under an ended operation: %v, want Interrupted", err)
	}
	c := e.Collection("test", "c")
	if _, ok := c.Sharded(); ok || c.frozen.Load() {
		t.Fatalf("after the interrupted sharding: sharded %v, frozen %v", ok, c.frozen.Load())
	}
	if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 600, "g": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if res := mustValidate(t, e, "c"); res.Records != 601 {
		t.Errorf("%d documents after the interrupted sharding, want 601", res.Records)
	}
}

// TestShardChunksInterrupted: reading a sharded collection's chunk
// boundaries, one seek per TiKV region, stops when its operation ends.
func TestShardChunksInterrupted(t *testing.T) {
	if !testkv.TiKV() {
		t.Skip("Pebble has no regions: a sharded collection is one chunk")
	}
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 600 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "g": %d}`, i, i)))
	}
	if _, _, err := e.Insert("test", "c", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.ShardCollection(t.Context(), "test", "c", ext(t, `{"g": 1}`)); err != nil {
		t.Fatal(err)
	}
	c := e.Collection("test", "c")
	// The mock cluster splits regions holding more than a few keys every
	// 20 ms: the sharded copy's keys are split soon after it is written.
	var points []bson.D
	var err error
	for deadline := time.Now().Add(30 * time.Second); len(points) == 0 && err == nil && time.Now().Before(deadline); time.Sleep(testkv.SplitPeriod) {
		points, err = e.ShardChunks(t.Context(), c)
	}
	if err != nil || len(points) == 0 {
		t.Fatalf("chunk boundaries: %v, %v; want some", points, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.ShardChunks(ctx, c); !mongoerr.Is(err, mongoerr.Interrupted) {
		t.Fatalf("chunk boundaries under an ended operation: %v, want Interrupted", err)
	}
}
