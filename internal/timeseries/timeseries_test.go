package timeseries

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// decimal is s as a Decimal128.
func decimal(t testing.TB, s string) bson.Decimal128 {
	t.Helper()
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func doc(t testing.TB, d bson.D) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParse: create's timeseries options, with MongoDB's defaults and
// refusals, and listCollections' form read back.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   bson.D
		want Options
		code mongoerr.Code
	}{
		{bson.D{{Key: "timeField", Value: "t"}}, Options{TimeField: "t", Granularity: "seconds", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}, 0},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "m"}, {Key: "granularity", Value: "hours"}}, Options{TimeField: "t", MetaField: "m", Granularity: "hours", BucketMaxSpanSeconds: 2592000, BucketRoundingSeconds: 86400}, 0},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: int32(600)}, {Key: "bucketRoundingSeconds", Value: int64(600)}}, Options{TimeField: "t", BucketMaxSpanSeconds: 600, BucketRoundingSeconds: 600}, 0},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "minutes"}, {Key: "bucketMaxSpanSeconds", Value: int32(86400)}}, Options{TimeField: "t", Granularity: "minutes", BucketMaxSpanSeconds: 86400, BucketRoundingSeconds: 3600}, 0},
		{bson.D{{Key: "metaField", Value: "m"}}, Options{}, mongoerr.IDLFailedToParse},
		{bson.D{{Key: "timeField", Value: 1}}, Options{}, mongoerr.TypeMismatch},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "x", Value: 1}}, Options{}, mongoerr.IDLUnknownField},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "days"}}, Options{}, mongoerr.BadValue},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "t"}}, Options{}, mongoerr.InvalidOptions},
		{bson.D{{Key: "timeField", Value: "_id"}}, Options{}, mongoerr.InvalidOptions},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "a.b"}}, Options{}, mongoerr.InvalidOptions},
		{bson.D{{Key: "timeField", Value: "t\x00"}}, Options{}, mongoerr.BadValue},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: "m\x00"}}, Options{}, mongoerr.BadValue},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketRoundingSeconds", Value: 60}}, Options{}, mongoerr.InvalidOptions},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 0}, {Key: "bucketRoundingSeconds", Value: 0}}, Options{}, mongoerr.IDLValueOutOfRange},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 31536001}, {Key: "bucketRoundingSeconds", Value: 31536001}}, Options{}, mongoerr.IDLValueOutOfRange},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: math.NaN()}, {Key: "bucketRoundingSeconds", Value: 1}}, Options{}, mongoerr.IDLValueOutOfRange},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: math.Inf(1)}, {Key: "bucketRoundingSeconds", Value: 1}}, Options{}, mongoerr.IDLValueOutOfRange},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: int64(1) << 32}, {Key: "bucketRoundingSeconds", Value: 1}}, Options{}, mongoerr.IDLValueOutOfRange},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: "1"}, {Key: "bucketRoundingSeconds", Value: 1}}, Options{}, mongoerr.TypeMismatch},
		// safeInt: a double truncated, a decimal rounded half to even
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 1.9}, {Key: "bucketRoundingSeconds", Value: decimal(t, "1.5")}}, Options{TimeField: "t", BucketMaxSpanSeconds: 1, BucketRoundingSeconds: 2}, mongoerr.InvalidOptions},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: 2.5}, {Key: "bucketRoundingSeconds", Value: decimal(t, "2.5")}}, Options{TimeField: "t", BucketMaxSpanSeconds: 2, BucketRoundingSeconds: 2}, 0},
		// null is absent; a field given twice is refused
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "metaField", Value: nil}, {Key: "granularity", Value: nil}, {Key: "bucketMaxSpanSeconds", Value: nil}}, Options{TimeField: "t", Granularity: "seconds", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}, 0},
		{bson.D{{Key: "timeField", Value: nil}}, Options{}, mongoerr.IDLFailedToParse},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: nil}, {Key: "bucketRoundingSeconds", Value: 100}}, Options{}, mongoerr.InvalidOptions},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "timeField", Value: "u"}}, Options{}, mongoerr.IDLDuplicateField},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "minutes"}, {Key: "bucketMaxSpanSeconds", Value: 60}}, Options{}, mongoerr.InvalidOptions},
		// a granularity with its own bucketing parameters (MongoDB 7.0)
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "minutes"}, {Key: "bucketMaxSpanSeconds", Value: 86400}, {Key: "bucketRoundingSeconds", Value: 3600}}, Options{TimeField: "t", Granularity: "minutes", BucketMaxSpanSeconds: 86400, BucketRoundingSeconds: 3600}, 0},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "hours"}, {Key: "bucketRoundingSeconds", Value: 86400}}, Options{TimeField: "t", Granularity: "hours", BucketMaxSpanSeconds: 2592000, BucketRoundingSeconds: 86400}, 0},
		{bson.D{{Key: "timeField", Value: "t"}, {Key: "granularity", Value: "minutes"}, {Key: "bucketMaxSpanSeconds", Value: 86400}, {Key: "bucketRoundingSeconds", Value: 60}}, Options{}, mongoerr.InvalidOptions},
	} {
		got, err := Parse(doc(t, tc.in), "create.timeseries")
		if tc.code != 0 {
			if err == nil || mongoerr.As(err).Code != tc.code {
				t.Errorf("%v: %v, want code %d", tc.in, err, tc.code)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
		// listCollections' form parses back to the same options.
		back, err := Parse(doc(t, got.Document()), "create.timeseries")
		if err != nil || back != got {
			t.Errorf("%v: Document %v parses to %+v %v", tc.in, got.Document(), back, err)
		}
		spec, err := ParseUnpackSpec(doc(t, got.UnpackSpec()))
		if err != nil || spec.TimeField != got.TimeField || spec.MetaField != got.MetaField || spec.BucketMaxSpanSeconds != got.BucketMaxSpanSeconds {
			t.Errorf("%v: unpack spec %+v %v", tc.in, spec, err)
		}
	}
}

// TestBucketRoundTrip: measurements added to a bucket unpack as they
// went in (time and meta first), across a rewrite of the bucket, and its
// control fields bound them.
func TestBucketRoundTrip(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	meta := doc(t, bson.D{{Key: "m", Value: bson.D{{Key: "host", Value: "a"}}}}).Lookup("m")
	b := NewBucket(o, meta, t0)
	var in []bson.Raw
	for i := range 5 {
		d := bson.D{{Key: "_id", Value: i}, {Key: "t", Value: t0.Add(time.Duration(i) * time.Minute)}, {Key: "m", Value: bson.D{{Key: "host", Value: "a"}}}}
		if i%2 == 0 {
			d = append(d, bson.E{Key: "v", Value: float64(i)})
		}
		m := doc(t, d)
		tm, mv, err := Measurement(o, m)
		if err != nil || b.Misfit(o, m, mv, tm) != Fits {
			t.Fatalf("measurement %d: misfit %v, %v", i, b.Misfit(o, m, mv, tm), err)
		}
		if err := b.Add(o, m); err != nil {
			t.Fatal(err)
		}
		in = append(in, doc(t, append(bson.D{d[1], d[2], d[0]}, d[3:]...)))
	}
	full := NewBucket(o, meta, t0)
	for range MaxMeasurements {
		if err := full.Add(o, doc(t, bson.D{{Key: "t", Value: t0}, {Key: "m", Value: bson.D{{Key: "host", Value: "a"}}}})); err != nil {
			t.Fatal(err)
		}
	}
	if got := full.Misfit(o, nil, meta, t0); got != Full {
		t.Errorf("a bucket of %d measurements: misfit %v, want Full", MaxMeasurements, got)
	}
	if b.Misfit(o, nil, meta, t0.Add(-time.Minute)) != TimeBackward || b.Misfit(o, nil, meta, t0.Add(time.Hour)) != TimeForward || b.Misfit(o, nil, doc(t, bson.D{{Key: "m", Value: 1}}).Lookup("m"), t0) != OtherMeta {
		t.Error("Misfit accepts a time outside the span or another meta value")
	}
	stored := b.Document(o)
	if got := stored.Lookup("control", "min", "t").Time(); !got.Equal(t0.Truncate(time.Minute)) {
		t.Errorf("control.min.t %v", got)
	}
	if got := stored.Lookup("control", "max", "v").Double(); got != 4 {
		t.Errorf("control.max.v %v", got)
	}
	reloaded, err := LoadBucket(o, stored)
	if err != nil || reloaded.Len() != 5 || reloaded.ID != b.ID {
		t.Fatalf("LoadBucket: %d measurements, %v", reloaded.Len(), err)
	}
	var out []string
	if err := Unpack(o, reloaded.Document(o), func(m bson.Raw) error { out = append(out, m.String()); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("unpacked %d of %d", len(out), len(in))
	}
	for i := range in {
		if out[i] != in[i].String() {
			t.Errorf("measurement %d: %s, want %s", i, out[i], in[i])
		}
	}
	if _, _, err := Measurement(o, doc(t, bson.D{{Key: "t", Value: "now"}})); mongoerr.As(err).Code != mongoerr.BadValue {
		t.Errorf("a measurement without a date: %v", err)
	}
}

// TestBucketFilter: every bucket holding a measurement that matches a
// filter passes the filter's bucket form.
func TestBucketFilter(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	var buckets []bson.Raw
	for h := range 6 {
		for host := range 2 {
			meta := doc(t, bson.D{{Key: "m", Value: bson.D{{Key: "host", Value: host}}}}).Lookup("m")
			start := t0.Add(time.Duration(h)*time.Hour + 17*time.Minute)
			b := NewBucket(o, meta, start)
			for i := range 50 {
				if err := b.Add(o, doc(t, bson.D{{Key: "t", Value: start.Add(time.Duration(i) * time.Minute)}, {Key: "v", Value: i}})); err != nil {
					t.Fatal(err)
				}
			}
			buckets = append(buckets, b.Document(o))
		}
	}
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	for _, f := range []bson.D{
		{{Key: "m.host", Value: 1}},
		{{Key: "m", Value: bson.D{{Key: "host", Value: 0}}}},
		{{Key: "t", Value: at(200)}},
		{{Key: "t", Value: bson.D{{Key: "$gte", Value: at(100)}, {Key: "$lt", Value: at(130)}}}},
		{{Key: "t", Value: bson.D{{Key: "$gt", Value: at(300)}}}, {Key: "v", Value: bson.D{{Key: "$lt", Value: 3}}}},
		{{Key: "$and", Value: bson.A{bson.D{{Key: "m.host", Value: 0}}, bson.D{{Key: "t", Value: bson.D{{Key: "$lte", Value: at(30)}}}}}}},
		{{Key: "$or", Value: bson.A{bson.D{{Key: "m.host", Value: 0}, {Key: "t", Value: bson.D{{Key: "$lt", Value: at(60)}}}}, bson.D{{Key: "t", Value: at(200)}}}}},
		{{Key: "$or", Value: bson.A{bson.D{{Key: "m", Value: bson.D{{Key: "host", Value: 1}}}}, bson.D{{Key: "m.host", Value: 2}}}}, {Key: "v", Value: 3}},
	} {
		measurements, onBuckets, bf := compileBucketFilter(t, o, doc(t, f))
		if bf == nil {
			t.Fatalf("%v: no bucket filter", f)
		}
		passed, holding := 0, 0
		for _, b := range buckets {
			holds := false
			_ = Unpack(o, b, func(m bson.Raw) error {
				holds = holds || measurements.Match(m)
				return nil
			})
			if holds {
				holding++
			}
			if onBuckets.Match(b) {
				passed++
			} else if holds {
				t.Errorf("%v: a bucket holding a match fails %s", f, bf)
			}
		}
		if holding == 0 || passed == len(buckets) {
			t.Errorf("%v: %d buckets hold matches, %d of %d pass the bucket filter", f, holding, passed, len(buckets))
		}
	}
	if BucketFilter(o, doc(t, bson.D{{Key: "v", Value: "x"}})) != nil {
		t.Error("a string on a measurement field says something of the buckets")
	}
	// An $or bounds the buckets only when each of its branches does.
	if f := BucketFilter(o, doc(t, bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "m.host", Value: 0}}, bson.D{{Key: "v", Value: "x"}}}}})); f != nil {
		t.Errorf("an $or with a branch saying nothing of the buckets: %s", f)
	}
}

