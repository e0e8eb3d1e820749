package timeseries

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestParseUnpackSpec: $_internalUnpackBucket's argument is read field by
// field with MongoDB 7.0's codes (createFromBsonInternal), and
// $_unpackBucket's with its own (createFromBsonExternal,
// timeseries_explicit_unpack_bucket.js).
func TestParseUnpackSpec(t *testing.T) {
	span := bson.E{Key: "bucketMaxSpanSeconds", Value: int32(3600)}
	tf := bson.E{Key: "timeField", Value: "t"}
	for _, tc := range []struct {
		in   bson.D
		code mongoerr.Code
		want Unpacking
	}{
		{in: bson.D{tf, span}, want: Unpacking{Options: Options{TimeField: "t", BucketMaxSpanSeconds: 3600}}},
		{in: bson.D{tf, {Key: "metaField", Value: "m"}, span, {Key: "exclude", Value: bson.A{}}}, want: Unpacking{Options: Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600}}},
		{in: bson.D{{Key: "include", Value: bson.A{"a", "t", "a"}}, tf, span, {Key: "assumeNoMixedSchemaData", Value: true}},
			want: Unpacking{Options: Options{TimeField: "t", BucketMaxSpanSeconds: 3600, OneSchema: true}, Fields: []string{"a", "t"}, Include: true}},
		{in: bson.D{tf, span, {Key: "computedMetaProjFields", Value: bson.A{"c"}}, {Key: "fixedBuckets", Value: false}, {Key: "usesExtendedRange", Value: true}},
			want: Unpacking{Options: Options{TimeField: "t", BucketMaxSpanSeconds: 3600}, Computed: []string{"c"}}},
		{in: bson.D{tf}, code: mongoerr.UnpackNoSpan},
		{in: bson.D{span}, code: mongoerr.UnpackNoTimeField},
		{in: bson.D{{Key: "timeField", Value: int32(1)}, span}, code: mongoerr.UnpackTimeFieldNotString},
		{in: bson.D{tf, {Key: "metaField", Value: int32(1)}, span}, code: mongoerr.UnpackMetaFieldNotString},
		{in: bson.D{tf, {Key: "metaField", Value: "a.b"}, span}, code: mongoerr.UnpackMetaFieldDotted},
		{in: bson.D{tf, {Key: "bucketMaxSpanSeconds", Value: int64(3600)}}, code: mongoerr.UnpackSpanNotInt},
		{in: bson.D{tf, {Key: "bucketMaxSpanSeconds", Value: int32(0)}}, code: mongoerr.UnpackSpanNotPositive},
		{in: bson.D{tf, span, {Key: "include", Value: bson.A{}}, {Key: "exclude", Value: bson.A{}}}, code: mongoerr.UnpackIncludeAndExclude},
		{in: bson.D{tf, span, {Key: "include", Value: "a"}}, code: mongoerr.UnpackFieldsNotArray},
		{in: bson.D{tf, span, {Key: "exclude", Value: bson.A{1}}}, code: mongoerr.UnpackFieldNotString},
		{in: bson.D{tf, span, {Key: "exclude", Value: bson.A{"a.b"}}}, code: mongoerr.UnpackFieldDotted},
		{in: bson.D{tf, span, {Key: "computedMetaProjFields", Value: "c"}}, code: mongoerr.UnpackComputedNotArray},
		{in: bson.D{tf, span, {Key: "computedMetaProjFields", Value: bson.A{1}}}, code: mongoerr.UnpackComputedNotString},
		{in: bson.D{tf, span, {Key: "computedMetaProjFields", Value: bson.A{"a.b"}}}, code: mongoerr.UnpackComputedDotted},
		{in: bson.D{tf, span, {Key: "assumeNoMixedSchemaData", Value: int32(1)}}, code: mongoerr.UnpackAssumeCleanNotBool},
		{in: bson.D{tf, span, {Key: "includeMinTimeAsMetadata", Value: int32(1)}}, code: mongoerr.UnpackMinTimeNotBool},
		{in: bson.D{tf, span, {Key: "includeMaxTimeAsMetadata", Value: "x"}}, code: mongoerr.UnpackMaxTimeNotBool},
		{in: bson.D{tf, span, {Key: "includeMaxTimeAsMetadata", Value: true}}, code: mongoerr.NotImplemented},
		{in: bson.D{tf, span, {Key: "usesExtendedRange", Value: int32(1)}}, code: mongoerr.UnpackExtendedRangeNotBool},
		{in: bson.D{tf, span, {Key: "fixedBuckets", Value: int32(1)}}, code: mongoerr.UnpackFixedBucketsNotBool},
		{in: bson.D{tf, span, {Key: "eventFilter", Value: int32(1)}}, code: mongoerr.UnpackEventFilterNotObject},
		{in: bson.D{tf, span, {Key: "wholeBucketFilter", Value: int32(1)}}, code: mongoerr.UnpackWholeBucketFilterNotObject},
		{in: bson.D{tf, span, {Key: "eventFilter", Value: bson.D{}}}, code: mongoerr.NotImplemented},
		// fields are checked in order, the required ones last
		{in: bson.D{{Key: "foo", Value: 1}, {Key: "timeField", Value: int32(1)}}, code: mongoerr.UnpackUnknownParameter},
	} {
		got, err := ParseUnpackSpec(doc(t, tc.in))
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("%v: %v, want code %d", tc.in, err, tc.code)
			}
			continue
		}
		if err != nil || !sameUnpacking(got, tc.want) {
			t.Errorf("%v: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   bson.D
		code mongoerr.Code
		want Unpacking
	}{
		{in: bson.D{tf}, want: Unpacking{Options: Options{TimeField: "t", BucketMaxSpanSeconds: 3600}}},
		{in: bson.D{tf, {Key: "metaField", Value: "m"}, {Key: "assumeNoMixedSchemaData", Value: true}}, want: Unpacking{Options: Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600, OneSchema: true}}},
		{in: bson.D{{Key: "timeField", Value: int32(60)}}, code: mongoerr.UnpackBucketTimeFieldNotString},
		{in: bson.D{tf, {Key: "metaField", Value: int32(250)}}, code: mongoerr.UnpackBucketMetaFieldNotString},
		{in: bson.D{tf, {Key: "metaField", Value: "a.b.c"}}, code: mongoerr.UnpackBucketMetaFieldDotted},
		{in: bson.D{{Key: "metaField", Value: "m"}}, code: mongoerr.UnpackBucketNoTimeField},
		{in: bson.D{tf, {Key: "assumeNoMixedSchemaData", Value: "x"}}, code: mongoerr.UnpackBucketAssumeCleanNotBool},
		{in: bson.D{tf, span}, code: mongoerr.UnpackBucketUnknownParameter},
		{in: bson.D{{Key: "include", Value: bson.A{"t"}}, tf}, code: mongoerr.UnpackBucketUnknownParameter},
	} {
		got, err := ParseExternalUnpackSpec(doc(t, tc.in))
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("external %v: %v, want code %d", tc.in, err, tc.code)
			}
			continue
		}
		if err != nil || !sameUnpacking(got, tc.want) {
			t.Errorf("external %v: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestUnpackBucketChecks: a bucket is checked as MongoDB's
// BucketUnpacker::reset checks it, in its order.
func TestUnpackBucketChecks(t *testing.T) {
	at := bson.NewDateTimeFromTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	id := bson.ObjectID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	control := bson.E{Key: "control", Value: bson.D{{Key: "version", Value: int32(1)}}}
	oneTime := bson.E{Key: "data", Value: bson.D{{Key: "t", Value: bson.D{{Key: "0", Value: at}}}}}
	u := Unpacking{Options: Options{TimeField: "t", BucketMaxSpanSeconds: 3600}}
	for _, tc := range []struct {
		bucket bson.D
		code   mongoerr.Code
		msg    string
	}{
		{bson.D{}, mongoerr.UnpackEmptyBucket, "An empty bucket cannot be unpacked"},
		{bson.D{{Key: "_id", Value: id}, control}, mongoerr.ExpectedObjectParameter, "invalid parameter: expected an object ()"},
		{bson.D{{Key: "_id", Value: id}, control, {Key: "data", Value: 1}}, mongoerr.ExpectedObjectParameter, "invalid parameter: expected an object (data)"},
		{bson.D{{Key: "_id", Value: id}, control, {Key: "data", Value: bson.D{}}}, mongoerr.UnpackNoMeasurements, "A bucket with _id _id: ObjectId('0102030405060708090a0b0c') contains an empty data region"},
		{bson.D{{Key: "_id", Value: id}, control, {Key: "data", Value: bson.D{{Key: "t", Value: bson.D{}}}}}, mongoerr.UnpackNoMeasurements, ""},
		{bson.D{control, {Key: "data", Value: bson.D{{Key: "x", Value: bson.D{{Key: "0", Value: 1}}}}}}, mongoerr.UnpackNoTimeColumn, ""},
		{bson.D{control, {Key: "meta", Value: 1}, oneTime}, mongoerr.UnpackUnexpectedMeta, ""},
		{bson.D{oneTime}, mongoerr.UnpackNoControl, "The $_internalUnpackBucket stage requires 'control' object to be present"},
		{bson.D{{Key: "control", Value: bson.D{}}, oneTime}, mongoerr.UnpackNoVersion, ""},
		{bson.D{{Key: "control", Value: bson.D{{Key: "version", Value: int32(3)}}}, oneTime}, mongoerr.UnpackBadVersion, "Invalid bucket version"},
		{bson.D{{Key: "control", Value: bson.D{{Key: "version", Value: 2.0}}}, oneTime}, mongoerr.NotImplemented, ""},
		{bson.D{{Key: "control", Value: bson.D{{Key: "version", Value: 1.0}}}, oneTime}, 0, ""},
	} {
		err := u.Unpack(doc(t, tc.bucket), func(bson.Raw) error { return nil })
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%v: %v", tc.bucket, err)
		case tc.code != 0 && (err == nil || mongoerr.As(err).Code != tc.code):
			t.Errorf("%v: %v, want code %d", tc.bucket, err, tc.code)
		case tc.msg != "" && mongoerr.As(err).Msg != tc.msg:
			t.Errorf("%v: %q, want %q", tc.bucket, mongoerr.As(err).Msg, tc.msg)
		}
	}
}

func sameUnpacking(a, b Unpacking) bool {
	eq := func(x, y []string) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return a.Options == b.Options && a.Include == b.Include && eq(a.Fields, b.Fields) && eq(a.Computed, b.Computed)
}

// TestUnpackFields: include and exclude keep or drop the time, meta and
// data fields, computed fields come from the bucket after the others (the
// metaField among them takes the place of the meta), and a bucket's meta
// must agree with the metaField (BucketUnpacker::reset).
func TestUnpackFields(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	bucket := doc(t, bson.D{
		{Key: "_id", Value: bson.NewObjectID()},
		{Key: "control", Value: bson.D{{Key: "version", Value: int32(1)}}},
		{Key: "meta", Value: "m0"},
		{Key: "data", Value: bson.D{
			{Key: "t", Value: bson.D{{Key: "0", Value: bson.NewDateTimeFromTime(at)}, {Key: "1", Value: bson.NewDateTimeFromTime(at.Add(time.Second))}}},
			{Key: "a", Value: bson.D{{Key: "0", Value: int32(1)}, {Key: "1", Value: int32(2)}}},
			{Key: "b", Value: bson.D{{Key: "1", Value: "x"}}},
		}},
		{Key: "c", Value: "computed"},
	})
	o := Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600}
	for _, tc := range []struct {
		u    Unpacking
		want []string
	}{
		{Unpacking{Options: o}, []string{`{"t": {"$date":{"$numberLong":"1704067200000"}},"m": "m0","a": {"$numberInt":"1"}}`, `{"t": {"$date":{"$numberLong":"1704067201000"}},"m": "m0","a": {"$numberInt":"2"},"b": "x"}`}},
		{Unpacking{Options: o, Include: true, Fields: []string{"b", "m"}}, []string{`{"m": "m0"}`, `{"m": "m0","b": "x"}`}},
		{Unpacking{Options: o, Fields: []string{"t", "a"}}, []string{`{"m": "m0"}`, `{"m": "m0","b": "x"}`}},
		{Unpacking{Options: o, Fields: []string{"a", "b"}, Computed: []string{"c", "none"}}, []string{`{"t": {"$date":{"$numberLong":"1704067200000"}},"m": "m0","c": "computed"}`, `{"t": {"$date":{"$numberLong":"1704067201000"}},"m": "m0","c": "computed"}`}},
		{Unpacking{Options: o, Include: true, Fields: []string{"m"}, Computed: []string{"m"}}, []string{`{}`, `{}`}},
		// a computed field takes the place of the time, or of a column
		{Unpacking{Options: o, Fields: []string{"m"}, Computed: []string{"t", "a", "c"}}, []string{`{"c": "computed"}`, `{"b": "x","c": "computed"}`}},
		// an excluded field is not computed
		{Unpacking{Options: o, Fields: []string{"t", "m", "a", "b", "c"}, Computed: []string{"c"}}, []string{`{}`, `{}`}},
	} {
		var got []string
		if err := tc.u.Unpack(bucket, func(m bson.Raw) error { got = append(got, m.String()); return nil }); err != nil {
			t.Fatalf("%+v: %v", tc.u, err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%+v: %v, want %v", tc.u, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%+v: measurement %d is %s, want %s", tc.u, i, got[i], tc.want[i])
			}
		}
	}
	noMeta := Unpacking{Options: Options{TimeField: "t", BucketMaxSpanSeconds: 3600}}
	if err := noMeta.Unpack(bucket, func(bson.Raw) error { return nil }); err == nil || mongoerr.As(err).Code != mongoerr.UnpackUnexpectedMeta {
		t.Errorf("a bucket with a meta unpacked without a metaField: %v, want code %d", err, mongoerr.UnpackUnexpectedMeta)
	}
	undefined := doc(t, bson.D{{Key: "meta", Value: bson.Undefined{}}, {Key: "data", Value: bson.D{{Key: "t", Value: bson.D{{Key: "0", Value: bson.NewDateTimeFromTime(at)}}}}}})
	if err := (Unpacking{Options: o}).Unpack(undefined, func(bson.Raw) error { return nil }); err == nil || mongoerr.As(err).Code != mongoerr.UnpackMetaUndefined {
		t.Errorf("an undefined meta: %v, want code %d", err, mongoerr.UnpackMetaUndefined)
	}
}
