package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// subtractRanges against sets of integers: the fresh parts are the ids of
// the ranges outside those done, and done grows by exactly them; the
// extremes of int64 included.
func TestSubtractRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ids := func(rs [][2]int64) map[int64]bool {
		m := map[int64]bool{}
		for _, x := range rs {
			for i := x[0]; ; i++ {
				m[i] = true
				if i == x[1] {
					break
				}
			}
		}
		return m
	}
	for range 2000 {
		base := []int64{0, math.MinInt64, math.MaxInt64 - 40}[r.IntN(3)]
		rnd := func() [][2]int64 {
			var rs [][2]int64
			for range r.IntN(4) {
				lo := base + r.Int64N(30)
				rs = append(rs, [2]int64{lo, lo + r.Int64N(10)})
			}
			return rs
		}
		var done [][2]int64
		seen := map[int64]bool{}
		for range 4 {
			ranges := rnd()
			fresh, all := subtractRanges(ranges, done)
			want := map[int64]bool{}
			for id := range ids(ranges) {
				if !seen[id] {
					want[id] = true
				}
			}
			got := ids(fresh)
			if len(got) != len(want) {
				t.Fatalf("%v minus %v: %v", ranges, done, fresh)
			}
			for id := range want {
				if !got[id] {
					t.Fatalf("%v minus %v: %v misses %d", ranges, done, fresh, id)
				}
			}
			for id := range got {
				seen[id] = true
			}
			if !slices.IsSortedFunc(all, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) }) || len(ids(all)) != len(seen) {
				t.Fatalf("done %v after %v, want the ids %v", all, ranges, seen)
			}
			for i := 1; i < len(all); i++ {
				if all[i][0] <= all[i-1][1] {
					t.Fatalf("done %v overlaps", all)
				}
			}
			done = all
		}
	}
}