// FuzzUnpack: bucket documents of any shape unpack without panicking.
func FuzzUnpack(f *testing.F) {
	o := Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}
	b := NewBucket(o, bson.RawValue{}, time.Unix(0, 0))
	_ = b.Add(o, doc(f, bson.D{{Key: "t", Value: time.Unix(1, 0)}, {Key: "v", Value: 1}}))
	f.Add([]byte(b.Document(o)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bson.Raw(data).Validate() != nil {
			return
		}
		_ = Unpack(o, data, func(bson.Raw) error { return nil })
		_, _ = LoadBucket(o, data)
		_, _ = Parse(data, "create.timeseries")
		_ = BucketFilter(o, data)
	})
}

// TestIndexKeys: user keys on the meta and time fields map to bucket keys
// and back; keys on measurement fields map as MongoDB maps them, and keys
// with no buckets' form are BadValue.
func TestIndexKeys(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m"}
	for _, tc := range []struct{ user, bucket bson.D }{
		{bson.D{{Key: "m", Value: int32(1)}}, bson.D{{Key: "meta", Value: int32(1)}}},
		{bson.D{{Key: "m.host", Value: int32(1)}, {Key: "t", Value: int32(-1)}}, bson.D{{Key: "meta.host", Value: int32(1)}, {Key: "control.max.t", Value: int32(-1)}, {Key: "control.min.t", Value: int32(-1)}}},
		{bson.D{{Key: "t", Value: int32(1)}}, bson.D{{Key: "control.min.t", Value: int32(1)}, {Key: "control.max.t", Value: int32(1)}}},
	} {
		got, err := BucketIndexKey(o, doc(t, tc.user))
		if err != nil || got.String() != doc(t, tc.bucket).String() {
			t.Errorf("%v: %s %v, want %v", tc.user, got, err, tc.bucket)
			continue
		}
		back, ok := UserIndexKey(o, got)
		if !ok || back.String() != doc(t, tc.user).String() {
			t.Errorf("%v: back to %s %v", tc.user, back, ok)
		}
	}
	// MongoDB's createBucketsIndexSpecFromTimeseriesIndexSpec: a
	// measurement field maps as the time field does (an index creation
	// refuses it, not the mapping), 2dsphere to the data column.
	for _, tc := range []struct{ user, bucket bson.D }{
		{bson.D{{Key: "v", Value: int32(1)}}, bson.D{{Key: "control.min.v", Value: int32(1)}, {Key: "control.max.v", Value: int32(1)}}},
		{bson.D{{Key: "m", Value: int32(1)}, {Key: "v.w", Value: -1.0}}, bson.D{{Key: "meta", Value: int32(1)}, {Key: "control.max.v.w", Value: -1.0}, {Key: "control.min.v.w", Value: -1.0}}},
		{bson.D{{Key: "loc", Value: "2dsphere"}}, bson.D{{Key: "data.loc", Value: "2dsphere_bucket"}}},
	} {
		got, err := BucketIndexKey(o, doc(t, tc.user))
		if err != nil || got.String() != doc(t, tc.bucket).String() {
			t.Errorf("%v: %s %v, want %v", tc.user, got, err, tc.bucket)
		}
	}
	for _, tc := range []struct {
		user bson.D
		msg  string
	}{
		{bson.D{}, "Empty object is not a valid index spec"},
		{bson.D{{Key: "$natural", Value: 1}}, "Invalid index spec (perhaps it's a valid hint, that was incorrectly passed to createBucketsSpecFromTimeseriesSpec): { $natural: 1 }"},
		{bson.D{{Key: "t", Value: "hashed"}}, `Invalid index spec for time-series collection: { t: "hashed" }. Indexes on the time field must be ascending or descending (numbers only): t: "hashed"`},
		{bson.D{{Key: "m", Value: 1}, {Key: "v", Value: "text"}}, `Invalid index spec for time-series collection: { m: 1, v: "text" }. Indexes on measurement fields must be ascending or descending (numbers only), or '2dsphere': v: "text"`},
	} {
		_, err := BucketIndexKey(o, doc(t, tc.user))
		if e := mongoerr.As(err); err == nil || e.Code != mongoerr.BadValue || e.Msg != tc.msg {
			t.Errorf("%v: %v, want BadValue %q", tc.user, err, tc.msg)
		}
	}
}

