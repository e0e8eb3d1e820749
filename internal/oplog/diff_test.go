package oplog

import (
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
		o := bson.Raw(UpdateO(nil, old, next))
		got, err := ApplyDiff(old, o.Lookup("diff").Document())
		if err != nil || string(got) != string(next) {
			t.Fatalf("old  %s\nnext %s\ndiff %s\ngot  %s, %v", old, next, o, got, err)
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

func bsonDoc(t *testing.T, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
