package engine

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"

	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/storage"
)

// geoIndexFor is a geo index of the kind asked (2dsphere when flat is
// false, 2d when true) on path whose fields before it the filter pins by
// equality, with those values encoded; nil when none.
func geoIndexFor(c *Collection, f *query.Filter, path string, flat bool) (*Index, []byte) {
	for _, ix := range c.Indexes() {
		g := ix.geoField()
		if ix.Hidden || g < 0 || ix.Fields[g].Path != path || ix.Fields[g].Flat != flat {
			continue
		}
		var fields []string
		for _, pf := range ix.Fields[:g] {
			fields = append(fields, pf.Path)
		}
		vals, _, ok := equalityPrefix(f, fields)
		if !ok {
			continue
		}
		var enc []byte
		for _, v := range vals {
			enc = keyenc.AppendField(enc, v, false)
		}
		return ix, enc
	}
	return nil, nil
}

// planGeo plans a geo query an index serves. $near and $nearSphere need
// one on their path (291 otherwise): a GeoJSON point a 2dsphere index, a
// legacy $near (plane distances) a 2d index, a legacy $nearSphere either.
// $geoWithin reads a 2dsphere or 2d index on its path, $geoIntersects a
// 2dsphere one, when there is one. A nil plan leaves the query to the
// planner (the filter then tests the geometry of each document it reads),
// as does a hint (unhinted false) for $geoWithin and $geoIntersects.
func planGeo(c *Collection, q compiledFind, unhinted bool) (*planner.Plan, error) {
	near, err := q.filter.GeoNear()
	if err != nil {
		return nil, err
	}
	if near != nil {
		gq := near.Geo()
		var ix *Index
		var prefix []byte
		if !gq.Legacy {
			ix, prefix = geoIndexFor(c, q.filter, near.Path, false)
		}
		if ix == nil && (gq.Legacy || !gq.Meters) {
			ix, prefix = geoIndexFor(c, q.filter, near.Path, true)
		}
		if ix == nil {
			return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: unable to find index for $geoNear query")
		}
		planned := ix.planned()
		ns := newNearScan(ix, prefix, gq)
		scan := &planner.GeoScan{Field: near.Path, Near: true, Flat: ix.flat != nil, Ref: ns,
			FirstRound: func() [][2]int64 { return ns.ranges(float64(gq.Min) + ns.initial) }}
		return planner.GeoPlan(&planned, scan, nil), nil
	}
	if !unhinted {
		return nil, nil
	}
	clauses := []*query.Node{q.filter.Root()}
	if r := q.filter.Root(); r.Kind == query.KindAnd {
		clauses = r.Children
	}
	for _, n := range clauses {
		if n.Kind != query.KindGeo {
			continue
		}
		var ix *Index
		var prefix []byte
		var ranges [][2]int64
		if ix, prefix = geoIndexFor(c, q.filter, n.Path, false); ix != nil {
			ranges = cellRanges(geo.Ranges(n.Geo().Region()))
		} else if ix, prefix = geoIndexFor(c, q.filter, n.Path, true); ix != nil && n.Geo().Op == geo.Within {
			ranges = hashRanges(ix.flat.Ranges(n.Geo().FlatBox()))
		} else {
			continue
		}
		planned := ix.planned()
		scan := &planner.GeoScan{Field: n.Path, Flat: ix.flat != nil, Cells: ranges}
		return planner.GeoPlan(&planned, scan, keyIntervals(prefix, ranges)), nil
	}
	return nil, nil
}

// cellRanges are S2 cell ranges as the NumberLongs keys hold (cells of
// faces 4 and 5 are negative).
func cellRanges(rs []geo.Range) [][2]int64 {
	out := make([][2]int64, len(rs))
	for i, r := range rs {
		out[i] = [2]int64{int64(r.Lo), int64(r.Hi)}
	}
	return out
}

// hashRanges are 2d geohash ranges as the NumberLongs keys hold.
func hashRanges(rs []geo.HashRange) [][2]int64 {
	out := make([][2]int64, len(rs))
	for i, r := range rs {
		out[i] = [2]int64{hashKey(r.Lo), hashKey(r.Hi)}
	}
	return out
}

// keyIntervals are the index intervals of key ranges under an encoded
// prefix, in key order.
func keyIntervals(prefix []byte, ranges [][2]int64) []planner.Interval {
	ivs := make([]planner.Interval, 0, len(ranges))
	for _, r := range ranges {
		ivs = append(ivs, keyInterval(prefix, r[0], r[1]))
	}
	slices.SortFunc(ivs, func(a, b planner.Interval) int { return bytes.Compare(a.Lo, b.Lo) })
	return ivs
}