// TestUserIndexKeys: a buckets' index key maps back to the measurements as
// MongoDB's createTimeseriesIndexSpecFromBucketsIndexSpec maps it (a
// control.min/control.max pair of one direction is its field), and a key
// it cannot map has no user form (listIndexes leaves the index out).
func TestUserIndexKeys(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m"}
	for _, tc := range []struct{ bucket, user bson.D }{
		{bson.D{{Key: "control.min.y", Value: int32(1)}, {Key: "control.max.y", Value: int32(1)}}, bson.D{{Key: "y", Value: int32(1)}}},
		{bson.D{{Key: "control.max.y", Value: -1.0}, {Key: "control.min.y", Value: -1.0}}, bson.D{{Key: "y", Value: -1.0}}},
		{bson.D{{Key: "meta.a", Value: int32(1)}, {Key: "control.min.y", Value: int32(1)}, {Key: "control.max.y", Value: int32(1)}, {Key: "control.max.t", Value: int32(-1)}, {Key: "control.min.t", Value: int32(-1)}},
			bson.D{{Key: "m.a", Value: int32(1)}, {Key: "y", Value: int32(1)}, {Key: "t", Value: int32(-1)}}},
		{bson.D{{Key: "control.min.t", Value: int32(1)}}, bson.D{{Key: "t", Value: int32(1)}}},
		{bson.D{{Key: "control.min.y", Value: int32(1)}, {Key: "control.max.y", Value: int32(-1)}}, nil},
		{bson.D{{Key: "control.max.y", Value: int32(1)}, {Key: "control.min.y", Value: int32(1)}}, nil},
		{bson.D{{Key: "control.min.y", Value: int32(1)}, {Key: "control.max.z", Value: int32(1)}}, nil},
		{bson.D{{Key: "control.min.y", Value: int32(1)}}, nil},
		{bson.D{{Key: "control.min.t", Value: "hashed"}}, nil},
		{bson.D{{Key: "_id", Value: int32(1)}}, nil},
		{bson.D{{Key: "data.y", Value: int32(1)}, {Key: "control.min.y", Value: int32(1)}}, nil},
		{bson.D{{Key: "data.loc", Value: "2dsphere_bucket"}}, bson.D{{Key: "loc", Value: "2dsphere"}}},
		{bson.D{{Key: "meta", Value: int32(1)}, {Key: "data.a.b", Value: "2dsphere_bucket"}}, bson.D{{Key: "m", Value: int32(1)}, {Key: "a.b", Value: "2dsphere"}}},
		{bson.D{{Key: "data.loc", Value: "2dsphere"}}, nil},
	} {
		got, ok := UserIndexKey(o, doc(t, tc.bucket))
		switch {
		case tc.user == nil && ok:
			t.Errorf("%v: mapped to %s, want no user key", tc.bucket, got)
		case tc.user != nil && (!ok || got.String() != doc(t, tc.user).String()):
			t.Errorf("%v: %s %v, want %v", tc.bucket, got, ok, tc.user)
		}
	}
	if _, ok := UserIndexKey(Options{TimeField: "t"}, doc(t, bson.D{{Key: "meta", Value: int32(1)}})); ok {
		t.Error("a meta key of a collection without a metaField mapped")
	}
}

