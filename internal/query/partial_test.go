package query

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestCheckPartial: the partial filters MongoDB builds an index with, and
// the ones it refuses with CannotCreateIndex.
func TestCheckPartial(t *testing.T) {
	for _, tc := range []struct {
		filter string
		ok     bool
	}{
		{`{}`, true},
		{`{"a": 1}`, true},
		{`{"a": null, "b": {"$gte": 1, "$lt": 5}}`, true},
		{`{"a": {"$exists": true}, "b": {"$type": "string"}}`, true},
		{`{"a": {"$in": [1, 2]}}`, true},
		{`{"$or": [{"a": 1}, {"b": {"$gt": 2}}]}`, true},
		{`{"$and": [{"$or": [{"a": 1}, {"$and": [{"b": 1}]}]}]}`, true},
		{`{"a": {"$all": [1, 2]}}`, true},
		{`{"loc": {"$geoWithin": {"$box": [[0, 0], [1, 1]]}}}`, true},
		{`{"a": {"$ne": 1}}`, false},
		{`{"a": {"$nin": [1]}}`, false},
		{`{"a": {"$not": {"$gt": 1}}}`, false},
		{`{"a": {"$exists": false}}`, false},
		{`{"$nor": [{"a": 1}]}`, false},
		{`{"a": {"$regex": "x"}}`, false},
		{`{"a": {"$size": 2}}`, false},
		{`{"a": {"$mod": [2, 0]}}`, false},
		{`{"a": {"$elemMatch": {"$gt": 1}}}`, false},
		{`{"a": {"$bitsAllSet": 1}}`, false},
		{`{"$or": [{"a": {"$ne": 1}}]}`, false},
		{`{"$and": [{"$or": [{"$and": [{"$or": [{"a": 1}, {"b": 1}]}, {"c": 1}]}, {"d": 1}]}, {"e": 1}]}`, false},
		{`{"$and": [{"$and": [{"$and": [{"x": 3}]}]}]}`, true},
		{`{"$and": [{"$and": [{"$and": [{"$and": [{"x": 3}]}]}]}]}`, false},
	} {
		var doc bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.filter), false, &doc); err != nil {
			t.Fatal(err)
		}
		f, err := Compile(doc)
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		err = f.CheckPartial()
		if tc.ok && err != nil || !tc.ok && !mongoerr.Is(err, mongoerr.CannotCreateIndex) {
			t.Errorf("%s: %v, want accepted %v", tc.filter, err, tc.ok)
		}
	}
}