// keyInterval holds the keys from lo to hi (NumberLongs) under prefix.
func keyInterval(prefix []byte, lo, hi int64) planner.Interval {
	return planner.Interval{
		Lo: keyenc.AppendField(bytes.Clone(prefix), int64Value(lo), false),
		Hi: keyenc.PrefixEnd(keyenc.AppendField(bytes.Clone(prefix), int64Value(hi), false)),
	}
}

func int64Value(n int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, n)}
}

// hashKey is the NumberLong a 2d key holds for a geohash: the hash with
// its top bit flipped, so that NumberLongs order as the hashes do.
func hashKey(h uint64) int64 { return int64(h ^ 1<<63) }

// nearScan is what a $near plan's source needs: the key ranges holding
// every match within a radius of the center (under prefix), the distance
// of a document's values, the radius past which the ranges hold every
// key, and Meta's distance per unit of radius (meters per radian from a
// GeoJSON point).
type nearScan struct {
	q       *geo.Query
	parts   []string
	prefix  []byte
	ranges  func(radius float64) [][2]int64
	dist    func(v bson.RawValue) (float64, bool)
	initial float64
	full    float64
	units   float64
	// density, when set, estimates a first radius from the keys near the
	// center (0: none found nearby).
	density func(r storage.Reader, prefix []byte) (float64, error)
	// beyond, when set, reports that an index entry's key lies farther
	// than radius from the center, so its document need not be read yet.
	beyond func(value []byte, radius float64) bool
}

// newNearScan describes the $near q on ix, a 2dsphere index (spherical
// distances in radians over S2 cells) or a 2d index (over geohash boxes:
// plane distances for a legacy $near, radians for $nearSphere).
func newNearScan(ix *Index, prefix []byte, q *geo.Query) *nearScan {
	ns := &nearScan{q: q, parts: ix.Fields[ix.geoField()].Parts, prefix: prefix, units: 1, initial: 1e-5, full: math.Pi}
	if q.Meters {
		ns.units = geo.EarthRadiusMeters
	}
	ns.dist = func(v bson.RawValue) (float64, bool) {
		best := s1.InfAngle()
		gs, err := geo.Geometries(v)
		for _, g := range gs {
			best = min(best, g.Distance(q.Center))
		}
		if err != nil {
			// A 2d index's pairs may lie outside the sphere's bounds.
			for _, p := range geo.SpherePoints(v) {
				best = min(best, q.Center.Distance(p))
			}
		}
		return float64(best), best < s1.InfAngle()
	}
	switch f := ix.flat; {
	case f == nil:
		ns.ranges = func(r float64) [][2]int64 {
			return cellRanges(geo.NearRanges(q.Center, r))
		}
		ns.density = func(r storage.Reader, ixPrefix []byte) (float64, error) {
			return nearDensity(r, append(bytes.Clone(ixPrefix), prefix...), q.Center)
		}
		// A point's key is its leaf cell, within a centimeter of it.
		pos := strconv.Itoa(ix.geoField())
		ns.beyond = func(value []byte, radius float64) bool {
			n, ok := entryValues(value).Lookup(pos).Int64OK()
			cell := s2.CellID(n)
			return ok && cell.IsLeaf() && float64(q.Center.Distance(cell.Point())) > radius+leafSlack
		}
	case q.Legacy:
		ns.initial, ns.full = (f.Max-f.Min)/f.Cells(), (f.Max-f.Min)*2
		ns.dist = func(v bson.RawValue) (float64, bool) {
			return geo.FlatDistance(geo.LegacyPairs(v), q.CenterX, q.CenterY)
		}
		ns.ranges = func(r float64) [][2]int64 {
			return hashRanges(f.Ranges(q.CenterX-r, q.CenterY-r, q.CenterX+r, q.CenterY+r))
		}
	default:
		ns.ranges = func(r float64) [][2]int64 {
			deg := r * 180 / math.Pi
			lng := deg / math.Cos(q.CenterY*math.Pi/180)
			if math.Abs(q.CenterY)+deg >= 90 || lng >= 180 {
				lng = 360
			}
			return hashRanges(f.Ranges(q.CenterX-lng, q.CenterY-deg, q.CenterX+lng, q.CenterY+deg))
		}
	}
	return ns
}

