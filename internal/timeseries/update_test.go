package timeseries

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestTranslate: filters and updates on the metaField become filters and
// updates on the buckets' meta; anything else is refused.
func TestTranslate(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m"}
	ext := func(s string) bson.Raw {
		var d bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct{ in, want string }{
		{`{"m": 1}`, `{"meta": {"$numberInt":"1"}}`},
		{`{"m.a": {"$gt": 1}, "$or": [{"m.b": 2}, {"m": null}]}`, `{"meta.a": {"$gt": {"$numberInt":"1"}},"$or": [{"meta.b": {"$numberInt":"2"}},{"meta": null}]}`},
		{`{"$expr": {"$eq": ["$m", 1]}}`, `{"$expr": {"$eq": ["$m",{"$numberInt":"1"}]}}`},
		{`{"mm": 1}`, ""},
		{`{"$and": [{"t": 1}]}`, ""},
	} {
		got, err := TranslateQuery(o, ext(tc.in))
		if tc.want == "" {
			if err == nil {
				t.Errorf("query %s: %s, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("query %s: %s %v, want %s", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`{"$set": {"m.a": 1}, "$unset": {"m.b": ""}}`, `{"$set": {"meta.a": {"$numberInt":"1"}},"$unset": {"meta.b": ""}}`},
		{`{"$rename": {"m.a": "m.c"}}`, `{"$rename": {"meta.a": "meta.c"}}`},
		{`{"$rename": {"m.a": "c"}}`, ""},
		{`{"$set": {"v": 1}}`, ""},
		{`{"m": 1}`, ""},
	} {
		got, err := TranslateUpdate(o, ext(tc.in), false)
		if tc.want == "" {
			if err == nil {
				t.Errorf("update %s: %s, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("update %s: %s %v, want %s", tc.in, got, err, tc.want)
		}
	}
}
