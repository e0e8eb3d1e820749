package geo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/golang/geo/s1"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/geo/geotest"
)

// The oracles (package geotest) are computed without S2.

func raw(t *testing.T, j string) bson.RawValue {
	t.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(`{"v": `+j+`}`), false, &d); err != nil {
		t.Fatal(err)
	}
	return d.Lookup("v")
}

func TestDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		lng1, lat1 := r.Float64()*360-180, r.Float64()*180-90
		lng2, lat2 := r.Float64()*360-180, r.Float64()*180-90
		g, err := Parse(raw(t, bsonPoint(lng1, lat1)))
		if err != nil {
			t.Fatal(err)
		}
		got := float64(g.Distance(point(lng2, lat2)))
		if want := geotest.Haversine(lng1, lat1, lng2, lat2); math.Abs(got-want) > 1e-9 {
			t.Fatalf("(%g,%g)-(%g,%g): %g, want %g", lng1, lat1, lng2, lat2, got, want)
		}
	}
}

// TestFlatDistances: a 2d distance is MongoDB's (geo/shapes.cpp,
// distance) to the last bit: $geoNear near [20, 40] puts [30, 51] at
// 14.866068747318506 (facet_validate_metadata_dependency.js), which
// math.Hypot rounds to ...504; along an axis it is the difference itself.
func TestFlatDistances(t *testing.T) {
	diff := func(a, b float64) float64 { return a - b } // in float64, not as constants
	for _, c := range []struct {
		pairs [][2]float64
		x, y  float64
		want  float64
	}{
		{[][2]float64{{30, 51}}, 20, 40, 14.866068747318506},
		{[][2]float64{{25, 49}, {23, 51}}, 20, 40, 10.295630140987},
		{[][2]float64{{0, 0.3}}, 0, 0.1, diff(0.3, 0.1)},
		{[][2]float64{{52, 7}}, 51.9999, 7, diff(52, 51.9999)},
	} {
		if got, ok := FlatDistance(c.pairs, c.x, c.y); !ok || got != c.want {
			t.Errorf("%v from (%g, %g): %v, want %v", c.pairs, c.x, c.y, got, c.want)
		}
	}
}

func bsonPoint(lng, lat float64) string {
	b, _ := bson.MarshalExtJSON(bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{lng, lat}}}, false, false)
	return string(b)
}