// A 2dsphere index of points reads no ancestor cells for a $near; a line
// keyed by a coarser cell, written through another engine over the same
// store or by the backfill of a new index, raises its flag in the catalog
// for every engine, and later $near queries find the line first. The flag
// survives a reopen.
func TestNearCoarseCells(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	open := func(kv storage.KV) *Engine { return openEngineLeased(t, kv, 200*time.Millisecond) }
	a, b := open(kvs[0]), open(kvs[1])
	mustCreateIndex(t, a, "places", `{"loc": "2dsphere"}`, false)
	var docs []bson.Raw
	for i := range 200 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "loc": {"type": "Point", "coordinates": [%g, %g]}}`, i, 0.01*float64(i%20)+0.5, 0.01*float64(i/20)+0.5)))
	}
	if _, _, err := a.Insert("test", "places", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	near := ext(t, `{"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}}`)
	first := func(e *Engine) string {
		t.Helper()
		cur, err := e.Find("test", "places", FindOptions{Filter: near, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		doc, err := cur.Next()
		if err != nil || doc == nil {
			t.Fatalf("%s %v", doc, err)
		}
		return doc.Lookup("_id").String()
	}
	coarse := func(e *Engine) bool {
		return e.Collection("test", "places").FindIndex("loc_2dsphere").coarseCells.Load()
	}
	if got := first(b); got != `{"$numberInt":"0"}` || coarse(a) || coarse(b) {
		t.Fatalf("points only: first %s, coarse cells %v %v", got, coarse(a), coarse(b))
	}
	// A line from (0.1, 0.1) to (0.2, 0.2): keyed by cells coarser than
	// leaves, and closer than every point.
	line := ext(t, `{"_id": "line", "loc": {"type": "LineString", "coordinates": [[0.1, 0.1], [0.2, 0.2]]}}`)
	if _, _, err := a.Insert("test", "places", []bson.Raw{line}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := first(b); got != `"line"` || !coarse(a) || !coarse(b) {
		t.Fatalf("after a line: first %s, coarse cells %v %v", got, coarse(a), coarse(b))
	}
	// A new index's backfill raises it too.
	mustCreateIndex(t, b, "places", `{"loc": "2dsphere", "k": 1}`, false)
	if ix := a.Collection("test", "places").FindIndex("loc_2dsphere_k_1"); ix == nil || !ix.coarseCells.Load() {
		t.Fatalf("backfilled index: %v", ix)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(kvs[0])
	if !coarse(again) || first(again) != `"line"` {
		t.Fatal("the flag did not survive a reopen")
	}
}

// $near against a brute-force oracle over points, lines and polygons
// (clustered and spread, near the poles and the antimeridian): the
// documents come in order of distance, and they are exactly those within
// [$minDistance, $maxDistance], with the distances the oracle computes
// from every document's geometries. On TiKV, whose forced splits make
// thousands of regions of its keys, it runs a fifth of the documents and
// queries (the full size once took minutes on a loaded CI machine and
// exhausted client-go's region-miss backoff).
func TestNearAgainstBruteForce(t *testing.T) {
	e := newTestEngine(t)
	docCount, queries := 3000, 60
	if testkv.TiKV() {
		docCount, queries = 600, 12
	}
	mustCreateIndex(t, e, "near", `{"loc": "2dsphere"}`, false)
	r := rand.New(rand.NewPCG(5, 6))
	coord := func(lng, lat float64) string {
		return fmt.Sprintf("[%g, %g]", math.Mod(lng+540, 360)-180, math.Max(-89.9, math.Min(89.9, lat)))
	}
	var docs []bson.Raw
	for i := range docCount {
		lng, lat := r.Float64()*360-180, r.Float64()*180-90
		if i%2 == 0 { // a cluster around (179, 60)
			lng, lat = 179+r.NormFloat64(), 60+r.NormFloat64()
		}
		var g string
		switch i % 10 {
		case 7:
			g = fmt.Sprintf(`{"type": "LineString", "coordinates": [%s, %s]}`, coord(lng, lat), coord(lng+r.Float64()*3, lat+r.Float64()*3))
		case 8:
			d := r.Float64() * 2
			g = fmt.Sprintf(`{"type": "Polygon", "coordinates": [[%s, %s, %s, %s]]}`, coord(lng, lat), coord(lng+d, lat), coord(lng+d, lat+d), coord(lng, lat))
		default:
			g = fmt.Sprintf(`{"type": "Point", "coordinates": %s}`, coord(lng, lat))
		}
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "loc": %s}`, i, g)))
	}
	if _, werrs, err := e.Insert("test", "near", docs, false, WriteOptions{}); err != nil || len(werrs) > 0 {
		t.Fatal(err, werrs)
	}
	all := findDocs(t, e, "near", FindOptions{})
	for q := range queries {
		lng, lat := r.Float64()*360-180, r.Float64()*180-90
		if q%3 == 0 {
			lng, lat = -179.5, 60.5
		}
		minD, maxD := 0.0, math.Inf(1)
		bounds := ""
		if q%4 == 1 {
			minD = r.Float64() * 1e6
			bounds += fmt.Sprintf(`, "$minDistance": %g`, minD)
		}
		if q%5 == 2 {
			maxD = minD + r.Float64()*3e6
			bounds += fmt.Sprintf(`, "$maxDistance": %g`, maxD)
		}
		center := geo.SpherePoints(bson.RawValue{Type: bson.TypeArray, Value: ext(t, fmt.Sprintf(`{"a": [%g, %g]}`, lng, lat)).Lookup("a").Value})[0]
		// The oracle: every document's distance, from all its geometries.
		distance := func(doc bson.Raw) float64 {
			gs, err := geo.Geometries(doc.Lookup("loc"))
			if err != nil {
				t.Fatal(err)
			}
			best := math.Inf(1)
			for _, g := range gs {
				best = min(best, float64(g.Distance(center))*geo.EarthRadiusMeters)
			}
			return best
		}
		var want []float64
		for _, d := range all {
			if dist := distance(d); dist >= minD && dist <= maxD {
				want = append(want, dist)
			}
		}
		slices.Sort(want)
		limit := []int64{0, 1, 10, 100}[q%4]
		filter := ext(t, fmt.Sprintf(`{"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [%g, %g]}%s}}}`, lng, lat, bounds))
		var got []float64
		for _, doc := range findDocs(t, e, "near", FindOptions{Filter: filter, Limit: limit}) {
			got = append(got, distance(doc))
		}
		if limit > 0 && int64(len(want)) > limit {
			want = want[:limit]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("$near (%g, %g)%s limit %d: %d distances %v, want %d %v", lng, lat, bounds, limit, len(got), head(got), len(want), head(want))
		}
	}
}

func head(xs []float64) []float64 { return xs[:min(len(xs), 12)] }

// $nearSphere over a 2d index against brute force, with legacy pairs
// clustered at high latitude and across the antimeridian: the documents
// come in order of spherical distance and are exactly those within
// $maxDistance. Each round scans the bounding rectangle of its cap,
// which is wider in longitude than the radius over cos(latitude) and
// wraps at the antimeridian (geo_center_sphere2.js, geonear.js).
func TestNearSphereFlatAgainstBruteForce(t *testing.T) {
	e := newTestEngine(t)
	docCount, queries := 2000, 40
	if testkv.TiKV() {
		docCount, queries = 400, 8
	}
	mustCreateIndex(t, e, "flat", `{"loc": "2d"}`, false)
	r := rand.New(rand.NewPCG(7, 8))
	wrap := func(lng float64) float64 { return math.Mod(lng+540, 360) - 180 }
	clamp := func(lat float64) float64 { return math.Max(-90, math.Min(90, lat)) }
	var docs []bson.Raw
	for i := range docCount {
		lng, lat := r.Float64()*360-180, r.Float64()*180-90
		switch i % 3 {
		case 0: // around (40, 72)
			lng, lat = 40+r.NormFloat64()*20, 72+r.NormFloat64()*4
		case 1: // across the antimeridian
			lng, lat = 180+r.NormFloat64()*2, r.NormFloat64()*2
		}
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "loc": [%g, %g]}`, i, wrap(lng), clamp(lat))))
	}
	if _, werrs, err := e.Insert("test", "flat", docs, false, WriteOptions{}); err != nil || len(werrs) > 0 {
		t.Fatal(err, werrs)
	}
	all := findDocs(t, e, "flat", FindOptions{})
	for q := range queries {
		lng, lat := 40.0, 70.0
		if q%2 == 1 {
			lng, lat = 179.5, 0
		}
		lng, lat = wrap(lng+r.NormFloat64()), clamp(lat+r.NormFloat64())
		center := geo.SpherePoints(bson.RawValue{Type: bson.TypeArray, Value: ext(t, fmt.Sprintf(`{"a": [%g, %g]}`, lng, lat)).Lookup("a").Value})[0]
		distance := func(doc bson.Raw) float64 {
			return float64(center.Distance(geo.SpherePoints(doc.Lookup("loc"))[0]))
		}
		maxD, bounds := math.Inf(1), ""
		if q%4 >= 2 {
			maxD = r.Float64() * 0.3
			bounds = fmt.Sprintf(`, "$maxDistance": %g`, maxD)
		}
		var want []float64
		for _, d := range all {
			if dist := distance(d); dist <= maxD {
				want = append(want, dist)
			}
		}
		slices.Sort(want)
		limit := int64(100)
		if int64(len(want)) > limit {
			want = want[:limit]
		}
		filter := ext(t, fmt.Sprintf(`{"loc": {"$nearSphere": [%g, %g]%s}}`, lng, lat, bounds))
		var got []float64
		for _, doc := range findDocs(t, e, "flat", FindOptions{Filter: filter, Limit: limit}) {
			got = append(got, distance(doc))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("$nearSphere (%g, %g)%s: %d distances %v, want %d %v", lng, lat, bounds, len(got), head(got), len(want), head(want))
		}
	}
}

// A $near on a path through an array position ("l.0") measures the
// value the index keys there: the first element, not the others.
func TestNearArrayPosition(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "pos", `{"l.0": "2dsphere"}`, false)
	var docs []bson.Raw
	for i, lngs := range [][2]float64{{3, 0}, {1, 9}, {2, 0.5}} {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "l": [{"type": "Point", "coordinates": [%g, 0]}, {"type": "Point", "coordinates": [%g, 0]}]}`, i, lngs[0], lngs[1])))
	}
	if _, _, err := e.Insert("test", "pos", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	filter := ext(t, `{"l.0": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}}`)
	if got := findIDsIn(t, e, "pos", FindOptions{Filter: filter}, ""); fmt.Sprint(got) != "[1 2 0]" {
		t.Fatalf("$near on l.0: %v, want [1 2 0]", got)
	}
}

// TestNearRecordIDs: the documents of a $near (2dsphere or 2d) carry
// their record ids when asked, as MongoDB's near stage's fetched
// documents do: showRecordId ends each with the record id a plain find
// gives it, and {$meta: "recordId"} projects it.
func TestNearRecordIDs(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "nr", `{"loc": "2dsphere"}`, false)
	mustCreateIndex(t, e, "nr", `{"pt": "2d"}`, false)
	var docs []bson.Raw
	for i := range 4 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "loc": {"type": "Point", "coordinates": [%d, 0]}, "pt": [%d, 0]}`, i, 3-i, 3-i)))
	}
	if _, _, err := e.Insert("test", "nr", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func(o FindOptions, field string) map[string]string {
		t.Helper()
		cur, err := e.Find("test", "nr", o)
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		ids := map[string]string{}
		for {
			d, err := cur.Next()
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				return ids
			}
			rid := d.Lookup(field)
			if rid.Type != bson.TypeBinary {
				t.Fatalf("%s has no record id in %s", d, field)
			}
			ids[d.Lookup("_id").String()] = rid.String()
		}
	}
	want := read(FindOptions{ShowRecordID: true}, "$recordId")
	for _, tc := range []struct {
		filter, field string
		o             FindOptions
	}{
		{`{"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}}`, "$recordId", FindOptions{ShowRecordID: true}},
		{`{"pt": {"$near": [0, 0]}}`, "$recordId", FindOptions{ShowRecordID: true}},
		{`{"loc": {"$nearSphere": [0, 0]}}`, "r", FindOptions{Projection: ext(t, `{"r": {"$meta": "recordId"}}`)}},
	} {
		tc.o.Filter = ext(t, tc.filter)
		if got := read(tc.o, tc.field); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: record ids %v, want %v", tc.filter, got, want)
		}
	}
}
