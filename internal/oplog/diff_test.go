package oplog

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/querygen"
)

// TestApplyDiffInvertsUpdateO: applying the diff of (old, next) to old
// gives next, byte for byte, for random documents and random changes of
// them (fields kept, dropped, replaced by random values, added).
func TestApplyDiffInvertsUpdateO(t *testing.T) {
	g := querygen.New(7)
	for i := range 5000 {
		oldD := g.Doc(int32(i))
		nextD := bson.D{}
		if g.Intn(4) == 0 {
			nextD = g.Doc(int32(i))
		} else {
			for _, e := range oldD {
				switch g.Intn(5) {
				case 0:
				case 1:
					nextD = append(nextD, bson.E{Key: e.Key, Value: g.Value(2)})
				default:
					nextD = append(nextD, e)
				}
			}
			for range g.Intn(3) {
				nextD = append(nextD, bson.E{Key: string(rune('p' + g.Intn(5))), Value: g.Value(2)})
			}
		}
		old, next := bsonDoc(t, oldD), bsonDoc(t, nextD)
		if string(old) == string(next) {
			continue // an update that changes nothing logs no entry
		}
		diff := bson.Raw(docDiff(old, next))
		got, err := ApplyDiff(old, diff)
		if err != nil || string(got) != string(next) {
			t.Fatalf("old  %s\nnext %s\ndiff %s\ngot  %s, %v", old, next, diff, got, err)
		}
		o := bson.Raw(UpdateO(nil, old, next))
		if _, err := o.LookupErr("$v"); err != nil && string(o) != string(next) {
			t.Fatalf("UpdateO of %s -> %s is neither a delta nor the replacement: %s", old, next, o)
		}
	}
}

// TestPairDiffIsLookupDiff: for documents with the same field names in the
// same order, the pairwise diff is byte for byte the diff made by looking
// each field up.
func TestPairDiffIsLookupDiff(t *testing.T) {
	g := querygen.New(11)
	for i := range 5000 {
		oldD := g.Doc(int32(i))
		nextD := make(bson.D, len(oldD))
		for j, e := range oldD {
			nextD[j] = e
			if g.Intn(3) == 0 {
				nextD[j].Value = g.Value(2)
			}
		}
		old, next := bsonDoc(t, oldD), bsonDoc(t, nextD)
		if !sameNames(old, next) {
			t.Fatalf("same names not recognized: %s, %s", old, next)
		}
		if got, want := bson.Raw(pairDiff(old, next)), bson.Raw(lookupDiff(old, next)); string(got) != string(want) {
			t.Fatalf("old  %s\nnext %s\npairs  %s\nlookup %s", old, next, got, want)
		}
	}
	if sameNames(bsonDoc(t, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}), bsonDoc(t, bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 1}})) {
		t.Fatal("reordered names taken as the same")
	}
	if sameNames(bsonDoc(t, bson.D{{Key: "a", Value: 1}}), bsonDoc(t, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}})) {
		t.Fatal("an added name taken as the same names")
	}
}

// TestUpdateOWeighsTheDiff: UpdateO logs the delta only when the diff with
// the delta's 15 bytes is smaller than the new document, else the new
// document (a replacement); a sub-document or array whose diff is not
// smaller than it is set whole, as MongoDB's doc_diff::computeOplogDiff
// (jstests/change_streams/events_containing_version_literals.js: a
// pipeline update of {_id: 0, $v: 1} to {_id: 0, $v: "test"} is a replace
// event).
func TestUpdateOWeighsTheDiff(t *testing.T) {
	long := strings.Repeat("*", 64)
	for _, tc := range []struct{ old, next, want string }{
		// small documents: the diff is not worth it
		{`{"_id": 0, "$v": 1}`, `{"_id": 0, "$v": "test"}`, `{"_id": 0, "$v": "test"}`},
		{`{"_id": 0, "a": 1}`, `{"_id": 0, "a": 2}`, `{"_id": 0, "a": 2}`},
		// a large field kept: the delta
		{`{"_id": 0, "s": "` + long + `", "a": 1}`, `{"_id": 0, "s": "` + long + `", "a": 2}`,
			`{"$v": 2, "diff": {"u": {"a": 2}}}`},
		// a small sub-document changed in full is set whole, a large one diffed
		{`{"_id": 0, "s": "` + long + `", "o": {"x": 1}}`, `{"_id": 0, "s": "` + long + `", "o": {"x": 2}}`,
			`{"$v": 2, "diff": {"u": {"o": {"x": 2}}}}`},
		{`{"_id": 0, "o": {"s": "` + long + `", "x": 1}}`, `{"_id": 0, "o": {"s": "` + long + `", "x": 2}}`,
			`{"$v": 2, "diff": {"so": {"u": {"x": 2}}}}`},
		// so are array elements
		{`{"_id": 0, "s": "` + long + `", "a": [{"x": 1}]}`, `{"_id": 0, "s": "` + long + `", "a": [{"x": 2}]}`,
			`{"$v": 2, "diff": {"u": {"a": [{"x": 2}]}}}`},
		{`{"_id": 0, "a": ["` + long + `", {"s": "` + long + `", "x": 1}]}`, `{"_id": 0, "a": ["` + long + `", {"s": "` + long + `", "x": 2}]}`,
			`{"$v": 2, "diff": {"sa": {"a": true, "s1": {"u": {"x": 2}}}}}`},
	} {
		old, next, want := extDoc(t, tc.old), extDoc(t, tc.next), extDoc(t, tc.want)
		if got := bson.Raw(UpdateO(nil, old, next)); string(got) != string(want) {
			t.Errorf("%s -> %s:\n got %s\nwant %s", tc.old, tc.next, got, want)
		}
	}
}

func extDoc(t *testing.T, j string) bson.Raw {
	t.Helper()
	var d bson.D
	if err := bson.UnmarshalExtJSON([]byte(j), false, &d); err != nil {
		t.Fatal(err)
	}
	return bsonDoc(t, d)
}

func bsonDoc(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