// TestLoadBucketBounds: a bucket read back keeps its control bounds,
// whatever the lengths of the values Unpack hands it one after the other
// in one buffer (they were aliased, and a third measurement of another
// length corrupted the bucket's document).
func TestLoadBucketBounds(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	meta := doc(t, bson.D{{Key: "m", Value: 42}}).Lookup("m")
	b := NewBucket(o, meta, t0)
	for i, v := range []string{"1", "10", "5", "aa", "b"} {
		if err := b.Add(o, doc(t, bson.D{{Key: "_id", Value: i}, {Key: "t", Value: t0.Add(time.Duration(i) * time.Second)}, {Key: "m", Value: 42}, {Key: "v", Value: v}})); err != nil {
			t.Fatal(err)
		}
	}
	stored := b.Document(o)
	reloaded, err := LoadBucket(o, stored)
	if err != nil {
		t.Fatal(err)
	}
	again := reloaded.Document(o)
	if err := again.Validate(); err != nil {
		t.Fatalf("reloaded bucket: %v", err)
	}
	for _, bound := range []string{"min", "max"} {
		for _, f := range []string{"_id", "t", "v"} {
			if got, want := again.Lookup("control", bound, f), stored.Lookup("control", bound, f); !got.Equal(want) {
				t.Errorf("reloaded control.%s.%s %v, want %v", bound, f, got, want)
			}
		}
	}
}