// Polygons across the antimeridian, around a pole and ordinary ones
// hold the points the winding angle says they hold.
func TestWithinPolygons(t *testing.T) {
	rings := map[string][][2]float64{
		"europe":       {{0, 40}, {20, 40}, {20, 55}, {0, 55}, {0, 40}},
		"antimeridian": {{170, -10}, {-170, -10}, {-170, 10}, {170, 10}, {170, -10}},
		"north pole":   {{0, 80}, {90, 80}, {180, 80}, {-90, 80}, {0, 80}},
		"triangle":     {{-70, -30}, {-40, -35}, {-60, 5}, {-70, -30}},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for name, ring := range rings {
		coords := bson.A{}
		for _, p := range ring {
			coords = append(coords, bson.A{p[0], p[1]})
		}
		spec, _ := bson.MarshalExtJSON(bson.D{{Key: "$geometry", Value: bson.D{{Key: "type", Value: "Polygon"}, {Key: "coordinates", Value: bson.A{coords}}}}}, false, false)
		q, err := ParseWithin("$geoWithin", raw(t, string(spec)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for range 2000 {
			lng, lat := r.Float64()*360-180, r.Float64()*180-90
			want := geotest.Inside(ring, lng, lat)
			if got := q.Matches(raw(t, bsonPoint(lng, lat))); got != want {
				t.Errorf("%s: (%g, %g) within = %v, want %v", name, lng, lat, got, want)
			}
		}
		// The polygon's cells cover every point inside it.
		ranges := Ranges(q.Region())
		for range 200 {
			lng, lat := r.Float64()*360-180, r.Float64()*180-90
			if !geotest.Inside(ring, lng, lat) {
				continue
			}
			g, _ := Parse(raw(t, bsonPoint(lng, lat)))
			cell := g.IndexCells()[0]
			covered := false
			for _, rg := range ranges {
				covered = covered || cell >= rg.Lo && cell <= rg.Hi
			}
			if !covered {
				t.Errorf("%s: (%g, %g) is inside but its cell is outside the ranges", name, lng, lat)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ v, msg string }{
		{`{"type": "Point", "coordinates": [181, 0]}`, "longitude/latitude is out of bounds, lng: 181 lat: 0"},
		{`{"type": "Point", "coordinates": ["a", 0]}`, "Point must only contain numeric elements"},
		{`{"type": "Point", "coordinates": 1}`, "GeoJSON coordinates must be an array"},
		{`{"type": "Blob", "coordinates": []}`, ""},
		{`{"type": "LineString", "coordinates": [[0, 0]]}`, ""},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]]}`, ""},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}`, ""},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [2, 2], [2, 0], [0, 2], [0, 0]]]}`, ""},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]], [[5, 5], [6, 5], [6, 6], [5, 5]]]}`, ""},
		{`[0, 91]`, "can't project geometry into spherical CRS: [ 0, 91 ]"},
		{`{"latitude": -77.85059, "longitude": 166.66534}`, "can't project geometry into spherical CRS: { latitude: -77.85059, longitude: 166.66534 }"},
		{`{"type": "Point", "coordinates": [40, 5], "crs": {"type": "name", "properties": {"name": "EPSG:2000"}}}`, "Unknown CRS name: EPSG:2000"},
		{`{"type": "Point", "coordinates": [40, 5], "crs": {"type": "name"}}`, `CRS must have field "properties" which is an object`},
		{`{"type": "LineString", "coordinates": [[0, 0], [1, 1]], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}`,
			"Strict winding order is only supported by polygon"},
		{`"x"`, ""},
		// Values quoted as GeoParser quotes them (BSONElement::toString);
		// a geometry of a collection by its position (geo_invalid_polygon.js).
		{`{"type": "point", "coordinates": [0, 1]}`, `unknown GeoJSON type: { type: "point", coordinates: [ 0, 1 ] }`},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [-2, -1], [0, 0]]]}`,
			"Loop is not valid: [ [ 0, 0 ], [ 0, 1 ], [ 1, 1 ], [ -2, -1 ], [ 0, 0 ] ] Edges 0 and 2 cross"},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}`,
			"Loop is not closed, first vertex does not equal last vertex: [ [ 0, 0 ], [ 1, 0 ], [ 1, 1 ], [ 0, 1 ] ]"},
		{`{"type": "LineString", "coordinates": [[0.5, 0], [0.5, 0]]}`, "GeoJSON LineString must have at least 2 vertices: [ [ 0.5, 0 ], [ 0.5, 0 ] ]"},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]], [[5, 5], [6, 5], [6, 6], [5, 5]]]}`,
			"Secondary loops not contained by first exterior loop - secondary loops must be holes: [ [ 5, 5 ], [ 6, 5 ], [ 6, 6 ], [ 5, 5 ] ] first loop: [ [ 0, 0 ], [ 1, 0 ], [ 1, 1 ], [ 0, 0 ] ]"},
		{`{"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [0, 0]}, 5]}`, `Element 1 of "geometries" is not an object`},
	} {
		_, err := Parse(raw(t, tt.v))
		if err == nil || tt.msg != "" && err.Error() != tt.msg {
			t.Errorf("%s: %v, want %q", tt.v, err, tt.msg)
		}
	}
	// GeoParser refuses a hole sharing more than one vertex with the loop
	// around it (S2Polygon::IsNormalized) and a hole within a hole
	// (geo_s2polywithholes.js).
	for _, tt := range []struct{ v, prefix string }{
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], [[0, 0], [0.1, 0.9], [1, 1], [0.9, 0.1], [0, 0]]]}`,
			"Loop 1 shares more than one vertex with its parent loop 0: "},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], [[0.1, 0.1], [0.1, 0.9], [0.9, 0.9], [0.9, 0.1], [0.1, 0.1]], [[0.2, 0.2], [0.2, 0.8], [0.8, 0.8], [0.8, 0.2], [0.2, 0.2]]]}`,
			"Polygon interior loops cannot be nested: "},
	} {
		if _, err := Parse(raw(t, tt.v)); err == nil || !strings.HasPrefix(err.Error(), tt.prefix) {
			t.Errorf("%s: %v, want %q...", tt.v, err, tt.prefix)
		}
	}
	for _, v := range []string{
		`{"type": "Polygon", "coordinates": [[[0, 0], [3, 0], [3, 3], [0, 3], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 1]]]}`,
		// A hole may touch its shell at one vertex.
		`{"type": "Polygon", "coordinates": [[[0, 0], [3, 0], [3, 3], [0, 3], [0, 0]], [[0, 0], [2, 1], [1, 2], [0, 0]]]}`,
		// Two holes side by side.
		`{"type": "Polygon", "coordinates": [[[0, 0], [3, 0], [3, 3], [0, 3], [0, 0]], [[0.5, 0.5], [1, 0.5], [1, 1], [0.5, 0.5]], [[2, 2], [2.5, 2], [2.5, 2.5], [2, 2]]]}`,
		// Repeated vertices are dropped, the closing one too (geo_s2dupe_points.js).
		`{"type": "Polygon", "coordinates": [[[0, 0], [3, 0], [3, 3], [0, 3], [0, 0], [0, 0]], [[1, 1], [1, 1], [2, 1], [2, 2], [1, 1], [1, 1]]]}`,
		`{"type": "MultiPoint", "coordinates": [[0, 0], [1, 1]]}`,
		`{"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [0, 0]}, {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}]}`,
		`{"x": 1, "y": 2}`,
		`{"type": "Point", "coordinates": [40, 5], "crs": {"type": "name", "properties": {"name": "EPSG:4326"}}}`,
	} {
		if _, err := Parse(raw(t, v)); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// A $near round's ranges hold every point within the radius they claim
// to cover, at least the one asked (checked by the haversine oracle), at
// every scale and near the poles.
func TestNearRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		clng, clat := r.Float64()*360-180, r.Float64()*180-90
		radius := math.Pow(10, -7+r.Float64()*7) // 1e-7 to 1 radian
		ranges, covered := NearRanges(point(clng, clat), radius, true)
		if covered < radius {
			t.Fatalf("center (%g, %g) radius %g: covers only %g", clng, clat, radius, covered)
		}
		radius = covered
		for range 50 {
			// Within the radius, mostly near its edge.
			lng, lat := geotest.Destination(clng, clat, r.Float64()*2*math.Pi, radius*(1-r.Float64()*r.Float64()))
			if geotest.Haversine(clng, clat, lng, lat) > radius {
				continue
			}
			g, err := Parse(raw(t, bsonPoint(lng, lat)))
			if err != nil {
				t.Fatal(err)
			}
			cell := g.IndexCells()[0]
			in := false
			for _, rg := range ranges {
				in = in || cell >= rg.Lo && cell <= rg.Hi
			}
			if !in {
				t.Fatalf("center (%g, %g) radius %g: (%g, %g) is within but outside the ranges", clng, clat, radius, lng, lat)
			}
		}
	}
}

