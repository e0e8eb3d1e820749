package driver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestTimeseriesGeoNear: $geoNear as the first stage on a time series
// collection runs as MongoDB 7.0's does (DocumentSourceGeoNear::
// splitForTimeseries, DocumentSourceInternalUnpackBucket::doOptimizeAt):
// on a measurement without any index, giving the distances and order a
// plain collection with a geo index gives (the oracle); on the metaField,
// through the buckets' index of it; key required, query refused.
func TestTimeseriesGeoNear(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsgeonear")
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))
	if err := db.CreateCollection(ctx, "ts", opts); err != nil {
		t.Fatal(err)
	}
	ts, sphere, flat := db.Collection("ts"), db.Collection("sphere"), db.Collection("flat")
	for _, ix := range []struct {
		c    *mongo.Collection
		kind string
	}{{sphere, "2dsphere"}, {flat, "2d"}} {
		if _, err := ix.c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: ix.kind}}}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	var all, geoJSON, pairs []any
	for i := range 120 {
		x, y := float64(i%11)-5, float64(i%7)*1.5-4
		d := bson.D{{Key: "_id", Value: i}, {Key: "t", Value: t0.Add(time.Duration(i*97%3600) * time.Second)}, {Key: "m", Value: bson.D{{Key: "s", Value: i % 4}, {Key: "loc", Value: bson.A{i % 4, 0}}}}}
		switch i % 3 {
		case 0:
			d = append(d, bson.E{Key: "loc", Value: bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{x, y}}}})
			geoJSON = append(geoJSON, d)
		case 1:
			d = append(d, bson.E{Key: "loc", Value: bson.A{x, y}})
			pairs = append(pairs, d)
		}
		all = append(all, d)
	}
	for _, w := range []struct {
		c    *mongo.Collection
		docs []any
	}{{ts, all}, {sphere, append(slices.Clone(geoJSON), pairs...)}, {flat, pairs}} {
		if _, err := w.c.InsertMany(ctx, w.docs); err != nil {
			t.Fatal(err)
		}
	}
	near := func(extra ...bson.E) bson.D {
		return append(bson.D{{Key: "key", Value: "loc"}, {Key: "distanceField", Value: "d"}}, extra...)
	}
	point := bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{0.5, 0.25}}}
	for _, c := range []struct {
		oracle *mongo.Collection
		spec   bson.D
	}{
		{sphere, near(bson.E{Key: "near", Value: point})},
		{sphere, near(bson.E{Key: "near", Value: point}, bson.E{Key: "minDistance", Value: 100000}, bson.E{Key: "maxDistance", Value: 500000})},
		{sphere, near(bson.E{Key: "near", Value: bson.A{0.5, 0.25}}, bson.E{Key: "spherical", Value: true}, bson.E{Key: "maxDistance", Value: 0.06}, bson.E{Key: "distanceMultiplier", Value: 2})},
		{flat, near(bson.E{Key: "near", Value: bson.A{0.5, 0.25}}, bson.E{Key: "minDistance", Value: 1}, bson.E{Key: "maxDistance", Value: 4})},
	} {
		// Equal distances may come in any order: the ids of each distance
		// are compared as sets.
		byDistance := func(coll *mongo.Collection) map[float64][]int32 {
			out := map[float64][]int32{}
			last := -1.0
			for _, doc := range aggregateAll(t, coll, mongo.Pipeline{{{Key: "$geoNear", Value: c.spec}}}) {
				d := doc.Lookup("d").Double()
				if d < last {
					t.Errorf("%v on %s: %v after %v", c.spec, coll.Name(), d, last)
				}
				last = d
				out[d] = append(out[d], doc.Lookup("_id").Int32())
			}
			for _, ids := range out {
				slices.Sort(ids)
			}
			return out
		}
		got, want := byDistance(ts), byDistance(c.oracle)
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("%v: %d distances, the plain collection's %d", c.spec, len(got), len(want))
			continue
		}
		for d, ids := range want {
			if !slices.Equal(got[d], ids) {
				t.Errorf("%v: at %v %v, the plain collection's %v", c.spec, d, got[d], ids)
			}
		}
	}

	// On the metaField: the buckets' index of it serves the search.
	if _, err := ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "m.loc", Value: "2d"}}}); err != nil {
		t.Fatal(err)
	}
	docs := aggregateAll(t, ts, mongo.Pipeline{
		{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: bson.A{1.1, 0}}, {Key: "key", Value: "m.loc"}, {Key: "distanceField", Value: "dist"}}}},
		{{Key: "$limit", Value: 30}},
	})
	if len(docs) != 30 {
		t.Fatalf("$geoNear on the metaField: %d measurements", len(docs))
	}
	for _, doc := range docs {
		if s := doc.Lookup("m", "s").Int32(); s != 1 {
			t.Fatalf("$geoNear on m.loc from [1.1, 0]: the 30 first measurements are those of s 1, got %v", doc)
		}
	}

	for _, c := range []struct {
		spec bson.D
		code int
	}{
		{bson.D{{Key: "near", Value: bson.A{0, 0}}, {Key: "distanceField", Value: "d"}}, 5892921},
		{near(bson.E{Key: "near", Value: bson.A{0, 0}}, bson.E{Key: "query", Value: bson.D{{Key: "a", Value: 1}}}), 1938439},
		{near(bson.E{Key: "near", Value: bson.A{0, 0}}, bson.E{Key: "includeLocs", Value: "l"}), 5860208},
	} {
		_, err := aggregateResult(ts, mongo.Pipeline{{{Key: "$geoNear", Value: c.spec}}})
		requireCode(t, err, c.code, "")
	}
}