// geoNearSource yields the documents of a $near plan by distance: it
// reads the index's cells within a radius of the center, doubling it each
// round (MongoDB's GEO_NEAR_2DSPHERE does the same), and yields, after
// each round, the documents found so far that lie within the radius. A
// document is read once however many rounds meet its keys.
type geoNearSource struct {
	r      storage.Reader
	collID uint32
	p      *planner.Plan
	ns     *nearScan
	prefix []byte // the index's storage prefix
	stats  *OpStats
	ctx    context.Context
	closer func() error

	seen   map[string]struct{}
	radius float64
	done   bool
	found  []nearDoc // sorted by distance, beyond the radius read
	ready  []nearDoc
	cur    nearDoc
}

type nearDoc struct {
	doc  bson.Raw
	dist float64
	loc  bson.RawValue
}

func newGeoNearSource(ctx context.Context, r storage.Reader, c *Collection, p *planner.Plan, stats *OpStats, closer func() error) *geoNearSource {
	return &geoNearSource{r: r, collID: c.ID, p: p, ns: p.Geo.Ref.(*nearScan), prefix: indexPrefix(c.ID, indexOf(p).ID),
		stats: stats, ctx: ctx, closer: closer, seen: map[string]struct{}{}}
}

func (s *geoNearSource) Next() (bson.Raw, error) {
	for len(s.ready) == 0 {
		if s.done {
			return nil, nil
		}
		if err := s.round(); err != nil {
			return nil, err
		}
	}
	s.cur, s.ready = s.ready[0], s.ready[1:]
	return s.cur.doc, nil
}

// round reads the cells within the next radius and moves the documents
// within it to ready.
func (s *geoNearSource) round() error {
	ns := s.ns
	maxD := float64(ns.q.Max)
	if s.radius == 0 {
		r0 := ns.initial
		if ns.density != nil {
			d, err := ns.density(s.r, s.prefix)
			if err != nil {
				return err
			}
			r0 = max(r0, d)
		}
		s.radius = float64(ns.q.Min) + r0
	} else {
		s.radius *= 2
	}
	if s.radius >= maxD || s.radius >= ns.full {
		s.radius, s.done = min(maxD, ns.full), true
	}
	ivs := keyIntervals(ns.prefix, ns.ranges(s.radius))
	var ids []string
	err := scanEntries(s.ctx, s.r, s.prefix, ivs, s.stats, func(value []byte) {
		if ns.beyond != nil && ns.beyond(value, s.radius) {
			return // a later round reads it again
		}
		id := string(entryID(value))
		if _, ok := s.seen[id]; !ok {
			s.seen[id] = struct{}{}
			ids = append(ids, id)
		}
	})
	if err != nil {
		return err
	}
	for i, id := range ids {
		if i%256 == 255 {
			if err := mongoerr.Interruption(s.ctx); err != nil {
				return err
			}
		}
		doc, found, err := s.r.Get(docKeyFromEncodedID(s.collID, []byte(id)))
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		s.stats.DocsExamined++
		if d, loc, ok := s.distance(doc); ok {
			s.found = append(s.found, nearDoc{doc: bytes.Clone(doc), dist: d, loc: loc})
		}
	}
	slices.SortStableFunc(s.found, func(a, b nearDoc) int { return cmp.Compare(a.dist, b.dist) })
	k := 0
	for k < len(s.found) && (s.done || s.found[k].dist <= s.radius) {
		k++
	}
	s.ready, s.found = s.found[:k], s.found[k:]
	return nil
}

// distance is the distance from the center to the closest geometry at
// the field's path in doc, and that geometry's value, when it lies
// within the query's bounds.
func (s *geoNearSource) distance(doc bson.Raw) (float64, bson.RawValue, bool) {
	q := s.ns.q
	best, bestLoc, ok := math.Inf(1), bson.RawValue{}, false
	eachAtPath(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, s.ns.parts, func(v bson.RawValue) {
		for _, loc := range locations(v) {
			if d, found := s.ns.dist(loc); found && d >= float64(q.Min) && d <= float64(q.Max) && d < best {
				best, bestLoc, ok = d, loc, true
			}
		}
	})
	return best, bestLoc, ok
}

// locations are the locations of a field's value: each element of an
// array of pairs or geometries (a multi-location field), else the value.
// The closest one is the location $geoNear's includeLocs reports.
func locations(v bson.RawValue) []bson.RawValue {
	if v.Type != bson.TypeArray {
		return []bson.RawValue{v}
	}
	vals, _ := v.Array().Values()
	if len(vals) == 0 || vals[0].Type != bson.TypeArray && vals[0].Type != bson.TypeEmbeddedDocument {
		return []bson.RawValue{v}
	}
	return vals
}