// TestBucketBoundsCollation: control.min and control.max order strings
// under the collection's collation (timeseries_collation.js,
// nondefault_collation.js): "10" is above "5" under numericOrdering, and
// of strings equal under it the first one stays.
func TestBucketBoundsCollation(t *testing.T) {
	numeric, err := collation.Parse(doc(t, bson.D{{Key: "locale", Value: "en"}, {Key: "strength", Value: 1}, {Key: "numericOrdering", Value: true}}))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		coll     *collation.Collator
		min, max string
	}{
		{nil, "10", "s"},
		{numeric, "5", "s"},
	} {
		o := Options{TimeField: "t", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60, Collator: tc.coll}
		b := NewBucket(o, bson.RawValue{}, t0)
		for i, v := range []string{"10", "5", "s", "S"} {
			if err := b.Add(o, doc(t, bson.D{{Key: "t", Value: t0.Add(time.Duration(i) * time.Second)}, {Key: "v", Value: v}})); err != nil {
				t.Fatal(err)
			}
		}
		d := b.Document(o)
		if got := d.Lookup("control", "min", "v").StringValue(); got != tc.min {
			t.Errorf("%v: control.min.v %q, want %q", tc.coll, got, tc.min)
		}
		if got := d.Lookup("control", "max", "v").StringValue(); got != tc.max {
			t.Errorf("%v: control.max.v %q, want %q", tc.coll, got, tc.max)
		}
	}
}

// TestUnpackSpecShape: the view's unpacking stage is MongoDB 7.0's
// (timeseries::generateViewPipeline), without the exclude: [] of 5.0, as
// change streams show it in a time series collection's create event
// (jstests/change_streams/ddl_view_events.js); an exclude: [] stored
// before still parses.
func TestUnpackSpecShape(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{TimeField: "t", BucketMaxSpanSeconds: 3600}, `{"timeField": "t","bucketMaxSpanSeconds": {"$numberInt":"3600"}}`},
		{Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 86400}, `{"timeField": "t","metaField": "m","bucketMaxSpanSeconds": {"$numberInt":"86400"}}`},
	} {
		if got := doc(t, tc.o.UnpackSpec()).String(); got != tc.want {
			t.Errorf("UnpackSpec %+v: %s, want %s", tc.o, got, tc.want)
		}
	}
	old := doc(t, bson.D{{Key: "timeField", Value: "t"}, {Key: "bucketMaxSpanSeconds", Value: int32(3600)}, {Key: "exclude", Value: bson.A{}}})
	if o, err := ParseUnpackSpec(old); err != nil || o.TimeField != "t" || o.BucketMaxSpanSeconds != 3600 {
		t.Errorf("ParseUnpackSpec(%s): %+v %v", old, o, err)
	}
}

