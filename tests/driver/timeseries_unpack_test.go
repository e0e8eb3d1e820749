package driver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTimeseriesExplicitUnpack: a buckets collection is read through
// $_unpackBucket, the alias of $_internalUnpackBucket MongoDB keeps for
// other products, and through $_internalUnpackBucket with its include,
// exclude and computedMetaProjFields, each refusing a bad argument with
// MongoDB's code (jstests/core/timeseries/query/timeseries_explicit_unpack_bucket.js).
func TestTimeseriesExplicitUnpack(t *testing.T) {
	if testAuth() {
		t.Skip("Folio's built-in roles grant no privilege on system.buckets yet")
	}
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsunpack")
	for _, name := range []string{"withMeta", "withoutMeta"} {
		ts := options.TimeSeries().SetTimeField("start")
		if name == "withMeta" {
			ts.SetMetaField("tags")
		}
		if err := db.CreateCollection(ctx, name, options.CreateCollection().SetTimeSeriesOptions(ts)); err != nil {
			t.Fatal(err)
		}
	}
	seed := time.Date(2020, 11, 30, 12, 10, 5, 0, time.UTC)
	const n = 50
	for i := range n {
		d := bson.D{{Key: "start", Value: seed.Add(time.Duration(i) * 24 * time.Hour)}, {Key: "end", Value: seed.Add(time.Duration(i+1) * 24 * time.Hour)},
			{Key: "tags", Value: "cpu"}, {Key: "value", Value: int32(i + n)}}
		for _, c := range []string{"withMeta", "withoutMeta"} {
			if _, err := db.Collection(c).InsertOne(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	withMeta, withoutMeta := db.Collection("system.buckets.withMeta"), db.Collection("system.buckets.withoutMeta")
	run := func(c *mongo.Collection, stage bson.D, rest ...bson.D) ([]bson.M, error) {
		cur, err := c.Aggregate(ctx, append(mongo.Pipeline{stage}, rest...))
		if err != nil {
			return nil, err
		}
		var out []bson.M
		err = cur.All(ctx, &out)
		return out, err
	}
	tail := []bson.D{{{Key: "$project", Value: bson.D{{Key: "_id", Value: 0}}}}, {{Key: "$sort", Value: bson.D{{Key: "value", Value: 1}}}}}
	unpack := func(spec bson.D) bson.D { return bson.D{{Key: "$_unpackBucket", Value: spec}} }
	for _, tc := range []struct {
		c     *mongo.Collection
		stage bson.D
		want  int
	}{
		{withMeta, unpack(bson.D{{Key: "timeField", Value: "start"}, {Key: "metaField", Value: "tags"}}), n},
		{withoutMeta, unpack(bson.D{{Key: "timeField", Value: "start"}}), n},
		{withoutMeta, unpack(bson.D{{Key: "timeField", Value: "start"}, {Key: "metaField", Value: "foo"}}), n},
	} {
		got, err := run(tc.c, tc.stage, tail...)
		if err != nil || len(got) != tc.want {
			t.Fatalf("%v: %d measurements, %v", tc.stage, len(got), err)
		}
		for i, m := range got {
			want := bson.M{"start": bson.NewDateTimeFromTime(seed.Add(time.Duration(i) * 24 * time.Hour)), "end": bson.NewDateTimeFromTime(seed.Add(time.Duration(i+1) * 24 * time.Hour)),
				"tags": "cpu", "value": int32(i + n)}
			if len(m) != len(want) || m["start"] != want["start"] || m["end"] != want["end"] || m["tags"] != want["tags"] || m["value"] != want["value"] {
				t.Fatalf("%v: measurement %d is %v, want %v", tc.stage, i, m, want)
			}
		}
	}
	got, err := run(withMeta, unpack(bson.D{{Key: "timeField", Value: "start"}, {Key: "metaField", Value: "tags"}}),
		bson.D{{Key: "$match", Value: bson.D{{Key: "start", Value: bson.D{{Key: "$lt", Value: seed.Add(25 * 24 * time.Hour)}}}}}})
	if err != nil || len(got) != 25 {
		t.Errorf("$_unpackBucket then $match: %d measurements, %v", len(got), err)
	}
	internal := func(extra ...bson.E) bson.D {
		spec := bson.D{{Key: "timeField", Value: "start"}, {Key: "metaField", Value: "tags"}, {Key: "bucketMaxSpanSeconds", Value: int32(3600)}}
		return bson.D{{Key: "$_internalUnpackBucket", Value: append(spec, extra...)}}
	}
	first := bson.D{{Key: "$sort", Value: bson.D{{Key: "value", Value: 1}}}}
	limit := bson.D{{Key: "$limit", Value: 1}}
	for _, tc := range []struct {
		stage bson.D
		want  bson.M
	}{
		{internal(bson.E{Key: "include", Value: bson.A{"value"}}), bson.M{"value": int32(n)}},
		{internal(bson.E{Key: "include", Value: bson.A{"tags", "start"}}), bson.M{"tags": "cpu", "start": bson.NewDateTimeFromTime(seed)}},
		{internal(bson.E{Key: "exclude", Value: bson.A{"_id", "tags", "start", "end"}}), bson.M{"value": int32(n)}},
	} {
		got, err := run(withMeta, tc.stage, first, limit)
		if err != nil || len(got) != 1 || len(got[0]) != len(tc.want) {
			t.Fatalf("%v: %v, %v; want %v", tc.stage, got, err, tc.want)
		}
		for k, v := range tc.want {
			if got[0][k] != v {
				t.Errorf("%v: %v, want %v", tc.stage, got[0], tc.want)
			}
		}
	}
	// A computed field set on the bucket before the unpacking is copied
	// onto each of its measurements.
	got, err = run(withMeta, bson.D{{Key: "$addFields", Value: bson.D{{Key: "site", Value: "$meta"}}}},
		internal(bson.E{Key: "exclude", Value: bson.A{"_id", "start", "end"}}, bson.E{Key: "computedMetaProjFields", Value: bson.A{"site"}}), first, limit)
	if err != nil || len(got) != 1 || len(got[0]) != 3 || got[0]["site"] != "cpu" || got[0]["tags"] != "cpu" || got[0]["value"] != int32(n) {
		t.Errorf("a computed field: %v, %v", got, err)
	}
	for _, tc := range []struct {
		c     *mongo.Collection
		stage bson.D
		code  int
	}{
		{withMeta, unpack(bson.D{{Key: "include", Value: bson.A{"start"}}, {Key: "timeField", Value: "start"}, {Key: "metaField", Value: "tags"}}), 5612404},
		{withMeta, unpack(bson.D{{Key: "timeField", Value: "start"}, {Key: "metaField", Value: "tags"}, {Key: "bucketMaxSpanSeconds", Value: 3000}}), 5612404},
		{withoutMeta, unpack(bson.D{{Key: "timeField", Value: "start"}, {Key: "foo", Value: 1024}}), 5612404},
		{withMeta, bson.D{{Key: "$_unpackBucket", Value: "foo"}}, 5612400},
		{withMeta, unpack(bson.D{{Key: "timeField", Value: 60}}), 5612401},
		{withMeta, unpack(bson.D{{Key: "timeField", Value: "time"}, {Key: "metaField", Value: 250}}), 5612402},
		{withMeta, unpack(bson.D{{Key: "timeField", Value: "time"}, {Key: "metaField", Value: "a.b.c"}}), 5612403},
		{withMeta, unpack(bson.D{{Key: "metaField", Value: "tags"}}), 5612405},
		// the buckets have a meta the stage is not told of
		{withMeta, unpack(bson.D{{Key: "timeField", Value: "start"}}), 5369601},
		{withMeta, bson.D{{Key: "$_internalUnpackBucket", Value: "foo"}}, 5346500},
		{withMeta, bson.D{{Key: "$_internalUnpackBucket", Value: bson.D{{Key: "timeField", Value: "start"}}}}, 5510602},
		{withMeta, internal(bson.E{Key: "include", Value: bson.A{}}, bson.E{Key: "exclude", Value: bson.A{}}), 5408000},
		{withMeta, internal(bson.E{Key: "include", Value: bson.A{"a.b"}}), 5346503},
		{withMeta, internal(bson.E{Key: "foo", Value: 1}), 5346506},
		{withMeta, internal(bson.E{Key: "eventFilter", Value: bson.D{}}), 238},
	} {
		_, err := run(tc.c, tc.stage)
		requireCode(t, err, tc.code, "")
	}
}

// TestTimeseriesMalformedBuckets: a bucket written directly into the
// buckets collection is checked as MongoDB's unpacker checks it when the
// time series collection is read, instead of unpacking to nothing: one
// without measurements fails with 5346509, one without the time column
// with 5346700, one of another control.version with 5857900, and a
// compressed one (version 2), which Folio does not read, with
// NotImplemented.
func TestTimeseriesMalformedBuckets(t *testing.T) {
	if testAuth() {
		t.Skip("Folio's built-in roles grant no privilege on system.buckets yet")
	}
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsmalformed")
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	control := func(version any) bson.D {
		return bson.D{{Key: "version", Value: version}, {Key: "min", Value: bson.D{{Key: "t", Value: at}}}, {Key: "max", Value: bson.D{{Key: "t", Value: at}}}}
	}
	for i, tc := range []struct {
		bucket bson.D
		code   int
	}{
		{bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "control", Value: control(1)}, {Key: "data", Value: bson.D{}}}, 5346509},
		{bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "control", Value: control(1)}, {Key: "data", Value: bson.D{{Key: "x", Value: bson.D{{Key: "0", Value: 1}}}}}}, 5346700},
		{bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "control", Value: control(3)}, {Key: "data", Value: bson.D{{Key: "t", Value: bson.D{{Key: "0", Value: at}}}}}}, 5857900},
		{bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "control", Value: control(2)}, {Key: "data", Value: bson.D{{Key: "t", Value: bson.Binary{Subtype: 7, Data: []byte{0}}}}}}, 238},
	} {
		name := fmt.Sprintf("c%d", i)
		if err := db.CreateCollection(ctx, name, options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t"))); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection("system.buckets."+name).InsertOne(ctx, tc.bucket, options.InsertOne().SetBypassDocumentValidation(true)); err != nil {
			t.Fatal(err)
		}
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err == nil {
			var out []bson.M
			err = cur.All(ctx, &out)
		}
		requireCode(t, err, tc.code, "")
	}
}