// TestWithinBoundary: as MongoDB's GeometryContainer::contains, a point on
// a polygon's vertex or edge, a line along its edges and a point on the
// rim of a $centerSphere are within; a chord between two vertices outside
// a concave polygon is not (geo_s2polywithholes.js, geo_s2within.js).
func TestWithinBoundary(t *testing.T) {
	square := `{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}}`
	concave := `{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [4, 0], [4, 4], [2, 1], [0, 4], [0, 0]]]}}`
	bigCap := `{"$centerSphere": [[-59.80246852929814, -2.3633072488322853], 2.768403272464979]}`
	bigCap2 := `{"$centerSphere": [[-61.52266094410311, 17.79937981451866], 2.9592242752161573]}`
	smallCap := `{"$centerSphere": [[0, 0], 0.1]}`
	collection := `{"$geometry": {"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [5, 5]},
		{"type": "LineString", "coordinates": [[3, 3], [4, 4]]}, {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}]}}`
	for _, tc := range []struct {
		within, doc string
		want        bool
	}{
		{square, bsonPoint(0, 0), true},
		{square, bsonPoint(0, 0.5), true},
		{square, bsonPoint(0.5, 0.5), true},
		{square, bsonPoint(1.5, 0.5), false},
		{square, `{"type": "LineString", "coordinates": [[0, 0], [1, 0], [1, 1]]}`, true},
		{square, `{"type": "MultiPoint", "coordinates": [[0, 0], [1, 1]]}`, true},
		{square, `{"type": "LineString", "coordinates": [[0, 0], [2, 0]]}`, false},
		{concave, `{"type": "LineString", "coordinates": [[4, 4], [0, 4]]}`, false},
		{concave, `{"type": "LineString", "coordinates": [[0, 0], [4, 0]]}`, true},
		// A cap larger than a hemisphere holding a line's or a polygon's
		// vertices but not its edges (geo_s2within_line_polygon_sphere.js).
		{bigCap, `{"type": "LineString", "coordinates": [[96.328125, 5.61598581915534], [153.984375, -6.315298538330033]]}`, false},
		{bigCap2, `{"type": "Polygon", "coordinates": [[[98.96484375, -11.350796722383672], [135.35156249999997, -11.350796722383672], [135.35156249999997, 0.8788717828324276], [98.96484375, 0.8788717828324276], [98.96484375, -11.350796722383672]]]}`, false},
		{bigCap, `{"type": "LineString", "coordinates": [[-60, 0], [-50, 0]]}`, true},
		{smallCap, `{"type": "LineString", "coordinates": [[0, 0], [1, 1]]}`, true},
		{smallCap, `{"type": "LineString", "coordinates": [[0, 0], [10, 0]]}`, false},
		// A GeometryCollection holds what one of its polygons holds; its
		// points and lines hold nothing (GeometryContainer::contains).
		{collection, bsonPoint(0.5, 0.5), true},
		{collection, bsonPoint(5, 5), false},
		{collection, bsonPoint(3, 3), false},
		{collection, `{"type": "LineString", "coordinates": [[0, 0], [1, 1]]}`, true},
	} {
		q, err := ParseWithin("$geoWithin", raw(t, tc.within))
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Matches(raw(t, tc.doc)); got != tc.want {
			t.Errorf("%s within %s = %v, want %v", tc.doc, tc.within, got, tc.want)
		}
	}
}