// TestNormalizeMeta: a measurement's meta value as MongoDB's bucket catalog
// normalizes it (timeseries_metadata.js, timeseries_insert_normalize_metadata.js):
// object fields in the byte order of their names at every depth, objects in
// arrays too, arrays in their own order; a normalized value is not copied.
func TestNormalizeMeta(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m"}
	t0 := time.Date(2020, 11, 26, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ in, want any }{
		{bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}},
		{bson.D{{Key: "nested", Value: bson.D{{Key: "b", Value: 1}, {Key: "a", Value: 1}}}}, bson.D{{Key: "nested", Value: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}}},
		{bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "c", Value: 0}, {Key: "b", Value: 1}}, bson.A{bson.D{{Key: "f", Value: 0}, {Key: "e", Value: 1}}}}}},
			bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "b", Value: 1}, {Key: "c", Value: 0}}, bson.A{bson.D{{Key: "e", Value: 1}, {Key: "f", Value: 0}}}}}}},
		{bson.D{{Key: "a", Value: bson.A{2, 1, 3}}}, bson.D{{Key: "a", Value: bson.A{2, 1, 3}}}},
		{bson.A{bson.D{{Key: "y", Value: 1}, {Key: "x", Value: 2}}, 1}, bson.A{bson.D{{Key: "x", Value: 2}, {Key: "y", Value: 1}}, 1}},
		// byte order: upper case before lower case, a prefix first
		{bson.D{{Key: "ab", Value: 1}, {Key: "a", Value: 2}, {Key: "B", Value: 3}}, bson.D{{Key: "B", Value: 3}, {Key: "a", Value: 2}, {Key: "ab", Value: 1}}},
		{"host", "host"},
	} {
		_, got, err := Measurement(o, doc(t, bson.D{{Key: "t", Value: t0}, {Key: "m", Value: tc.in}}))
		want := doc(t, bson.D{{Key: "m", Value: tc.want}}).Lookup("m")
		if err != nil || got.Type != want.Type || string(got.Value) != string(want.Value) {
			t.Errorf("meta %v: %v, want %v (%v)", tc.in, got, want, err)
		}
	}
	sorted := doc(t, bson.D{{Key: "m", Value: bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "b", Value: 1}}}}, {Key: "c", Value: 2}}}}).Lookup("m")
	if got := normalizeMeta(sorted); &got.Value[0] != &sorted.Value[0] {
		t.Error("a normalized meta value was copied")
	}
}

