package timeseries

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestPartialFilter: a partial filter's conditions as MongoDB 7.0 pushes
// them down (jstests/core/timeseries/timeseries_index_partial.js's
// checkPredicateOK / checkPredicateDisallowed): meta conditions renamed,
// time and measurement conditions named (Folio does not translate them),
// the others refused with 5916301 and MongoDB's reason.
func TestPartialFilter(t *testing.T) {
	o := Options{TimeField: "time", MetaField: "m"}
	const refused = "Error translating non-metadata time-series predicate to operate on buckets: "
	for _, tc := range []struct {
		filter, bucket string
		measured       string
		msg            string
	}{
		{filter: `{}`, bucket: `{}`},
		{filter: `{"m.a": {"$in": [1, 2, 5]}}`, bucket: `{"meta.a": {"$in": [1, 2, 5]}}`},
		{filter: `{"$or": [{"m.a": {"$lt": 5}}, {"m.b": {"$lt": 6}}]}`, bucket: `{"$or": [{"meta.a": {"$lt": 5}}, {"meta.b": {"$lt": 6}}]}`},
		{filter: `{"m": {"$exists": false}}`, bucket: `{"meta": {"$exists": false}}`},
		{filter: `{"a": 5}`, measured: "a"},
		{filter: `{"a": {"$eq": {"$regularExpression": {"pattern": "a", "options": ""}}}}`, measured: "a"},
		{filter: `{"a": {"$exists": true}}`, measured: "a"},
		{filter: `{"$or": [{"a": {"$lt": 5}}, {"m.b": {"$lt": 6}}]}`, measured: "a"},
		{filter: `{"m": 1, "time": {"$gte": {"$date": "2020-01-01T00:00:00Z"}}}`, measured: "time"},
		{filter: `{"a": {}}`, msg: refused + "operand can't be an object or array: { a: { $eq: {} } }"},
		{filter: `{"a": [1, 2]}`, msg: refused + "operand can't be an object or array: { a: { $eq: [ 1, 2 ] } }"},
		{filter: `{"time": 7}`, msg: refused + "This predicate will never be true, because the time field always contains a Date: { time: { $eq: 7 } }"},
		{filter: `{"a": null}`, msg: refused + "can't handle {$eq: null}: { a: { $eq: null } }"},
		{filter: `{"a": {"$in": [1, null]}}`, msg: refused + "can't handle {$eq: null} predicate (inside $in predicate): { a: { $in: [ 1, null ] } }"},
		{filter: `{"a": {"$in": [null, {"$regularExpression": {"pattern": "abc", "options": ""}}]}}`, msg: refused + "can't handle $regex predicate (inside $in predicate): { a: { $in: [ null, /abc/ ] } }"},
		{filter: `{"a": {"$exists": false}}`, msg: refused + "can't handle this predicate: { a: { $exists: false } }"},
		// every condition is checked, a measured one first or not
		{filter: `{"b": 1, "$or": [{}, {"a": {}}]}`, msg: refused + "operand can't be an object or array: { a: { $eq: {} } }"},
	} {
		var filter bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.filter), false, &filter); err != nil {
			t.Fatal(err)
		}
		bucket, measured, err := PartialFilter(o, filter)
		if tc.msg != "" {
			if e := mongoerr.As(err); e == nil || e.Code != mongoerr.TimeseriesPredicateNotTranslatable || e.Msg != tc.msg {
				t.Errorf("%s: %v, want 5916301 %q", tc.filter, err, tc.msg)
			}
			continue
		}
		if err != nil || measured != tc.measured {
			t.Errorf("%s: measured %q %v, want %q", tc.filter, measured, err, tc.measured)
			continue
		}
		if tc.bucket != "" {
			var want bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(tc.bucket), false, &want); err != nil {
				t.Fatal(err)
			}
			if bucket.String() != want.String() {
				t.Errorf("%s: %s, want %s", tc.filter, bucket, want)
			}
		}
	}
}