// eachAtPath calls fn with each value at parts below v, through arrays of
// documents.
func eachAtPath(v bson.RawValue, parts []string, fn func(bson.RawValue)) {
	if len(parts) == 0 {
		fn(v)
		return
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		if child, err := v.Document().LookupErr(parts[0]); err == nil {
			eachAtPath(child, parts[1:], fn)
		}
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		for _, e := range vals {
			if e.Type == bson.TypeEmbeddedDocument {
				eachAtPath(e, parts, fn)
			}
		}
	}
}

// Meta carries the distance and location of the document Next returned
// last: meters for a GeoJSON center, radians for a legacy one.
func (s *geoNearSource) Meta() docsrc.Meta {
	return docsrc.Meta{GeoNearDistance: s.cur.dist * s.ns.units, GeoNearPoint: s.cur.loc, HasGeoNear: true}
}

func (s *geoNearSource) Close() error {
	if s.closer != nil {
		return s.closer()
	}
	return nil
}

// geoNearFilter is the find a $geoNear stage's search runs on c: its
// query and a $nearSphere (or, from a legacy pair without spherical, a
// flat $near) on its key, or on the field of c's one 2dsphere index.
func geoNearFilter(c *Collection, g *aggregate.GeoNear) (bson.Raw, error) {
	key := g.Key
	if key == "" && c != nil {
		var paths []string
		for _, ix := range c.Indexes() {
			if f := ix.geoField(); f >= 0 && !ix.Hidden {
				paths = append(paths, ix.Fields[f].Path)
			}
		}
		switch len(paths) {
		case 0:
			return nil, mongoerr.New(mongoerr.IndexNotFound, "$geoNear requires a 2d or 2dsphere index, but none were found")
		case 1:
			key = paths[0]
		default:
			return nil, mongoerr.New(mongoerr.IndexNotFound, "There is more than one 2dsphere index on %s.%s; unsure which to use for $geoNear", c.DB, c.Name)
		}
	}
	op := "$nearSphere"
	var near bson.D
	if d, ok := g.Near.DocumentOK(); ok && d.Lookup("type").Type == bson.TypeString {
		near = bson.D{{Key: "$geometry", Value: g.Near}}
	} else if !g.Spherical {
		op = "$near"
	}
	bounds := bson.D{}
	if g.MinDistance.Type != 0 {
		bounds = append(bounds, bson.E{Key: "$minDistance", Value: g.MinDistance})
	}
	if g.MaxDistance.Type != 0 {
		bounds = append(bounds, bson.E{Key: "$maxDistance", Value: g.MaxDistance})
	}
	var cond bson.D
	if near != nil {
		cond = bson.D{{Key: op, Value: append(near, bounds...)}}
	} else {
		cond = append(bson.D{{Key: op, Value: g.Near}}, bounds...)
	}
	clauses := bson.A{bson.D{{Key: key, Value: cond}}}
	if len(g.Query) > 5 {
		clauses = append(bson.A{g.Query}, clauses...)
	}
	return bson.Marshal(bson.D{{Key: "$and", Value: clauses}})
}

// leafSlack bounds the distance between a point and its leaf cell's
// center, in radians (leaf cells are about a centimeter wide).
const leafSlack = 1e-8

// nearDensity estimates how far a $near must look around center to meet
// a few keys, as MongoDB's GEO_NEAR_2DSPHERE does before its first round:
// the edge of the finest cell around the center (from level 24 up, every
// other level) holding a key; 0 when none does below level 4. Each level
// costs one seek.
func nearDensity(r storage.Reader, prefix []byte, center s2.Point) (float64, error) {
	leaf := s2.CellIDFromLatLng(s2.LatLngFromPoint(center))
	it, err := r.NewIter(prefix, keyenc.PrefixEnd(prefix))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	for level := 24; level >= 4; level -= 2 {
		cell := leaf.Parent(level)
		iv := keyInterval(prefix, int64(cell.RangeMin()), int64(cell.RangeMax()))
		if it.SeekGE(iv.Lo); it.Valid() && bytes.Compare(it.Key(), iv.Hi) < 0 {
			return s2.AvgEdgeMetric.Value(level), nil
		}
	}
	return 0, it.Error()
}
