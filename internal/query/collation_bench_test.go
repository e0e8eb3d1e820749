package query

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
)

// BenchmarkCollatedMatch measures an equality under a strength-2
// collation against the same equality without one.
func BenchmarkCollatedMatch(b *testing.B) {
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "name", Value: "Some User Name"}, {Key: "n", Value: 5}})
	filter, _ := bson.Marshal(bson.D{{Key: "name", Value: "some user name"}})
	spec, _ := bson.Marshal(bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 2}})
	coll, err := collation.Parse(spec)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *collation.Collator
	}{{"simple", nil}, {"strength2", coll}} {
		f, err := CompileCollated(filter, nil, tc.c)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Match(doc)
			}
		})
	}
}