// TestTimeseriesGeoIndex: a 2dsphere index on a measurement is, as in
// MongoDB 7.0, an index of its buckets' column (data.<f>: 2dsphere_bucket)
// keyed by the column's points, built over the buckets already there and
// kept by inserts, which it refuses a value that is no point (183934, or
// 183493 for another geometry); listIndexes shows the user's key, and the
// index hinted finds what a plain collection's $geoWithin finds.
func TestTimeseriesGeoIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsgeoindex")
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))
	if err := db.CreateCollection(ctx, "ts", opts); err != nil {
		t.Fatal(err)
	}
	ts, plain := db.Collection("ts"), db.Collection("plain")
	t0 := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	point := func(i int) bson.D {
		d := bson.D{{Key: "_id", Value: i}, {Key: "t", Value: t0.Add(time.Duration(i) * time.Minute)}, {Key: "m", Value: i % 3}}
		if i%5 != 4 {
			d = append(d, bson.E{Key: "loc", Value: bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{float64(i%13) - 6, float64(i%9) - 4}}}})
		}
		return d
	}
	insert := func(from, to int) {
		var docs []any
		for i := from; i < to; i++ {
			docs = append(docs, point(i))
		}
		for _, c := range []*mongo.Collection{ts, plain} {
			if _, err := c.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
		}
	}
	insert(0, 150)
	if _, err := ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "loc", Value: "2dsphere"}}}); err != nil {
		t.Fatal(err)
	}
	insert(150, 300)

	var keys []string
	cur, err := ts.Indexes().List(ctx)
	for _, spec := range cursorDocs(t, cur, err, "listIndexes", nil) {
		keys = append(keys, spec.Lookup("key").String())
	}
	if !slices.Contains(keys, `{"loc": "2dsphere"}`) {
		t.Errorf("listIndexes keys %v", keys)
	}
	if !testAuth() {
		var bkeys []string
		cur, err := db.Collection("system.buckets.ts").Indexes().List(ctx)
		for _, spec := range cursorDocs(t, cur, err, "listIndexes", nil) {
			bkeys = append(bkeys, spec.Lookup("key").String())
		}
		if !slices.Contains(bkeys, `{"data.loc": "2dsphere_bucket"}`) {
			t.Errorf("buckets' listIndexes keys %v", bkeys)
		}
	}

	for _, f := range []bson.D{
		{{Key: "loc", Value: bson.D{{Key: "$geoWithin", Value: bson.D{{Key: "$centerSphere", Value: bson.A{bson.A{0, 0}, 0.05}}}}}}},
		{{Key: "loc", Value: bson.D{{Key: "$geoIntersects", Value: bson.D{{Key: "$geometry", Value: bson.D{{Key: "type", Value: "Polygon"},
			{Key: "coordinates", Value: bson.A{bson.A{bson.A{-3, -3}, bson.A{2, -3}, bson.A{2, 1}, bson.A{-3, 1}, bson.A{-3, -3}}}}}}}}}}},
	} {
		got := ids(findAll(t, ts, f, options.Find().SetHint(bson.D{{Key: "loc", Value: "2dsphere"}})))
		want := ids(findAll(t, plain, f))
		slices.Sort(got)
		slices.Sort(want)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%v hinting the index: %v, the plain collection's %v", f, got, want)
		}
	}

	for _, c := range []struct {
		loc  any
		code int
	}{
		{5, 183934},
		{bson.D{{Key: "type", Value: "Polygon"}, {Key: "coordinates", Value: bson.A{bson.A{0, 0}, bson.A{1, 0}, bson.A{1, 1}, bson.A{0, 0}}}}, 183934},
		{bson.D{{Key: "type", Value: "LineString"}, {Key: "coordinates", Value: bson.A{bson.A{0, 0}, bson.A{1, 0}}}}, 183493},
	} {
		_, err := ts.InsertOne(ctx, bson.D{{Key: "t", Value: t0}, {Key: "loc", Value: c.loc}})
		requireCode(t, err, c.code, "")
	}
}