// TestBucketMinMaxAndSchema: control.min and control.max as MongoDB's
// bucket catalog keeps them, objects field by field and arrays element by
// element (timeseries_min_max.js), and the schema changes that open
// another bucket (timeseries_min_max.js, timeseries_insert_mixed_schema_docs.js).
func TestBucketMinMaxAndSchema(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60}
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	ext := func(s string) bson.Raw {
		var d bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		docs     []string
		min, max string // the last bucket's control bounds, without t
		buckets  int
	}{
		{[]string{`{"a": {}}`, `{"a": {"x": {}}}`, `{"a": {"x": {"y": 1}}}`, `{"a": {"x": {}}}`}, `{"a": {"x": {"y": 1}}}`, `{"a": {"x": {"y": 1}}}`, 1},
		{[]string{`{"m": 1}`}, `{}`, `{}`, 1},
		{[]string{`{"a": {"x": 1, "y": 2}, "b": [1, 2]}`, `{"a": {"x": 2, "y": 1}, "b": [2, 1]}`}, `{"a": {"x": 1, "y": 1}, "b": [1, 1]}`, `{"a": {"x": 2, "y": 2}, "b": [2, 2]}`, 1},
		{[]string{`{"a": {"x": {"z": [3, 4]}}, "b": [{"x": 3, "y": 4}]}`, `{"a": {"x": {"z": [4, 3]}}, "b": [{"x": 4, "y": 3}, 3, 1]}`},
			`{"a": {"x": {"z": [3, 3]}}, "b": [{"x": 3, "y": 3}, 3, 1]}`, `{"a": {"x": {"z": [4, 4]}}, "b": [{"x": 4, "y": 4}, 3, 1]}`, 1},
		// a field's type class changes: scalar, object, array, and back
		{[]string{`{"a": 1}`, `{"a": {"b": 1}}`, `{"a": []}`, `{"a": [5]}`}, `{"a": [5]}`, `{"a": [5]}`, 3},
		{[]string{`{"a": "foo"}`, `{"a": "bar"}`, `{"a": 1}`}, `{"a": 1}`, `{"a": 1}`, 2},
		{[]string{`{"a": {"b": [1]}}`, `{"a": {"b": [{"c": 1}]}}`}, `{"a": {"b": [{"c": 1}]}}`, `{"a": {"b": [{"c": 1}]}}`, 2},
		// numbers are one class; each bound keeps its value's type
		{[]string{`{"a": 1.5}`, `{"a": {"$numberLong": "2"}}`, `{"a": 1}`, `{"a": {"$numberDecimal": "2.5"}}`, `{"a": 0.5}`},
			`{"a": 0.5}`, `{"a": {"$numberDecimal": "2.5"}}`, 1},
		// sparse fields keep the order they came in
		{[]string{`{"a": 1, "c": 1}`, `{"b": 2}`, `{"c": 3, "d": 3}`}, `{"a": 1, "c": 1, "b": 2, "d": 3}`, `{"a": 1, "c": 3, "b": 2, "d": 3}`, 1},
	} {
		var b *Bucket
		buckets := 0
		for _, s := range tc.docs {
			m := ext(s)
			d := append(bson.D{{Key: "t", Value: t0}}, func() bson.D {
				var x bson.D
				_ = bson.Unmarshal(m, &x)
				return x
			}()...)
			raw := doc(t, d)
			tm, meta, err := Measurement(o, raw)
			if err != nil {
				t.Fatal(err)
			}
			if b == nil || b.Misfit(o, raw, meta, tm) != Fits {
				b, buckets = NewBucket(o, meta, tm), buckets+1
			}
			if err := b.Add(o, raw); err != nil {
				t.Fatal(err)
			}
		}
		bounds := func(which string) string {
			elems, _ := b.Document(o).Lookup("control", which).Document().Elements()
			d := bson.D{}
			for _, el := range elems {
				if el.Key() != "t" {
					d = append(d, bson.E{Key: el.Key(), Value: el.Value()})
				}
			}
			return doc(t, d).String()
		}
		if got, want := bounds("min"), ext(tc.min).String(); got != want {
			t.Errorf("%v: min %s, want %s", tc.docs, got, want)
		}
		if got, want := bounds("max"), ext(tc.max).String(); got != want {
			t.Errorf("%v: max %s, want %s", tc.docs, got, want)
		}
		if buckets != tc.buckets {
			t.Errorf("%v: %d buckets, want %d", tc.docs, buckets, tc.buckets)
		}
	}
}

