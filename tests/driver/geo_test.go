package driver_test

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/geo/geotest"
)

func geoPoint(lng, lat float64) bson.D {
	return doc("type", "Point", "coordinates", bson.A{lng, lat})
}

func geoRing(ring [][2]float64) bson.D {
	coords := bson.A{}
	for _, p := range ring {
		coords = append(coords, bson.A{p[0], p[1]})
	}
	return doc("type", "Polygon", "coordinates", bson.A{coords})
}

// geoPoints are a grid every 15° plus the poles and points beside the
// antimeridian, as {_id, loc, lng, lat}.
func geoPoints() (docs []any, pts map[int][2]float64) {
	pts = map[int][2]float64{}
	add := func(lng, lat float64) {
		id := len(pts)
		pts[id] = [2]float64{lng, lat}
		docs = append(docs, doc("_id", id, "loc", geoPoint(lng, lat)))
	}
	for lat := -75.0; lat <= 75; lat += 15 {
		for lng := -180.0; lng < 180; lng += 15 {
			add(lng+1, lat+1)
		}
	}
	add(0, 90)
	add(0, -90)
	add(179.5, 0.5)
	add(-179.5, -0.5)
	return docs, pts
}

// idsWhere are the ids of the points in pts that in holds, sorted: the
// answer the oracle gives.
func idsWhere(pts map[int][2]float64, in func(p [2]float64) bool) []int {
	out := []int{}
	for id, p := range pts {
		if in(p) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func idSet(docs []bson.Raw) []int {
	out := make([]int, len(docs))
	for i, d := range docs {
		n, _ := d.Lookup("_id").AsInt64OK()
		out[i] = int(n)
	}
	slices.Sort(out)
	return out
}

// Geo queries answer as the oracles computed without S2 say, with a
// 2dsphere index and without one (where MongoDB needs none): $geoWithin
// polygons (across the antimeridian and around a pole included) and
// $centerSphere, $geoIntersects, and $nearSphere in distance order.
func TestGeoQueries(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("geo")
	indexed, plain := db.Collection("indexed"), db.Collection("plain")
	if _, err := indexed.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	docs, pts := geoPoints()
	for _, c := range []*mongo.Collection{indexed, plain} {
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(in func(p [2]float64) bool) []int { return idsWhere(pts, in) }
	rings := map[string][][2]float64{
		"europe":       {{0, 40}, {20, 40}, {20, 55}, {0, 55}, {0, 40}},
		"antimeridian": {{170, -20}, {-170, -20}, {-170, 20}, {170, 20}, {170, -20}},
		"north pole":   {{0, 70}, {90, 70}, {180, 70}, {-90, 70}, {0, 70}},
		"south":        {{-80, -50}, {-20, -65}, {-40, -10}, {-80, -50}},
	}
	for name, ring := range rings {
		want := expect(func(p [2]float64) bool { return geotest.Inside(ring, p[0], p[1]) })
		for _, op := range []string{"$geoWithin", "$geoIntersects"} {
			f := doc("loc", doc(op, doc("$geometry", geoRing(ring))))
			for _, c := range []*mongo.Collection{indexed, plain} {
				if got := idSet(findAll(t, c, f)); !slices.Equal(got, want) {
					t.Errorf("%s %s on %s: %v, want %v", op, name, c.Name(), got, want)
				}
			}
		}
	}
	// A GeometryCollection holds what its polygons hold; its point and
	// line hold nothing (GeometryContainer::contains).
	europe := rings["europe"]
	want := expect(func(p [2]float64) bool { return geotest.Inside(europe, p[0], p[1]) })
	coll := doc("type", "GeometryCollection", "geometries", bson.A{geoPoint(-60, -60),
		doc("type", "LineString", "coordinates", bson.A{bson.A{100, 0}, bson.A{120, 10}}), geoRing(europe)})
	for _, c := range []*mongo.Collection{indexed, plain} {
		if got := idSet(findAll(t, c, doc("loc", doc("$geoWithin", doc("$geometry", coll))))); !slices.Equal(got, want) {
			t.Errorf("$geoWithin a GeometryCollection on %s: %v, want %v", c.Name(), got, want)
		}
	}
	for _, r := range []float64{0.05, 0.3, 1.2} {
		center := [2]float64{179, 10}
		want := expect(func(p [2]float64) bool { return geotest.Haversine(center[0], center[1], p[0], p[1]) <= r })
		f := doc("loc", doc("$geoWithin", doc("$centerSphere", bson.A{bson.A{center[0], center[1]}, r})))
		for _, c := range []*mongo.Collection{indexed, plain} {
			if got := idSet(findAll(t, c, f)); !slices.Equal(got, want) {
				t.Errorf("$centerSphere %g on %s: %v, want %v", r, c.Name(), got, want)
			}
		}
	}
	for _, center := range [][2]float64{{2.35, 48.85}, {-179.9, -1}, {0, 89}} {
		maxMeters := 3000000.0
		var want []int
		for id, p := range pts {
			if geotest.Haversine(center[0], center[1], p[0], p[1])*geotest.EarthRadiusMeters <= maxMeters {
				want = append(want, id)
			}
		}
		dist := func(id int) float64 { p := pts[id]; return geotest.Haversine(center[0], center[1], p[0], p[1]) }
		slices.SortFunc(want, func(a, b int) int { return cmp.Or(cmp.Compare(dist(a), dist(b)), a-b) })
		f := doc("loc", doc("$nearSphere", doc("$geometry", geoPoint(center[0], center[1]), "$maxDistance", maxMeters)))
		got := ids(findAll(t, indexed, f))
		wantS := make([]string, len(want))
		for i, id := range want {
			wantS[i] = strconv.Itoa(id)
		}
		if !slices.Equal(got, wantS) {
			t.Errorf("$nearSphere %v: %v, want %v", center, got, wantS)
		}
		// The same through $geoNear, with the distances.
		cur, err := indexed.Aggregate(ctx, bson.A{doc("$geoNear", doc("near", geoPoint(center[0], center[1]), "distanceField", "d", "maxDistance", maxMeters, "spherical", true))})
		if err != nil {
			t.Fatal(err)
		}
		var out []bson.Raw
		if err := cur.All(ctx, &out); err != nil {
			t.Fatal(err)
		}
		if len(out) != len(want) {
			t.Fatalf("$geoNear %v: %d documents, want %d", center, len(out), len(want))
		}
		for i, d := range out {
			n, _ := d.Lookup("_id").AsInt64OK()
			wantD := dist(int(n)) * geotest.EarthRadiusMeters
			if got := d.Lookup("d").Double(); math.Abs(got-wantD) > 1e-6*max(1, wantD) {
				t.Errorf("$geoNear %v: document %d at %g m, want %g", center, i, got, wantD)
			}
		}
	}
}

// $near reads few documents to answer a few: explain's executionStats.
func TestGeoNearExaminesFew(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("geo").Collection("dense")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	docs := make([]any, 0, 20000)
	for i := 0; i < 20000; i++ {
		docs = append(docs, doc("_id", i, "loc", geoPoint(-10+float64(i%200)*0.1, 40+float64(i/200)*0.1)))
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	var ex bson.Raw
	cmd := doc("explain", doc("find", coll.Name(), "filter", doc("loc", doc("$near", doc("$geometry", geoPoint(0, 45)))), "limit", 10), "verbosity", "executionStats")
	if err := coll.Database().RunCommand(ctx, cmd).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	stats := ex.Lookup("executionStats").Document()
	n, _ := stats.Lookup("nReturned").AsInt64OK()
	docsExamined, _ := stats.Lookup("totalDocsExamined").AsInt64OK()
	if n != 10 || docsExamined > 200 {
		t.Errorf("nReturned %d, docs examined %d of 20000 (%s)", n, docsExamined, stats)
	}
	if plan := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "stage"); plan.StringValue() != "GEO_NEAR_2DSPHERE" {
		t.Errorf("plan %s", ex.Lookup("queryPlanner", "winningPlan"))
	}
}

// Malformed geometries, missing indexes and misplaced stages fail with
// MongoDB's codes; the index reports its version.
func TestGeoErrors(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("geo")
	coll := db.Collection("errs")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc", "2dsphere", "kind", 1)}); err != nil {
		t.Fatal(err)
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 {
		t.Fatal(specs, err)
	}
	var ixs []bson.Raw
	c, _ := coll.Indexes().List(ctx)
	c.All(ctx, &ixs)
	if v, _ := ixs[1].Lookup("2dsphereIndexVersion").AsInt64OK(); v != 3 {
		t.Errorf("listIndexes: %s", ixs[1])
	}
	for _, bad := range []bson.D{
		doc("loc", geoPoint(181, 0)),
		doc("loc", doc("type", "Polygon", "coordinates", bson.A{bson.A{bson.A{0, 0}, bson.A{1, 0}, bson.A{1, 1}}})),
		doc("loc", doc("type", "Polygon", "coordinates", bson.A{bson.A{bson.A{0, 0}, bson.A{2, 2}, bson.A{2, 0}, bson.A{0, 2}, bson.A{0, 0}}})),
		doc("loc", "here"),
		// An array at the indexed path is one geometry, not a list of
		// them (getS2Keys does not expand it; geo_allowedcomparisons.js,
		// geo_s2indexoldformat.js).
		doc("loc", bson.A{geoPoint(0, 0), geoPoint(1, 1)}),
		doc("loc", bson.A{bson.A{0, 0}, bson.A{1, 1}}),
		// A crs MongoDB does not know, and a big polygon, which a
		// 2dsphere index cannot key (geo_s2index.js, geo_big_polygon.js).
		doc("loc", doc("type", "Point", "coordinates", bson.A{40, 5}, "crs", doc("type", "name", "properties", doc("name", "EPSG:2000")))),
		doc("loc", doc("type", "Polygon", "coordinates", bson.A{bson.A{bson.A{0, 0}, bson.A{1, 0}, bson.A{1, 1}, bson.A{0, 0}}},
			"crs", doc("type", "name", "properties", doc("name", "urn:x-mongodb:crs:strictwinding:EPSG:4326")))),
	} {
		_, err := coll.InsertOne(ctx, bad)
		requireCode(t, err, 16755, "Location16755")
	}
	// Documents without the field are kept out of the index, not refused.
	if _, err := coll.InsertMany(ctx, []any{doc("kind", "none"), doc("loc", nil), doc("loc", geoPoint(1, 1), "kind", "p")}); err != nil {
		t.Fatal(err)
	}
	plain := db.Collection("noindex")
	plain.InsertOne(ctx, doc("loc", geoPoint(0, 0)))
	for _, tt := range []struct {
		c    *mongo.Collection
		f    bson.D
		code int
	}{
		{plain, doc("loc", doc("$near", doc("$geometry", geoPoint(0, 0)))), 291},
		{coll, doc("loc", doc("$near", bson.A{0, 0})), 291},
		{coll, doc("$or", bson.A{doc("loc", doc("$nearSphere", bson.A{0, 0})), doc("kind", "p")}), 2},
		// an $or of one clause is that clause (MongoDB normalizes it)
		{coll, doc("$or", bson.A{doc("loc", doc("$nearSphere", bson.A{0, 0}))}), 0},
		{coll, doc("$nor", bson.A{doc("loc", doc("$nearSphere", bson.A{0, 0}))}), 2},
		{coll, doc("loc", doc("$geoWithin", doc("$geometry", geoPoint(0, 0)))), 2},
		{coll, doc("loc", doc("$geoIntersects", doc("$geometry", doc("type", "Polygon", "coordinates", bson.A{bson.A{bson.A{0, 0}, bson.A{1, 0}, bson.A{1, 1}, bson.A{0, 0}}}, "crs", doc("type", "name", "properties", doc("name", "urn:x-mongodb:crs:strictwinding:EPSG:4326")))))), 238},
		{coll, doc("loc", doc("$geoIntersects", doc("$geometry", doc("type", "Polygon", "coordinates", bson.A{bson.A{bson.A{0, 0}, bson.A{1, 0}, bson.A{1, 1}, bson.A{0, 0}}}, "crs", doc("type", "name"))))), 2},
		{coll, doc("loc", doc("$geoIntersects", doc("$geometry", geoPoint(0, 0), "x", 1))), 2},
	} {
		_, err := tt.c.Find(ctx, tt.f)
		if serverCode(err) != tt.code {
			t.Errorf("%v: %v, want %d", tt.f, err, tt.code)
		}
	}
	// $geoWithin and $geoIntersects refused in GeoExpression's and
	// GeoParser's words.
	for _, tt := range []struct {
		f   bson.D
		msg string
	}{
		{doc("loc", doc("$geoWithin", 5)), "geometry must be an object"},
		{doc("loc", doc("$geoIntersects", doc("$box", bson.A{bson.A{0, 0}, bson.A{1, 1}}))),
			"$geoIntersect not supported with provided geometry: { $geoIntersects: { $box: [ [ 0, 0 ], [ 1, 1 ] ] } }"},
		{doc("loc", doc("$geoWithin", doc("$geometry", geoPoint(0, 0)))),
			`$within not supported with provided geometry: { $geoWithin: { $geometry: { type: "Point", coordinates: [ 0.0, 0.0 ] } } }`},
		{doc("loc", doc("$geoWithin", doc("$center", bson.A{bson.A{0, 0}, 1, 2}))), "Only 2 fields allowed for circular region"},
		{doc("loc", doc("$geoWithin", doc("$center", bson.A{bson.A{0, 0}}))), "radius must be a non-negative number"},
		{doc("loc", doc("$exists", true, "$geoWithin", doc("$center", bson.A{bson.A{0, 0}, 1}))), "can't parse extra field: $geoWithin: { $center: [ [ 0, 0 ], 1 ] }"},
	} {
		_, err := coll.Find(ctx, tt.f)
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 2 || ce.Message != tt.msg {
			t.Errorf("%v: %v, want 2 %q", tt.f, err, tt.msg)
		}
	}
	// A $near takes no $natural sort or hint, and no tailable cursor
	// (CanonicalQuery::isValid).
	if err := db.CreateCollection(ctx, "cappedgeo", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096)); err != nil {
		t.Fatal(err)
	}
	near := doc("loc", doc("$near", bson.A{0, 0}))
	for _, tt := range []struct {
		c    *mongo.Collection
		opts *options.FindOptionsBuilder
		msg  string
	}{
		{coll, options.Find().SetSort(doc("$natural", 1)), "geoNear expression not allowed with $natural sort order"},
		{coll, options.Find().SetHint(doc("$natural", -1)), "geoNear expression not allowed with $natural hint"},
		{db.Collection("cappedgeo"), options.Find().SetCursorType(options.Tailable), "Tailable cursors and geo $near cannot be used together"},
	} {
		_, err := tt.c.Find(ctx, near, tt.opts)
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 2 || ce.Message != tt.msg {
			t.Errorf("$near with %s: %v, want 2 %q", tt.msg, err, tt.msg)
		}
	}
	for _, tt := range []struct {
		c        *mongo.Collection
		pipeline bson.A
		code     int
	}{
		{coll, bson.A{doc("$geoNear", doc("near", geoPoint(0, 0)))}, 16606},
		{coll, bson.A{doc("$geoNear", doc("distanceField", "d"))}, 5860400},
		{coll, bson.A{doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "d", "limit", 1))}, 50858},
		// the deprecated uniqueDocs is ignored
		{coll, bson.A{doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "d", "uniqueDocs", true))}, 0},
		{coll, bson.A{doc("$match", doc()), doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "d"))}, 40602},
		{plain, bson.A{doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "d"))}, 27},
		// a missing collection is refused, not read as empty
		// (PipelineD::buildInnerQueryExecutorGeoNear)
		{db.Collection("nogeo"), bson.A{doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "d"))}, 26},
	} {
		_, err := tt.c.Aggregate(ctx, tt.pipeline)
		if serverCode(err) != tt.code {
			t.Errorf("%v: %v, want %d", tt.pipeline, err, tt.code)
		}
	}
	// near may be a variable of the command's let, a constant once
	// MongoDB optimizes the stage (geonear_let.js).
	for _, tt := range []struct {
		near any
		let  bson.D
		code int
	}{
		{"$$pt", doc("pt", geoPoint(1, 1)), 0},
		{"$$pt", doc("pt", 5), 5860401},
		{"$loc", nil, 5860402},
	} {
		opts := options.Aggregate()
		if tt.let != nil {
			opts.SetLet(tt.let)
		}
		cur, err := coll.Aggregate(ctx, bson.A{doc("$geoNear", doc("near", tt.near, "distanceField", "d")), doc("$limit", 1)}, opts)
		if serverCode(err) != tt.code {
			t.Errorf("near %v let %v: %v, want %d", tt.near, tt.let, err, tt.code)
			continue
		}
		var out []bson.Raw
		if err == nil && (cur.All(ctx, &out) != nil || len(out) != 1 || out[0].Lookup("d").Double() != 0) {
			t.Errorf("near %v let %v: %v", tt.near, tt.let, out)
		}
	}
	for _, tt := range []struct {
		keys bson.D
		opts *options.IndexOptionsBuilder
		code int
	}{
		{doc("p", "geoHaystack"), nil, 67},
		{doc("p", "2dsphere"), options.Index().SetSphereVersion(2), 238},
		{doc("p", "2dsphere"), options.Index().SetSphereVersion(9), 67},
		// One index type per index (validateKeyPattern).
		{doc("p", "2dsphere", "q", "2d"), nil, 67},
		{doc("p", "2d", "q", "2dsphere"), nil, 67},
		{doc("p", "2dsphere", "q", "hashed"), nil, 67},
	} {
		_, err := db.Collection("ixerrs").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: tt.keys, Options: tt.opts})
		if serverCode(err) != tt.code {
			t.Errorf("%v: %v, want %d", tt.keys, err, tt.code)
		}
	}
	// $geoNear's options: query, minDistance, includeLocs, a multiplier.
	cur, err := coll.Aggregate(ctx, bson.A{doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "km", "distanceMultiplier", 0.001,
		"includeLocs", "at", "query", doc("kind", "p"), "minDistance", 1000)), doc("$project", doc("km", 1, "at", 1, "_id", 0))})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(ctx, &out); err != nil || len(out) != 1 {
		t.Fatalf("$geoNear with options: %v %v", out, err)
	}
	wantKm := geotest.Haversine(0, 0, 1, 1) * geotest.EarthRadiusMeters / 1000
	if got := out[0].Lookup("km").Double(); math.Abs(got-wantKm) > 1e-6 || out[0].Lookup("at").String() != `{"type": "Point","coordinates": [{"$numberDouble":"1.0"},{"$numberDouble":"1.0"}]}` {
		t.Errorf("$geoNear with options: %s, want km %g", out[0], wantKm)
	}
	// includeLocs of a multi-location field is the closest location: one
	// of the points or legacy pairs an array on the path leads to, a
	// MultiPoint whole. (A 2dsphere index takes no array at the end of its
	// path: geo_allowedcomparisons.js.)
	multi := db.Collection("multiloc")
	if _, err := multi.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc.p", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	multiPoint := doc("type", "MultiPoint", "coordinates", bson.A{bson.A{5.0, 5.0}, bson.A{0.5, 0.0}})
	if _, err := multi.InsertMany(ctx, []any{
		doc("_id", 1, "loc", bson.A{doc("p", geoPoint(3, 3)), doc("p", geoPoint(0.1, 0)), doc("p", geoPoint(2, 2))}),
		doc("_id", 2, "loc", bson.A{doc("p", bson.A{4.0, 4.0}), doc("p", bson.A{0.0, 0.2})}),
		doc("_id", 3, "loc", doc("p", multiPoint)),
	}); err != nil {
		t.Fatal(err)
	}
	cur, err = multi.Aggregate(ctx, bson.A{doc("$geoNear", doc("near", geoPoint(0, 0), "distanceField", "d", "includeLocs", "at")), doc("$project", doc("at", 1))})
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range out {
		got = append(got, d.String())
	}
	want := []string{
		`{"_id": {"$numberInt":"1"},"at": {"type": "Point","coordinates": [{"$numberDouble":"0.1"},{"$numberDouble":"0.0"}]}}`,
		`{"_id": {"$numberInt":"2"},"at": [{"$numberDouble":"0.0"},{"$numberDouble":"0.2"}]}`,
		`{"_id": {"$numberInt":"3"},"at": {"type": "MultiPoint","coordinates": [[{"$numberDouble":"5.0"},{"$numberDouble":"5.0"}],[{"$numberDouble":"0.5"},{"$numberDouble":"0.0"}]]}}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("includeLocs of multi-location fields:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A 2d index on legacy pairs: plane $near by distance, $geoWithin $box,
// $polygon and $center as computed here (and without the index), a
// $nearSphere by great-circle distance, and the index's options.
func TestGeo2d(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("geo2d")
	flat, plain := db.Collection("flat"), db.Collection("plain")
	if _, err := flat.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("p", "2d"), Options: options.Index().SetBits(20).SetMin(-200).SetMax(200)}); err != nil {
		t.Fatal(err)
	}
	pts := map[int][2]float64{}
	var docs []any
	for i := 0; i < 400; i++ {
		x, y := float64(i%20)*9-85+float64(i%7)*0.1, float64(i/20)*9-85+float64(i%3)*0.1
		pts[i] = [2]float64{x, y}
		docs = append(docs, doc("_id", i, "p", bson.A{x, y}))
	}
	for _, c := range []*mongo.Collection{flat, plain} {
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(in func(p [2]float64) bool) []int { return idsWhere(pts, in) }
	// A convex polygon (counter-clockwise): inside means left of every edge.
	poly := [][2]float64{{-50, -40}, {30, -60}, {60, 20}, {-10, 70}}
	leftOfAll := func(p [2]float64) bool {
		for i := range poly {
			a, b := poly[i], poly[(i+1)%len(poly)]
			if (b[0]-a[0])*(p[1]-a[1])-(b[1]-a[1])*(p[0]-a[0]) < 0 {
				return false
			}
		}
		return true
	}
	polyArg := bson.A{}
	for _, p := range poly {
		polyArg = append(polyArg, bson.A{p[0], p[1]})
	}
	for _, tt := range []struct {
		name  string
		shape bson.D
		in    func(p [2]float64) bool
	}{
		{"box", doc("$box", bson.A{bson.A{-20, -30}, bson.A{40, 10}}), func(p [2]float64) bool { return p[0] >= -20 && p[0] <= 40 && p[1] >= -30 && p[1] <= 10 }},
		{"polygon", doc("$polygon", polyArg), leftOfAll},
		{"center", doc("$center", bson.A{bson.A{10, 10}, 33}), func(p [2]float64) bool { return math.Hypot(p[0]-10, p[1]-10) <= 33 }},
	} {
		want := expect(tt.in)
		for _, c := range []*mongo.Collection{flat, plain} {
			if got := idSet(findAll(t, c, doc("p", doc("$geoWithin", tt.shape)))); !slices.Equal(got, want) {
				t.Errorf("$geoWithin %s on %s: %v, want %v", tt.name, c.Name(), got, want)
			}
		}
	}
	center := [2]float64{3, -4}
	var want []string
	byDist := make([]int, 0, len(pts))
	for id, p := range pts {
		if math.Hypot(p[0]-center[0], p[1]-center[1]) <= 30 {
			byDist = append(byDist, id)
		}
	}
	d := func(id int) float64 { return math.Hypot(pts[id][0]-center[0], pts[id][1]-center[1]) }
	slices.SortFunc(byDist, func(a, b int) int {
		if c := cmp.Compare(d(a), d(b)); c != 0 {
			return c
		}
		return a - b
	})
	for _, id := range byDist {
		want = append(want, strconv.Itoa(id))
	}
	if got := ids(findAll(t, flat, doc("p", doc("$near", bson.A{center[0], center[1]}, "$maxDistance", 30)))); !slices.Equal(got, want) {
		t.Errorf("$near: %v, want %v", got, want)
	}
	var ex bson.Raw
	if err := db.RunCommand(ctx, doc("explain", doc("find", "flat", "filter", doc("p", doc("$near", bson.A{0, 0}))))).Decode(&ex); err != nil {
		t.Fatal(err)
	}
	if s := ex.Lookup("queryPlanner", "winningPlan", "stage").StringValue(); s != "GEO_NEAR_2D" {
		t.Errorf("explain: %s", ex.Lookup("queryPlanner", "winningPlan"))
	}
	// $nearSphere on the 2d index: great-circle distances in radians.
	cur, err := flat.Aggregate(ctx, bson.A{doc("$geoNear", doc("near", bson.A{3, -4}, "spherical", true, "distanceField", "r", "maxDistance", 0.3))})
	if err != nil {
		t.Fatal(err)
	}
	var near []bson.Raw
	if err := cur.All(ctx, &near); err != nil {
		t.Fatal(err)
	}
	wantN := expect(func(p [2]float64) bool { return geotest.Haversine(3, -4, p[0], p[1]) <= 0.3 })
	if got := idSet(near); !slices.Equal(got, wantN) {
		t.Errorf("$geoNear spherical on 2d: %v, want %v", got, wantN)
	}
	for i, dd := range near {
		n, _ := dd.Lookup("_id").AsInt64OK()
		p := pts[int(n)]
		if got, w := dd.Lookup("r").Double(), geotest.Haversine(3, -4, p[0], p[1]); math.Abs(got-w) > 1e-9 || i > 0 && got < near[i-1].Lookup("r").Double() {
			t.Errorf("$geoNear spherical: %s at %g, want %g in order", dd, got, w)
		}
	}
	if _, err := db.Collection("skip").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("p", "2d")}); err != nil {
		t.Fatal(err)
	}
	var ixs []bson.Raw
	c, _ := flat.Indexes().List(ctx)
	c.All(ctx, &ixs)
	if got := ixs[1].String(); got != `{"v": {"$numberInt":"2"},"key": {"p": "2d"},"name": "p_2d","bits": {"$numberInt":"20"},"min": {"$numberDouble":"-200.0"},"max": {"$numberDouble":"200.0"}}` {
		t.Errorf("listIndexes: %s", got)
	}
	_, err = flat.InsertOne(ctx, doc("_id", "out", "p", bson.A{250, 0}))
	requireCode(t, err, 13027, "Location13027")
	if want := `point not in interval of [ -200, 200 ] :: caused by :: { _id: "out", p: [ 250, 0 ] }`; !strings.Contains(err.Error(), want) {
		t.Errorf("out of bounds: %v, want %s", err, want)
	}
	// A $near or $geoNear centered outside the bounds fails
	// (GeoNear2DStage hashes its center); a $nearSphere's point off the
	// sphere fails first, as the query is parsed (GeoNearExpression).
	_, err = flat.Find(ctx, doc("p", doc("$near", bson.A{200.5, 0})))
	requireCode(t, err, 16433, "Location16433")
	_, err = flat.Find(ctx, doc("p", doc("$nearSphere", bson.A{0, -200.5})))
	requireCode(t, err, 2, "BadValue")
	_, err = flat.Aggregate(ctx, bson.A{doc("$geoNear", doc("near", bson.A{200.5, 1}, "distanceField", "d"))})
	requireCode(t, err, 16433, "Location16433")
	if want := "point not in interval of [ -200, 200 ] :: caused by :: [ 200.5, 1.0 ]"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("$geoNear out of bounds: %v, want %s", err, want)
	}
	// Both bounds are inside (GeoHashConverter::hash).
	if _, err := flat.InsertOne(ctx, doc("_id", "max", "p", bson.A{200, 200})); err != nil {
		t.Fatal(err)
	}
	if got := ids(findAll(t, flat, doc("p", doc("$geoWithin", doc("$box", bson.A{bson.A{190, 190}, bson.A{200, 200}}))))); !slices.Equal(got, []string{`"max"`}) {
		t.Errorf("$box at max: %v", got)
	}
	// get2DKeys: what holds no location keys nothing; a location is read
	// from its first two values.
	for _, tt := range []struct {
		p    any
		code int
	}{
		{"here", 0}, {5, 0}, {bson.A{}, 0}, {doc(), 0}, {bson.A{bson.A{}}, 0}, {bson.A{1, 2, 3}, 0}, {doc("a", doc("x", 1, "y", 2)), 0},
		{bson.A{1}, 13068}, {bson.A{bson.A{1}}, 13068}, {bson.A{1, "a"}, 13026}, {bson.A{bson.A{1, 2}, 5}, 16804},
	} {
		_, err := db.Collection("skip").InsertOne(ctx, doc("p", tt.p))
		if serverCode(err) != tt.code {
			t.Errorf("insert %v: %v, want %d", tt.p, err, tt.code)
		}
	}
	_, err = db.Collection("x").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("a", 1, "p", "2d")})
	requireCode(t, err, 16801, "Location16801")
}

// TestGeoNearPicksItsIndex: without key, $geoNear searches the field of the
// collection's one 2d index, else of its one 2dsphere index; two indexes of
// the kind it takes are ambiguous (27), as MongoDB's
// extractKeyFieldFromIndexCatalog decides.
func TestGeoNearPicksItsIndex(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("pick")
	// flat holds planar points; sphere puts the documents in the other order
	if _, err := coll.InsertMany(ctx, []any{
		doc("_id", 1, "flat", bson.A{0, 0}, "sphere", geoPoint(50, 50)),
		doc("_id", 2, "flat", bson.A{3, 0}, "sphere", geoPoint(0, 0)),
	}); err != nil {
		t.Fatal(err)
	}
	index := func(c *mongo.Collection, field, kind string) {
		t.Helper()
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc(field, kind)}); err != nil {
			t.Fatal(err)
		}
	}
	index(coll, "sphere", "2dsphere")
	index(coll, "flat", "2d")
	near := func(c *mongo.Collection) ([]int, error) {
		cur, err := c.Aggregate(ctx, bson.A{doc("$geoNear", doc("near", bson.A{0, 0}, "distanceField", "d"))})
		if err != nil {
			return nil, err
		}
		var out []bson.Raw
		err = cur.All(ctx, &out)
		var order []int
		for _, d := range out {
			n, _ := d.Lookup("_id").AsInt64OK()
			order = append(order, int(n))
		}
		return order, err
	}
	if got, err := near(coll); err != nil || !slices.Equal(got, []int{1, 2}) {
		t.Errorf("2d and 2dsphere: %v %v, want the 2d index's order [1 2]", got, err)
	}
	index(coll, "flat2", "2d")
	if _, err := near(coll); serverCode(err) != 27 || !strings.Contains(err.Error(), "more than one 2d index") {
		t.Errorf("two 2d indexes: %v, want 27", err)
	}
	spheres := db.Collection("pick2")
	index(spheres, "a", "2dsphere")
	index(spheres, "b", "2dsphere")
	if _, err := near(spheres); serverCode(err) != 27 || !strings.Contains(err.Error(), "more than one 2dsphere index") {
		t.Errorf("two 2dsphere indexes: %v, want 27", err)
	}
}

// A $geoNear's hint leaves the planner only the hinted index, as in
// MongoDB: a usable one is used ($indexStats counts it), another fails
// (291), and a compound geo index serves it whether or not the query pins
// its fields before the geo field (geonear_hint.js).
func TestGeoNearHint(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("geohint")
	if _, err := coll.InsertOne(ctx, doc("_id", "1", "state", "ACTIVE", "location", bson.A{106, 10})); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: doc("_id", 1, "location", "2dsphere", "state", 1), Options: options.Index().SetName("compound")},
		{Keys: doc("location", "2dsphere"), Options: options.Index().SetName("simple")},
		{Keys: doc("state", 1), Options: options.Index().SetName("plain")},
	} {
		if _, err := coll.Indexes().CreateOne(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	pipeline := bson.A{doc("$geoNear", doc("query", doc("_id", doc("$in", bson.A{"1", "2"}), "state", "ACTIVE"), "spherical", true,
		"near", geoPoint(106.65, 10.78), "distanceField", "d", "key", "location"))}
	for _, tt := range []struct {
		hint string
		code int
	}{{"simple", 0}, {"plain", 291}, {"compound", 0}} {
		cur, err := coll.Aggregate(ctx, pipeline, options.Aggregate().SetHint(tt.hint))
		if serverCode(err) != tt.code {
			t.Errorf("hint %s: %v, want %d", tt.hint, err, tt.code)
			continue
		}
		if err != nil {
			continue
		}
		var out []bson.Raw
		if err := cur.All(ctx, &out); err != nil || len(out) != 1 {
			t.Errorf("hint %s: %v %v", tt.hint, out, err)
		}
	}
	cur, err := coll.Aggregate(ctx, bson.A{doc("$indexStats", doc()), doc("$match", doc("name", "simple"))})
	if err != nil {
		t.Fatal(err)
	}
	var stats []bson.Raw
	if err := cur.All(ctx, &stats); err != nil || len(stats) != 1 {
		t.Fatal(stats, err)
	}
	if ops, _ := stats[0].Lookup("accesses", "ops").AsInt64OK(); ops != 1 {
		t.Errorf("the hinted index's ops: %d, want 1", ops)
	}
}

// TestGeoCompoundIndexes: a 2dsphere or 2d index, compound or not, holds the keys
// MongoDB's getS2Keys and get2DKeys make, so that a query it serves
// returns what a collection scan returns; keys is the index's key count
// (validate's keysPerIndex; -1: not checked, as Folio's 2d keys expand
// arrays where MongoDB's hold them whole).
func TestGeoCompoundIndexes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("geocompound")
	pt := geoPoint(5, 5)
	near := doc("$geoWithin", doc("$centerSphere", bson.A{bson.A{5, 5}, 0.01}))
	for i, tt := range []struct {
		index  bson.D
		docs   []any
		filter bson.D
		want   []int
		keys   int
	}{
		// A document with geometry in either 2dsphere field is indexed,
		// the other field keyed null; one with neither is not.
		{doc("a", "2dsphere", "b", "2dsphere"), []any{doc("_id", 1, "a", pt), doc("_id", 2, "b", pt), doc("_id", 3, "a", pt, "b", pt), doc("_id", 4, "c", 1)},
			doc("a", near), []int{1, 3}, 3},
		// An empty document holds no geometry, as null does (geo_s2sparse.js).
		{doc("a", "2dsphere"), []any{doc("_id", 1, "a", doc()), doc("_id", 2, "a", bson.A{}), doc("_id", 3, "a", nil), doc("_id", 4, "a", pt)},
			doc("a", near), []int{4}, 1},
		// A descending field before the geo field (geo_s2descindex.js).
		{doc("f", -1, "a", "2dsphere"), []any{doc("_id", 1, "f", 1, "a", pt), doc("_id", 2, "f", 2, "a", pt)},
			doc("a", near, "f", 1), []int{1}, 2},
		// Parallel arrays in the other fields are keyed by their product
		// (geo_multikey1.js, geo_s2nongeoarray.js).
		{doc("a", "2dsphere", "x", 1, "y", 1), []any{doc("_id", 1, "a", pt, "x", bson.A{1, 2}, "y", bson.A{3, 4})},
			doc("a", near, "x", 2, "y", 3), []int{1}, 4},
		{doc("p", "2d", "x", 1, "y", 1), []any{doc("_id", 1, "p", bson.A{5, 5}, "x", bson.A{1, 2}, "y", bson.A{3, 4})},
			doc("p", doc("$geoWithin", doc("$box", bson.A{bson.A{4, 4}, bson.A{6, 6}})), "x", 2), []int{1}, -1},
	} {
		c := db.Collection("c" + strconv.Itoa(i))
		name, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: tt.index})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.InsertMany(ctx, tt.docs); err != nil {
			t.Fatalf("%v: %v", tt.index, err)
		}
		indexed := idSet(findAll(t, c, tt.filter))
		scanned := idSet(findAll(t, c, tt.filter, options.Find().SetHint(doc("$natural", 1))))
		if !slices.Equal(indexed, tt.want) || !slices.Equal(scanned, tt.want) {
			t.Errorf("%v %v: indexed %v, scanned %v, want %v", tt.index, tt.filter, indexed, scanned, tt.want)
		}
		var v bson.Raw
		if err := db.RunCommand(ctx, doc("validate", c.Name())).Decode(&v); err != nil {
			t.Fatal(err)
		}
		if n, _ := v.Lookup("keysPerIndex", name).AsInt64OK(); tt.keys >= 0 && int(n) != tt.keys {
			t.Errorf("%v: %d keys, want %d", tt.index, n, tt.keys)
		}
	}
}

// A $near reads a compound 2dsphere index whose fields before the geo
// field the query bounds by a range or not at all, in order of distance,
// with the other predicates applied, a multikey prefix field's document
// once; as MongoDB's planner gives the index the $near whatever its prefix
// fields' bounds (multikey_geonear.js).
func TestGeoNearUnpinnedPrefix(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("geounpinned")
	for i, tt := range []struct {
		index  bson.D
		docs   []any
		filter bson.D
		want   []int
	}{
		{doc("a", 1, "b", "2dsphere"),
			[]any{doc("_id", 0, "a", 0, "b", geoPoint(0, 0)), doc("_id", 1, "a", 0, "b", geoPoint(1, 1)), doc("_id", 2, "a", 0, "b", geoPoint(2, 2)),
				doc("_id", 3, "a", bson.A{"multi", "key"}, "b", geoPoint(-1, -1)), doc("_id", 4, "a", bson.A{5, 6}, "b", geoPoint(3, 3))},
			doc("a", doc("$gte", 0), "b", doc("$near", doc("$geometry", geoPoint(2, 2)))), []int{2, 4, 1, 0}},
		{doc("a", 1, "b", "2dsphere"),
			[]any{doc("_id", 0, "a", 0, "b", geoPoint(0, 0)), doc("_id", 1, "a", "x", "b", geoPoint(1, 1)), doc("_id", 2, "b", geoPoint(2, 2))},
			doc("b", doc("$nearSphere", doc("$geometry", geoPoint(2, 2), "$maxDistance", 200000))), []int{2, 1}},
		{doc("a.b", 1, "a.c", "2dsphere"),
			[]any{doc("_id", 0, "a", bson.A{doc("b", 0), doc("c", geoPoint(0, 0))}), doc("_id", 1, "a", bson.A{doc("b", 1), doc("c", geoPoint(1, 1))}),
				doc("_id", 3, "a", bson.A{doc("b", 10), doc("b", -1), doc("c", geoPoint(0, 0))})},
			doc("a.b", doc("$lt", 0, "$gt", 9), "a.c", doc("$near", doc("$geometry", geoPoint(0, 0)))), []int{3}},
		// An index of two 2dsphere fields serves a $near on either
		// (GeoNear2DSphereStage finds the near field by name;
		// geo_s2twofields.js), each document once.
		{doc("to", "2dsphere", "from", "2dsphere"),
			[]any{doc("_id", 0, "to", geoPoint(0, 0), "from", geoPoint(5, 5)), doc("_id", 1, "to", geoPoint(9, 9), "from", geoPoint(1, 1)),
				doc("_id", 2, "from", geoPoint(3, 3)), doc("_id", 3, "to", geoPoint(2, 2)),
				doc("_id", 4, "to", geoPoint(1, 1), "from", doc("type", "LineString", "coordinates", bson.A{bson.A{0, 0}, bson.A{4, 4}}))},
			doc("from", doc("$near", doc("$geometry", geoPoint(1, 1)))), []int{1, 4, 2, 0}},
		{doc("to", "2dsphere", "from", "2dsphere"),
			[]any{doc("_id", 0, "to", geoPoint(0, 0), "from", geoPoint(5, 5)), doc("_id", 1, "to", geoPoint(9, 9), "from", geoPoint(1, 1)), doc("_id", 2, "from", geoPoint(3, 3))},
			doc("to", doc("$nearSphere", doc("$geometry", geoPoint(10, 10)))), []int{1, 0}},
	} {
		c := db.Collection("c" + strconv.Itoa(i))
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: tt.index}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.InsertMany(ctx, tt.docs); err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, d := range findAll(t, c, tt.filter) {
			n, _ := d.Lookup("_id").AsInt64OK()
			got = append(got, int(n))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%v %v: %v, want %v", tt.index, tt.filter, got, tt.want)
		}
	}
}

// geoMetaColl starts a server and fills collection geo.<name>, under a
// 2dsphere index on loc, with geoPoints; it returns the client, the
// collection and how many documents it holds.
func geoMetaColl(t *testing.T, name string) (*mongo.Client, *mongo.Collection, int) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("geo").Collection(name)
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	docs, _ := geoPoints()
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	return client, coll, len(docs)
}

// TestGeoNearMetaAfterSpilledSort: a $sort that spills to disk keeps each
// document's metadata, so {$meta: "geoNearDistance"} and {$meta:
// "geoNearPoint"} after it read what $geoNear measured, as its
// distanceField and includeLocs did (MongoDB's sorter spills a Document
// with its metadata: DocumentMetadataFields::serializeForSorter).
func TestGeoNearMetaAfterSpilledSort(t *testing.T) {
	client, coll, n := geoMetaColl(t, "spill")
	ctx := context.Background()
	if err := client.Database("admin").RunCommand(ctx, doc("setParameter", 1, "internalQueryMaxBlockingSortMemoryUsageBytes", 1000)).Err(); err != nil {
		t.Fatal(err)
	}
	out := aggregateAll(t, coll, bson.A{
		doc("$geoNear", doc("near", geoPoint(10, 20), "distanceField", "dist", "includeLocs", "at")),
		doc("$sort", doc("_id", -1)),
		doc("$project", doc("dist", 1, "at", 1, "d", doc("$meta", "geoNearDistance"), "p", doc("$meta", "geoNearPoint"))),
	}, options.Aggregate().SetAllowDiskUse(true))
	if len(out) != n {
		t.Fatalf("%d documents, want %d", len(out), n)
	}
	for _, d := range out {
		if !d.Lookup("d").Equal(d.Lookup("dist")) || !d.Lookup("p").Equal(d.Lookup("at")) {
			t.Fatalf("metadata lost through the spilled sort: %s", d)
		}
	}
}

// TestGeoNearMetaInBucketAuto: $bucketAuto sorts its input before it
// accumulates, and an output accumulator's {$meta: "geoNearDistance"}
// reads each document's own distance (MongoDB's sorter holds Documents
// with their metadata), not the last input document's.
func TestGeoNearMetaInBucketAuto(t *testing.T) {
	_, coll, _ := geoMetaColl(t, "bucket")
	out := aggregateAll(t, coll, bson.A{
		doc("$geoNear", doc("near", geoPoint(10, 20), "distanceField", "dist")),
		doc("$bucketAuto", doc("groupBy", "$_id", "buckets", 3, "output", doc(
			"d", doc("$push", doc("$meta", "geoNearDistance")), "dist", doc("$push", "$dist")))),
	})
	if len(out) != 3 {
		t.Fatalf("%d buckets, want 3", len(out))
	}
	for _, b := range out {
		if !b.Lookup("d").Equal(b.Lookup("dist")) {
			t.Fatalf("bucket %s: {$meta: \"geoNearDistance\"} %s, want the distances %s", b.Lookup("_id"), b.Lookup("d"), b.Lookup("dist"))
		}
	}
}

// TestGeoNearMetaThroughSetWindowFields: $setWindowFields keeps each
// document's metadata, in its window functions' inputs and on the document
// it outputs (MongoDB adds the outputs to the cached input Document, its
// metadata included, while the partition is in memory).
func TestGeoNearMetaThroughSetWindowFields(t *testing.T) {
	_, coll, n := geoMetaColl(t, "window")
	own := doc("$push", doc("$meta", "geoNearDistance"), "window", doc("documents", bson.A{0, 0}))
	for i, spec := range []bson.D{
		doc("output", doc("n", doc("$count", doc()))), // no sort: the input as it comes
		doc("sortBy", doc("_id", 1), "output", doc("m", own)),
		doc("partitionBy", doc("$mod", bson.A{"$_id", 3}), "sortBy", doc("_id", -1), "output", doc("m", own)),
	} {
		out := aggregateAll(t, coll, bson.A{
			doc("$geoNear", doc("near", geoPoint(10, 20), "distanceField", "dist")),
			doc("$setWindowFields", spec),
			doc("$project", doc("dist", 1, "m", 1, "d", doc("$meta", "geoNearDistance"))),
		})
		if len(out) != n {
			t.Fatalf("%v: %d documents, want %d", spec, len(out), n)
		}
		for _, d := range out {
			if !d.Lookup("d").Equal(d.Lookup("dist")) {
				t.Fatalf("%v: metadata lost: %s", spec, d)
			}
			if i == 0 {
				continue
			}
			if m, _ := d.Lookup("m").Array().Values(); len(m) != 1 || !m[0].Equal(d.Lookup("dist")) {
				t.Fatalf("%v: metadata lost: %s", spec, d)
			}
		}
	}
}

// TestGeoNearMetaThroughDensify: $densify passes its input documents
// through with their metadata (its $sort keeps it); the documents it
// generates have none.
func TestGeoNearMetaThroughDensify(t *testing.T) {
	_, coll, n := geoMetaColl(t, "densify")
	out := aggregateAll(t, coll, bson.A{
		doc("$geoNear", doc("near", geoPoint(10, 20), "distanceField", "dist")),
		doc("$densify", doc("field", "_id", "range", doc("step", 0.5, "bounds", "full"))),
		doc("$project", doc("dist", 1, "d", doc("$meta", "geoNearDistance"))),
	})
	if len(out) != 2*n-1 {
		t.Fatalf("%d documents, want %d", len(out), 2*n-1)
	}
	for _, d := range out {
		if !d.Lookup("d").Equal(d.Lookup("dist")) {
			t.Fatalf("metadata lost or invented: %s", d)
		}
	}
}

// $geoNear runs first in a $lookup's or $unionWith's sub-pipeline, the
// read of the foreign collection doing its search: the foreign documents
// come nearest first with their distances and locations, fail without a
// geo index (IndexNotFound), and not after the equality match of
// localField/foreignField, which MongoDB puts before the sub-pipeline's
// stages (requires_geo_index.js).
func TestGeoNearInSubPipeline(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	local, foreign := db.Collection("subnear"), db.Collection("subnear_from")
	if _, err := local.InsertMany(ctx, []any{doc("_id", 1), doc("_id", 2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := foreign.InsertMany(ctx, []any{
		doc("_id", "far", "loc", bson.A{5, 5}), doc("_id", "near", "loc", bson.A{0, 1}), doc("_id", "farthest", "loc", bson.A{10, 9}),
	}); err != nil {
		t.Fatal(err)
	}
	geoNear := doc("$geoNear", doc("near", bson.A{0, 0}, "distanceField", "d", "includeLocs", "l", "spherical", true))
	lookup := bson.A{doc("$lookup", doc("from", "subnear_from", "pipeline", bson.A{geoNear, doc("$limit", 2)}, "as", "x"))}
	_, err := local.Aggregate(ctx, lookup)
	requireCode(t, err, 27, "IndexNotFound")
	if _, err := foreign.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	out := aggregateAll(t, local, lookup)
	if len(out) != 2 {
		t.Fatalf("$lookup: %s", docsString(out))
	}
	for _, d := range out {
		x, _ := d.Lookup("x").Array().Values()
		if len(x) != 2 || x[0].Document().Lookup("_id").StringValue() != "near" || x[1].Document().Lookup("_id").StringValue() != "far" {
			t.Fatalf("$lookup's matches: %s", d)
		}
		m := x[0].Document()
		if dist := m.Lookup("d").Double(); math.Abs(dist-math.Pi/180) > 1e-12 || m.Lookup("l").String() != m.Lookup("loc").String() {
			t.Errorf("distance and location: %s", m)
		}
	}
	union := aggregateAll(t, local, bson.A{doc("$unionWith", doc("coll", "subnear_from", "pipeline", bson.A{geoNear}))})
	if got := ids(union); !slices.Equal(got, []string{"1", "2", `"near"`, `"far"`, `"farthest"`}) {
		t.Errorf("$unionWith: %v", got)
	}
	_, err = local.Aggregate(ctx, bson.A{doc("$lookup", doc("from", "subnear_from", "localField", "_id", "foreignField", "_id", "pipeline", bson.A{geoNear}, "as", "x"))})
	requireCode(t, err, 40602, "Location40602")
}

// A $geoNear in a $lookup's sub-pipeline may take its near from the
// $lookup's let, a constant for each local document as MongoDB folds it:
// each local document gets the foreign document nearest to its own point.
func TestGeoNearLookupLetNear(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	local, foreign := db.Collection("letnear"), db.Collection("letnear_from")
	if _, err := local.InsertMany(ctx, []any{doc("_id", 1, "p", bson.A{0, 0}), doc("_id", 2, "p", bson.A{10, 10})}); err != nil {
		t.Fatal(err)
	}
	if _, err := foreign.InsertMany(ctx, []any{doc("_id", "a", "loc", bson.A{0, 1}), doc("_id", "b", "loc", bson.A{10, 9}), doc("_id", "c", "loc", bson.A{5, 5})}); err != nil {
		t.Fatal(err)
	}
	if _, err := foreign.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	out := aggregateAll(t, local, bson.A{doc("$lookup", doc("from", "letnear_from", "let", doc("pt", "$p"),
		"pipeline", bson.A{doc("$geoNear", doc("near", "$$pt", "distanceField", "d", "spherical", true)), doc("$limit", 1)}, "as", "x"))})
	want := map[int32]string{1: "a", 2: "b"}
	for _, d := range out {
		x, _ := d.Lookup("x").Array().Values()
		if len(x) != 1 || x[0].Document().Lookup("_id").StringValue() != want[d.Lookup("_id").Int32()] {
			t.Errorf("nearest to %s: %s", d.Lookup("p"), d.Lookup("x"))
		}
	}
	if len(out) != 2 {
		t.Fatalf("%s", docsString(out))
	}
}

// A compound geo index's fields after the geo field bound the scan: keys
// outside the query's bounds of them are skipped without fetching their
// documents, for $geoWithin and $near alike, and explain shows those
// bounds beside the geo field's (geo_s2ordering.js). Arrays and missing
// values in those fields answer as a collection scan does.
func TestGeoTrailingFieldsBoundKeys(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("geotrailing")
	for _, kind := range []string{"2dsphere", "2d"} {
		coll := db.Collection("c" + kind)
		var loc func(x, y float64) any
		within := doc("$geoWithin", doc("$centerSphere", bson.A{bson.A{0, 0}, math.Pi / 180}))
		near := doc("$near", doc("$geometry", geoPoint(0.5, 0.5)))
		if kind == "2d" {
			loc = func(x, y float64) any { return bson.A{x, y} }
			within = doc("$geoWithin", doc("$box", bson.A{bson.A{-1.1, -1.1}, bson.A{1.1, 1.1}}))
			near = doc("$near", bson.A{0.5, 0.5})
		} else {
			loc = func(x, y float64) any { return geoPoint(x, y) }
		}
		if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("geo", kind, "nongeo", 1)}); err != nil {
			t.Fatal(err)
		}
		docs := make([]any, 0, 1700)
		for x := -20; x < 20; x++ {
			for y := -20; y < 20; y++ {
				docs = append(docs, doc("_id", len(docs), "nongeo", strconv.Itoa(x)+","+strconv.Itoa(y), "geo", loc(float64(x)/20, float64(y)/20)))
			}
		}
		needle := len(docs)
		docs = append(docs,
			doc("_id", needle, "nongeo", "hari", "geo", loc(0, 0)),
			doc("_id", needle+1, "nongeo", bson.A{"x", "hari"}, "geo", loc(0.1, 0.1)),
			doc("_id", needle+2, "geo", loc(0.2, 0.2)),
			doc("_id", needle+3, "nongeo", nil, "geo", loc(0.3, 0.3)))
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			filter bson.D
			want   []int
		}{
			{doc("nongeo", "hari", "geo", within), []int{needle, needle + 1}},
			{doc("nongeo", "hari", "geo", near), []int{needle, needle + 1}},
			{doc("nongeo", nil, "geo", within), []int{needle + 2, needle + 3}},
			{doc("nongeo", doc("$in", bson.A{"hari", "0,0"}), "geo", near), []int{20*40 + 20, needle, needle + 1}},
		} {
			got := idSet(findAll(t, coll, tt.filter))
			want := slices.Sorted(slices.Values(tt.want))
			scanned := want
			if tt.filter[1].Value.(bson.D)[0].Key != "$near" {
				scanned = idSet(findAll(t, coll, tt.filter, options.Find().SetHint(doc("$natural", 1))))
			}
			if !slices.Equal(got, want) || !slices.Equal(scanned, want) {
				t.Errorf("%s %v: indexed %v, scanned %v, want %v", kind, tt.filter, got, scanned, want)
			}
			var ex bson.Raw
			cmd := doc("explain", doc("find", coll.Name(), "filter", tt.filter), "verbosity", "executionStats")
			if err := db.RunCommand(ctx, cmd).Decode(&ex); err != nil {
				t.Fatal(err)
			}
			if n, _ := ex.Lookup("executionStats", "totalDocsExamined").AsInt64OK(); int(n) != len(want) {
				t.Errorf("%s %v: %d documents examined, want %d", kind, tt.filter, n, len(want))
			}
		}
		var ex bson.Raw
		cmd := doc("explain", doc("find", coll.Name(), "filter", doc("nongeo", "hari", "geo", within)))
		if err := db.RunCommand(ctx, cmd).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		bounds := ex.Lookup("queryPlanner", "winningPlan", "inputStage", "indexBounds").Document()
		if got := bounds.Lookup("nongeo").String(); got != `["[\"hari\", \"hari\"]"]` {
			t.Errorf("%s: nongeo bounds %s", kind, got)
		}
		if _, err := bounds.LookupErr("geo"); err != nil {
			t.Errorf("%s: no geo bounds in %s", kind, bounds)
		}
	}
}

// A geometry a 2dsphere index cannot key is refused (16755) with the
// reason S2GetKeysForElement gives: a big polygon before any projection,
// a legacy pair off the sphere by the value it could not project
// (geo_big_polygon.js; MongoDB's error on {latitude, longitude} pairs).
func TestGeoKeyErrorReasons(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database("geokeyerr").Collection("c")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: doc("loc", "2dsphere")}); err != nil {
		t.Fatal(err)
	}
	strict := doc("type", "name", "properties", doc("name", "urn:x-mongodb:crs:strictwinding:EPSG:4326"))
	for _, tt := range []struct {
		loc    any
		reason string
	}{
		{doc("type", "Polygon", "coordinates", bson.A{bson.A{bson.A{0, 0}, bson.A{1, 0}, bson.A{1, 1}, bson.A{0, 0}}}, "crs", strict),
			"can't index geometry with strict winding order"},
		{bson.A{0, 91}, "can't project geometry into spherical CRS: [ 0, 91 ]"},
		{doc("latitude", -77.85059, "longitude", 166.66534), "can't project geometry into spherical CRS: { latitude: -77.85059, longitude: 166.66534 }"},
	} {
		_, err := coll.InsertOne(ctx, doc("_id", 1, "loc", tt.loc))
		requireCode(t, err, 16755, "Location16755")
		var we mongo.WriteException
		if !errors.As(err, &we) || len(we.WriteErrors) != 1 {
			t.Fatalf("%v: %v", tt.loc, err)
		}
		if msg := we.WriteErrors[0].Message; !strings.HasPrefix(msg, "Can't extract geo keys: { _id: 1, loc: ") || !strings.HasSuffix(msg, "  "+tt.reason) {
			t.Errorf("%v: %q, want the reason %q", tt.loc, msg, tt.reason)
		}
	}
}

// TestSortByGeoNearDistance: MongoDB 7.0 sorts by {$meta:
// "geoNearDistance"} (SortPattern), farthest first as every $meta sort,
// in a find with $near and after a leading $geoNear; without them the
// $geoNear metadata is unavailable (CanonicalQuery::isValid,
// PipelineD::buildInnerQueryExecutorGeoNear) and a sort, projection or
// expression reading it fails with 40218 (DepsTracker::setNeedsMetadata).
func TestSortByGeoNearDistance(t *testing.T) {
	client, coll, _ := geoMetaColl(t, "sortdist")
	ctx := context.Background()
	descending := func(what string, out []bson.Raw, field string) {
		t.Helper()
		if len(out) < 2 {
			t.Fatalf("%s: %d documents", what, len(out))
		}
		for i := 1; i < len(out); i++ {
			if out[i-1].Lookup(field).Double() < out[i].Lookup(field).Double() {
				t.Fatalf("%s: not farthest first at %d: %s", what, i, docsString(out))
			}
		}
	}
	near := doc("loc", doc("$near", doc("$geometry", geoPoint(10, 20), "$maxDistance", 3e6)))
	out := findAll(t, coll, near, options.Find().
		SetSort(doc("d", doc("$meta", "geoNearDistance"))).
		SetProjection(doc("d", doc("$meta", "geoNearDistance"))))
	descending("find", out, "d")
	out = aggregateAll(t, coll, bson.A{
		doc("$geoNear", doc("near", geoPoint(10, 20), "distanceField", "dist", "maxDistance", 3e6)),
		doc("$sort", doc("d", doc("$meta", "geoNearDistance"))),
	})
	descending("aggregate", out, "dist")

	db := client.Database("geo")
	for _, tc := range []struct {
		name string
		cmd  bson.D
		what string
	}{
		{"find sort", doc("find", coll.Name(), "sort", doc("d", doc("$meta", "geoNearDistance"))), "$geoNear distance"},
		{"find projection", doc("find", coll.Name(), "projection", doc("p", doc("$meta", "geoNearPoint"))), "$geoNear point"},
		{"aggregate $sort", doc("aggregate", coll.Name(), "pipeline", bson.A{doc("$sort", doc("d", doc("$meta", "geoNearDistance")))}, "cursor", doc()), "$geoNear distance"},
		{"aggregate $project", doc("aggregate", coll.Name(), "pipeline", bson.A{doc("$match", doc()), doc("$project", doc("p", doc("$meta", "geoNearPoint")))}, "cursor", doc()), "$geoNear point"},
	} {
		err := db.RunCommand(ctx, tc.cmd).Err()
		requireError(t, err, 40218, "Location40218", "query requires "+tc.what+" metadata, but it is not available")
	}
	// After a stage that rebuilds its documents, nothing is checked: the
	// metadata is missing there.
	out = aggregateAll(t, coll, bson.A{
		doc("$group", doc("_id", nil)),
		doc("$project", doc("d", doc("$meta", "geoNearDistance"))),
	})
	if len(out) != 1 || out[0].Lookup("d").Type != 0 {
		t.Fatalf("after $group: %s", docsString(out))
	}
}

// TestFindAndModifySortMetaUnavailable: findAndModify meets a sort by
// metadata its query cannot give as MongoDB canonicalizes the query
// (ParsedUpdate::parseQueryToCQ): 40218 with DepsTracker's message, not
// wrapped as an error of the plan executor, and nothing is modified.
func TestFindAndModifySortMetaUnavailable(t *testing.T) {
	client, coll, _ := geoMetaColl(t, "famsort")
	ctx := context.Background()
	db := client.Database("geo")
	for _, tc := range []struct{ meta, what string }{
		{"geoNearDistance", "$geoNear distance"},
		{"textScore", "text score"},
	} {
		err := db.RunCommand(ctx, doc("findAndModify", coll.Name(), "query", doc(),
			"sort", doc("s", doc("$meta", tc.meta)), "update", doc("$set", doc("x", 1)))).Err()
		requireError(t, err, 40218, "Location40218", "query requires "+tc.what+" metadata, but it is not available")
	}
	if n, err := coll.CountDocuments(ctx, doc("x", 1)); err != nil || n != 0 {
		t.Fatalf("%d documents modified (%v), want none", n, err)
	}
}