// ParseNear reads the forms MongoDB's GeoNearExpression accepts, with
// their units: a legacy pair (plane units for $near, radians for
// $nearSphere), [x, y, maxDistance], a GeoJSON point bare or under
// $geometry (meters), and $geoNear as $near.
func TestParseNear(t *testing.T) {
	tests := []struct {
		op, ops        string
		legacy, meters bool
		x, y, min, max float64 // max -1: none
	}{
		{"$near", `{"$near": [1, 2]}`, true, false, 1, 2, 0, -1},
		{"$near", `{"$near": [1, 2, 3]}`, true, false, 1, 2, 0, 3},
		{"$near", `{"$near": {"x": 1, "y": 2, "d": 3}}`, true, false, 1, 2, 0, 3},
		{"$near", `{"$near": [1, 2, 3], "$maxDistance": 5}`, true, false, 1, 2, 0, 5},
		{"$near", `{"$maxDistance": 5, "$near": [1, 2, 3]}`, true, false, 1, 2, 0, 3},
		{"$geoNear", `{"$geoNear": [1, 2], "$minDistance": 1}`, true, false, 1, 2, 1, -1},
		{"$nearSphere", `{"$nearSphere": [1, 2], "$maxDistance": 0.5}`, false, false, 1, 2, 0, 0.5},
		{"$nearSphere", `{"$nearSphere": {"type": "Point", "coordinates": [1, 2]}, "$minDistance": 10}`, false, true, 1, 2, 10, -1},
		{"$near", `{"$near": {"type": "Point", "coordinates": [1, 2]}, "$maxDistance": 10, "$uniqueDocs": true}`, false, true, 1, 2, 0, 10},
		{"$near", `{"$near": {"$geometry": {"type": "Point", "coordinates": [1, 2]}, "$maxDistance": 10}}`, false, true, 1, 2, 0, 10},
		{"$geoNear", `{"$geoNear": {"$geometry": {"type": "Point", "coordinates": [1, 2]}}}`, false, true, 1, 2, 0, -1},
	}
	for _, tc := range tests {
		var ops bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.ops), false, &ops); err != nil {
			t.Fatal(err)
		}
		q, err := ParseNear(tc.op, ops)
		if err != nil {
			t.Errorf("%s: %v", tc.ops, err)
			continue
		}
		units := 1.0
		if tc.meters {
			units = EarthRadiusMeters
		}
		max := float64(q.Max) * units
		if q.Max == s1.InfAngle() {
			max = -1
		}
		if q.Legacy != tc.legacy || q.Meters != tc.meters || q.CenterX != tc.x || q.CenterY != tc.y ||
			math.Abs(float64(q.Min)*units-tc.min) > 1e-9 || math.Abs(max-tc.max) > 1e-9 {
			t.Errorf("%s: legacy %v meters %v center (%g, %g) min %g max %g", tc.ops, q.Legacy, q.Meters, q.CenterX, q.CenterY, float64(q.Min)*units, max)
		}
	}
}