// TestTimeseriesTextSearch: a $text condition on a time series collection
// runs before the unpacking, on the buckets, which have no text index (a
// time series collection refuses one): IndexNotFound, as MongoDB 7.0's
// splitMatchOnMetaAndRename gives it, not the 17313 of a $text after a
// view's stages (jstests/core/timeseries/timeseries_text_geonear_disallowed.js).
func TestTimeseriesTextSearch(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tstext")
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))
	if err := db.CreateCollection(ctx, "ts", opts); err != nil {
		t.Fatal(err)
	}
	ts := db.Collection("ts")
	if _, err := ts.InsertOne(ctx, bson.D{{Key: "t", Value: time.Now()}, {Key: "m", Value: bson.D{{Key: "descr", Value: "1"}}}}); err != nil {
		t.Fatal(err)
	}
	_, err := ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "m.descr", Value: "text"}}})
	requireCode(t, err, 72, "InvalidOptions")
	text := bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "1"}}}}
	_, err = ts.Find(ctx, text)
	requireCode(t, err, 27, "IndexNotFound")
	_, err = aggregateResult(ts, mongo.Pipeline{{{Key: "$match", Value: append(text, bson.E{Key: "x", Value: 1})}}})
	requireCode(t, err, 27, "IndexNotFound")
	// Elsewhere than first, $text is refused as in any pipeline.
	_, err = aggregateResult(ts, mongo.Pipeline{{{Key: "$limit", Value: 1}}, {{Key: "$match", Value: text}}})
	requireCode(t, err, 17313, "")
}

// TestTimeseriesGeoNearInSubPipeline: a $geoNear first in a $lookup's or
// $unionWith's sub-pipeline on a time series collection runs as a
// top-level one does (timeseries_geonear_lookup.js): MongoDB resolves the
// collection's view into the sub-pipeline, the unpacking then the
// $geoNear, and optimizes the pair as it does at the top level. On a view
// of the collection with stages of its own, or after a $lookup's equality
// match, the $geoNear is no longer first (40602).
func TestTimeseriesGeoNearInSubPipeline(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("tsgeonearsub")
	opts := options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t").SetMetaField("m"))
	if err := db.CreateCollection(ctx, "ts", opts); err != nil {
		t.Fatal(err)
	}
	ts, local := db.Collection("ts"), db.Collection("local")
	if _, err := ts.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "m.loc", Value: "2dsphere"}}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	var docs []any
	for i := range 12 {
		point := func(x, y int) bson.D {
			return bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{x, y}}}
		}
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "t", Value: t0.Add(time.Duration(i) * time.Second)},
			{Key: "m", Value: bson.D{{Key: "loc", Value: point(i%4, 0)}}}, {Key: "loc", Value: point(0, 11-i)}})
	}
	if _, err := ts.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := local.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateView(ctx, "tsview", "ts", mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 0}}}}}}}); err != nil {
		t.Fatal(err)
	}
	origin := bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{0, 0}}}
	ids := func(docs []bson.Raw, path ...string) []int32 {
		var out []int32
		for _, d := range docs {
			out = append(out, d.Lookup(append(path, "_id")...).Int32())
		}
		return out
	}
	for _, key := range []string{"m.loc", "loc"} {
		geoNear := bson.D{{Key: "$geoNear", Value: bson.D{{Key: "near", Value: origin}, {Key: "key", Value: key}, {Key: "distanceField", Value: "d"}}}}
		want := ids(aggregateAll(t, ts, mongo.Pipeline{geoNear}))
		if len(want) != 12 {
			t.Fatalf("$geoNear on %s: %v", key, want)
		}
		got := aggregateAll(t, local, mongo.Pipeline{{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "ts"}, {Key: "pipeline", Value: bson.A{geoNear}}, {Key: "as", Value: "o"}}}}})
		var lookedUp []int32
		if len(got) == 1 {
			arr, _ := got[0].Lookup("o").Array().Values()
			for _, v := range arr {
				lookedUp = append(lookedUp, v.Document().Lookup("_id").Int32())
			}
		}
		if !slices.Equal(lookedUp, want) {
			t.Errorf("$lookup with $geoNear on %s: %v, the top level's %v", key, lookedUp, want)
		}
		union := aggregateAll(t, local, mongo.Pipeline{{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "ts"}, {Key: "pipeline", Value: bson.A{geoNear}}}}}})
		if len(union) != 13 || !slices.Equal(ids(union[1:]), want) {
			t.Errorf("$unionWith with $geoNear on %s: %v, the top level's %v", key, ids(union), want)
		}
		for _, p := range []mongo.Pipeline{
			{{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "tsview"}, {Key: "pipeline", Value: bson.A{geoNear}}, {Key: "as", Value: "o"}}}}},
			{{{Key: "$unionWith", Value: bson.D{{Key: "coll", Value: "tsview"}, {Key: "pipeline", Value: bson.A{geoNear}}}}}},
			{{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "ts"}, {Key: "localField", Value: "_id"}, {Key: "foreignField", Value: "_id"}, {Key: "pipeline", Value: bson.A{geoNear}}, {Key: "as", Value: "o"}}}}},
		} {
			_, err := aggregateResult(local, p)
			requireCode(t, err, 40602, "")
		}
	}
}