// TestBucketFilterOnMeasurements checks the bucket filter of conditions
// on measurement fields, top-level and dotted, against its oracle, the
// measurements themselves: random measurements (numbers of every type,
// NaN, dates, strings, null, arrays, objects, missing, nested), each
// field keeping a random shape for a while, fill buckets as inserts fill
// them, and no
// bucket holding a measurement that a random filter matches may fail that
// filter's bucket filter. Some buckets must fail it, so that the check
// cannot pass by passing everything.
func TestBucketFilterOnMeasurements(t *testing.T) {
	o := Options{TimeField: "t", MetaField: "m", BucketMaxSpanSeconds: 3600, BucketRoundingSeconds: 60, OneSchema: true}
	t0 := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 7))
	number := func() any {
		n := r.IntN(40) - 20
		switch r.IntN(9) {
		case 0:
			return int32(n)
		case 1:
			return int64(n)
		case 2:
			return decimal(t, strconv.Itoa(n)+".5")
		case 3:
			return math.NaN()
		case 4:
			return math.Inf(1 - 2*r.IntN(2))
		case 5:
			return decimal(t, "NaN")
		default:
			return float64(n) + 0.25
		}
	}
	date := func() any { return t0.Add(time.Duration(r.IntN(40)-20) * time.Minute) }
	// A shape makes values of one schema: a bucket fills with a field's
	// values while the field keeps its shape, which changes now and then.
	var shape func(depth int) func() any
	shape = func(depth int) func() any {
		switch k := r.IntN(10); {
		case k < 4:
			return number
		case k == 4:
			return date
		case k == 5:
			return func() any { return []string{"a", "m", "z"}[r.IntN(3)] }
		case k == 6:
			return func() any { return nil }
		case k == 7 && depth < 2:
			sub := shape(depth + 1)
			return func() any { return bson.D{{Key: "a", Value: sub()}} }
		case k <= 9 && depth < 2:
			elem := shape(depth + 1)
			return func() any {
				a := bson.A{}
				for range r.IntN(4) {
					a = append(a, elem())
				}
				return a
			}
		default:
			return func() any { return r.IntN(2) == 0 }
		}
	}
	shapes := map[string]func() any{}
	var buckets []bson.Raw
	open := map[string]*Bucket{}
	for i := range 3000 {
		m := r.IntN(3)
		d := bson.D{{Key: "t", Value: t0.Add(time.Duration(i) * 5 * time.Second)}, {Key: "m", Value: m}}
		for _, f := range []string{"v", "w"} {
			key := fmt.Sprint(m, f)
			if shapes[key] == nil || r.IntN(40) == 0 {
				shapes[key] = shape(0)
			}
			if r.IntN(5) > 0 {
				d = append(d, bson.E{Key: f, Value: shapes[key]()})
			}
		}
		raw := doc(t, d)
		tm, meta, err := Measurement(o, raw)
		if err != nil {
			t.Fatal(err)
		}
		key := meta.String()
		if b := open[key]; b == nil || b.Misfit(o, raw, meta, tm) != Fits {
			if b != nil {
				buckets = append(buckets, b.Document(o))
			}
			open[key] = NewBucket(o, meta, tm)
		}
		if err := open[key].Add(o, raw); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range open {
		buckets = append(buckets, b.Document(o))
	}
	cond := func() bson.D {
		f := []string{"v", "w", "v.a", "v.0", "v.a.a", "v.0.a", "w.1", "v.a.0"}[r.IntN(8)]
		var operand func() any = number
		if r.IntN(4) == 0 {
			operand = date
		}
		if r.IntN(4) == 0 {
			return bson.D{{Key: f, Value: operand()}}
		}
		var ops bson.D
		for range 1 + r.IntN(2) {
			ops = append(ops, bson.E{Key: []string{"$eq", "$gt", "$gte", "$lt", "$lte"}[r.IntN(5)], Value: operand()})
		}
		return bson.D{{Key: f, Value: ops}}
	}
	pruned := 0
	for range 300 {
		f := cond()
		switch r.IntN(4) {
		case 0:
			f = bson.D{{Key: "$and", Value: bson.A{f, cond()}}}
		case 1:
			f = bson.D{{Key: "$or", Value: bson.A{f, cond()}}}
		}
		filter := doc(t, f)
		measurements, onBuckets, bf := compileBucketFilter(t, o, filter)
		if bf == nil {
			continue
		}
		for _, b := range buckets {
			if onBuckets.Match(b) {
				continue
			}
			pruned++
			_ = Unpack(o, b, func(m bson.Raw) error {
				if measurements.Match(m) {
					t.Fatalf("seed %d: %s matches %s, whose bucket fails %s", seed, filter, m, bf)
				}
				return nil
			})
		}
	}
	if pruned == 0 {
		t.Fatalf("seed %d: no bucket failed a bucket filter", seed)
	}
	// Buckets that may hold several schemas are not bounded by their
	// measurements.
	o.OneSchema = false
	if f := BucketFilter(o, doc(t, bson.D{{Key: "v", Value: bson.D{{Key: "$gt", Value: 1}}}})); f != nil {
		t.Errorf("mixed-schema buckets: bucket filter %s", f)
	}
}

// TestMixedSchema: a bucket whose control.min and control.max of a field,
// at any depth, are of different type classes holds mixed schemas.
func TestMixedSchema(t *testing.T) {
	for _, tc := range []struct {
		control string
		mixed   bool
	}{
		{`{"min": {"a": 1, "b": "x"}, "max": {"a": 2.5, "b": "y"}}`, false},
		{`{"min": {"a": 1}, "max": {"a": "a"}}`, true},
		{`{"min": {"a": {"b": 1}}, "max": {"a": {"b": {"$numberDecimal": "2"}}}}`, false},
		{`{"min": {"a": {"b": 1}}, "max": {"a": {"b": null}}}`, true},
		{`{"min": {"a": [1, "x"]}, "max": {"a": [3, "z"]}}`, false},
		{`{"min": {"a": [1, "x"]}, "max": {"a": [3, 4]}}`, true},
		{`{"min": {"a": [1]}, "max": {"a": {"0": 1}}}`, true},
		{`{"min": {"a": 1}, "max": {}}`, false},
		{`{"min": 1, "max": {"a": 1}}`, false},
	} {
		var control bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.control), false, &control); err != nil {
			t.Fatal(err)
		}
		if got := MixedSchema(doc(t, bson.D{{Key: "control", Value: control}})); got != tc.mixed {
			t.Errorf("%s: mixed %v, want %v", tc.control, got, tc.mixed)
		}
	}
}

// compileBucketFilter compiles filter, on measurements of o, and its
// bucket filter bf, which is nil (and onBuckets with it) when filter says
// nothing of the buckets.
func compileBucketFilter(t *testing.T, o Options, filter bson.Raw) (measurements, onBuckets *query.Filter, bf bson.Raw) {
	t.Helper()
	measurements, err := query.Compile(filter)
	if err != nil {
		t.Fatal(err)
	}
	if bf = BucketFilter(o, filter); bf == nil {
		return measurements, nil, nil
	}
	if onBuckets, err = query.Compile(bf); err != nil {
		t.Fatalf("%s: %v", bf, err)
	}
	return measurements, onBuckets, bf
}