// A 2d index's options fail as GeoHashConverter::createFromDoc words it.
func TestNewFlatErrors(t *testing.T) {
	num := func(j string) bson.RawValue { return raw(t, j) }
	for _, tt := range []struct {
		o   FlatOptions
		msg string
	}{
		{FlatOptions{Bits: num(`33`)}, "bits for hash must be > 0 and <= 32, but 33 bits were specified"},
		{FlatOptions{Bits: num(`0.5`)}, "bits for hash must be > 0 and <= 32, but 0 bits were specified"},
		{FlatOptions{Min: num(`1`), Max: num(`1`)}, "region for hash must be valid and have positive area, but [1, 1] was specified"},
		{FlatOptions{Min: num(`10`), Max: num(`9.5`)}, "region for hash must be valid and have positive area, but [10, 9.5] was specified"},
		{FlatOptions{Min: num(`{"$numberDouble": "-Infinity"}`)}, "region for hash must be valid and have positive area, but [-inf, 180] was specified"},
		{FlatOptions{Min: num(`-1e308`), Max: num(`1e308`)}, "range [-1e+308, 1e+308] is too small."},
	} {
		if _, err := NewFlat(tt.o); err == nil || err.Error() != tt.msg {
			t.Errorf("%v: %v, want %q", tt.o, err, tt.msg)
		}
	}
	if f, err := NewFlat(FlatOptions{Bits: num(`32.5`)}); err != nil || f.Bits != 32 {
		t.Errorf("bits 32.5: %v %v", f, err)
	}
}

// A query's $geometry is refused with GeoParser's reasons: the strict-
// winding crs on anything but a polygon (parseGeoJSONCRS), an unknown
// type quoted as BSONObj::toString prints it (geo_big_polygon3.js).
func TestQueryGeometryErrors(t *testing.T) {
	for _, tt := range []struct{ v, msg string }{
		{`{"$geometry": {"type": "Point", "coordinates": [-97.9, 0], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}`,
			"Strict winding order is only supported by polygon"},
		{`{"$geometry": {"coordinates": [0, 0], "type": 5}}`, "unknown GeoJSON type: { coordinates: [ 0, 0 ], type: 5 }"},
	} {
		if _, err := ParseIntersects(raw(t, tt.v)); err == nil || err.Error() != tt.msg {
			t.Errorf("%s: %v, want %q", tt.v, err, tt.msg)
		}
	}
}
