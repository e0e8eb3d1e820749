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
