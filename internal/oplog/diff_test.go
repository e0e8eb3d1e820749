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
		old, err := bson.Marshal(oldD)
		if err != nil {
			t.Fatal(err)
		}
		next, err := bson.Marshal(nextD)
		if err != nil {
			t.Fatal(err)
		}
		o := bson.Raw(UpdateO(nil, old, next))
		got := ApplyDiff(old, o.Lookup("diff").Document())
		if string(got) != string(next) {
			t.Fatalf("old  %s\nnext %s\ndiff %s\ngot  %s", bson.Raw(old), bson.Raw(next), o, got)
		}
	}
}
