package timeseries

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
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
		{`{"mm": 1}`, ""},
		{`{"$and": [{"t": 1}]}`, ""},
		// MongoDB 7.0's translateQuery (timeseries_update_arbitrary_updates_not_enabled.js,
		// timeseries_delete_with_meta.js): $expr and $where are refused anywhere
		{`{"$expr": {"$eq": ["$m", 1]}}`, ""},
		{`{"m": 1, "$or": [{"$where": "true"}]}`, ""},
		// $jsonSchema: required entries and properties must be the metaField
		{`{"$jsonSchema": {"required": ["m"], "properties": {"m": {"required": ["m"]}}}}`, `{"$jsonSchema": {"required": ["meta"],"properties": {"meta": {"required": ["m"]}}}}`},
		{`{"$jsonSchema": {"bsonType": "object", "required": ["m"]}}`, `{"$jsonSchema": {"bsonType": "object","required": ["meta"]}}`},
		{`{"$jsonSchema": {"required": ["m.a"]}}`, ""},
		{`{"$jsonSchema": {"required": ["m", "t"]}}`, ""},
		{`{"$jsonSchema": {"required": ["m"], "properties": {"measurement": {"description": "any"}}}}`, ""},
		// a document in an array names fields, at any depth
		{`{"m": {"$in": [{"a": 1}]}}`, ""},
		{`{"$nor": [{"m.a": 1}], "m.b": {"$elemMatch": {"c": 1}}}`, `{"$nor": [{"meta.a": {"$numberInt":"1"}}],"meta.b": {"$elemMatch": {"c": {"$numberInt":"1"}}}}`},
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

// TestModify: collMod's changes of bucketing, MongoDB 7.0's transitions.
func TestModify(t *testing.T) {
	g := func(name string) Options {
		o, err := Parse(mustDoc(bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: name}}), "create.timeseries")
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	custom := Options{TimeField: "t", BucketMaxSpanSeconds: 7200, BucketRoundingSeconds: 7200}
	for _, tc := range []struct {
		from    Options
		mod     bson.D
		changed bool
		fails   bool
	}{
		{g("seconds"), bson.D{{Key: "granularity", Value: "hours"}}, true, false},
		{g("seconds"), bson.D{{Key: "granularity", Value: "seconds"}}, false, false},
		{g("minutes"), bson.D{{Key: "granularity", Value: "seconds"}}, false, true},
		{g("hours"), bson.D{{Key: "granularity", Value: "minutes"}}, false, true},
		{g("minutes"), bson.D{{Key: "granularity", Value: "hours"}, {Key: "bucketMaxSpanSeconds", Value: 2592000}}, true, false},
		{g("minutes"), bson.D{{Key: "granularity", Value: "hours"}, {Key: "bucketMaxSpanSeconds", Value: 5}}, false, true},
		{custom, bson.D{{Key: "granularity", Value: "minutes"}}, false, true}, // rounding 3600 < 7200
		{custom, bson.D{{Key: "granularity", Value: "hours"}}, true, false},
		{custom, bson.D{{Key: "granularity", Value: "seconds"}}, false, true}, // rounding 60 < 7200
		{custom, bson.D{{Key: "bucketMaxSpanSeconds", Value: 7200}, {Key: "bucketRoundingSeconds", Value: 7200}}, false, false},
		{g("seconds"), bson.D{{Key: "bucketMaxSpanSeconds", Value: 3600}, {Key: "bucketRoundingSeconds", Value: 3600}}, true, false},
	} {
		got, changed, err := Modify(tc.from, mustDoc(tc.mod))
		if (err != nil) != tc.fails || changed != tc.changed {
			t.Errorf("%+v with %v: %+v changed %v, %v", tc.from, tc.mod, got, changed, err)
		}
	}
}

// TestModifyArguments: collMod's timeseries document is read as MongoDB
// 7.0's IDL reads CollModTimeseries: a null field is absent, the spans are
// safeInt bounded to [1, 31536000] with IDLValueOutOfRange (51024), and
// types are refused with the IDL's messages
// (jstests/core/timeseries/timeseries_collmod.js).
func TestModifyArguments(t *testing.T) {
	o := Options{TimeField: "t", Granularity: "seconds", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}
	for _, tc := range []struct {
		mod  bson.D
		code mongoerr.Code
		msg  string
	}{
		{bson.D{{Key: "bucketMaxSpanSeconds", Value: 31536001}, {Key: "bucketRoundingSeconds", Value: 31536001}}, mongoerr.IDLValueOutOfRange,
			"BSON field 'collMod.timeseries.bucketMaxSpanSeconds' value must be <= 31536000, actual value '31536001'"},
		{bson.D{{Key: "bucketRoundingSeconds", Value: 0}}, mongoerr.IDLValueOutOfRange, "BSON field 'collMod.timeseries.bucketRoundingSeconds' value must be >= 1, actual value '0'"},
		{bson.D{{Key: "bucketMaxSpanSeconds", Value: "a"}}, mongoerr.TypeMismatch,
			"BSON field 'collMod.timeseries.bucketMaxSpanSeconds' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{bson.D{{Key: "granularity", Value: 5}}, mongoerr.TypeMismatch, "BSON field 'collMod.timeseries.granularity' is the wrong type 'int', expected type 'string'"},
		{bson.D{{Key: "granularity", Value: "weeks"}}, mongoerr.BadValue, "Enumeration value 'weeks' for field 'collMod.timeseries.granularity' is not a valid value."},
		{bson.D{{Key: "granularity", Value: "hours"}, {Key: "granularity", Value: "hours"}}, mongoerr.IDLDuplicateField, "BSON field 'collMod.timeseries.granularity' is a duplicate field"},
		// a null is absent: nothing is left to change
		{bson.D{{Key: "granularity", Value: nil}}, mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other"},
		{bson.D{{Key: "granularity", Value: "minutes"}, {Key: "bucketRoundingSeconds", Value: nil}}, 0, ""},
		// a double is truncated, as safeNumberInt does
		{bson.D{{Key: "bucketMaxSpanSeconds", Value: 7200.9}, {Key: "bucketRoundingSeconds", Value: 7200}}, 0, ""},
	} {
		_, _, err := Modify(o, mustDoc(tc.mod))
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%v: %v", tc.mod, err)
		case tc.code != 0 && (err == nil || mongoerr.As(err).Code != tc.code || mongoerr.As(err).Msg != tc.msg):
			t.Errorf("%v: %v, want code %d %q", tc.mod, err, tc.code, tc.msg)
		}
	}
}

// FuzzTranslate: any valid document, as a filter or an update, is
// translated or refused, never a panic.
func FuzzTranslate(f *testing.F) {
	for _, s := range [][]byte{mustDoc(bson.D{{Key: "m", Value: 1}}), mustDoc(bson.D{{Key: "$or", Value: 1}}),
		mustDoc(bson.D{{Key: "$set", Value: bson.D{{Key: "m.a", Value: 1}}}}), mustDoc(bson.D{{Key: "$rename", Value: bson.D{{Key: "m.a", Value: 2}}}})} {
		f.Add(s)
	}
	o := Options{TimeField: "t", MetaField: "m"}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if rawdoc.Validate(doc) != nil {
			return
		}
		_, _ = TranslateQuery(o, doc)
		_, _ = TranslateUpdate(o, doc, false)
	})
}
