package engine

import (
	"bytes"
	"context"
	"math"
	"slices"

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

// geoIndexFor is a 2dsphere index on path whose fields before it the
// filter pins by equality, with those values encoded; nil when none.
func geoIndexFor(c *Collection, f *query.Filter, path string) (*Index, []byte, bson.D) {
	for _, ix := range c.Indexes() {
		g := ix.geoField()
		if ix.Hidden || g < 0 || ix.Fields[g].Path != path {
			continue
		}
		var fields []string
		for _, pf := range ix.Fields[:g] {
			fields = append(fields, pf.Path)
		}
		vals, shown, ok := equalityPrefix(f, fields)
		if !ok {
			continue
		}
		var enc []byte
		for _, v := range vals {
			enc = keyenc.AppendField(enc, v, false)
		}
		return ix, enc, shown
	}
	return nil, nil, nil
}

// planGeo plans a geo query an index serves: $near and $nearSphere need
// a 2dsphere index on their path (291 otherwise, and always for a flat
// $near on a legacy pair, which needs a 2d index); $geoWithin and
// $geoIntersects at the top level read one when there is one. A nil plan
// leaves the query to the planner (the filter then tests the geometry of
// each document it reads), as does a hint (unhinted false) for them.
func planGeo(c *Collection, q compiledFind, unhinted bool) (*planner.Plan, error) {
	near, err := q.filter.GeoNear()
	if err != nil {
		return nil, err
	}
	if near != nil {
		gq := near.Geo()
		ix, prefix, _ := geoIndexFor(c, q.filter, near.Path)
		if ix == nil || gq.Legacy {
			return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: unable to find index for $geoNear query")
		}
		planned := ix.planned()
		scan := &planner.GeoScan{Field: near.Path, Near: true, Ref: &nearScan{q: gq, prefix: prefix, parts: ix.Fields[ix.geoField()].Parts}}
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
		ix, prefix, _ := geoIndexFor(c, q.filter, n.Path)
		if ix == nil {
			continue
		}
		ranges := geo.Ranges(n.Geo().Region())
		scan := &planner.GeoScan{Field: n.Path}
		ivs := geoIntervals(prefix, ranges)
		for _, r := range ranges {
			scan.Cells = append(scan.Cells, [2]int64{int64(r.Lo), int64(r.Hi)})
		}
		planned := ix.planned()
		return planner.GeoPlan(&planned, scan, ivs), nil
	}
	return nil, nil
}

// geoIntervals are the index intervals of cell ranges under an encoded
// prefix, in key order (cells of faces 4 and 5 are negative NumberLongs).
func geoIntervals(prefix []byte, ranges []geo.Range) []planner.Interval {
	ivs := make([]planner.Interval, 0, len(ranges))
	for _, r := range ranges {
		lo := keyenc.AppendField(bytes.Clone(prefix), cellValue(r.Lo), false)
		hi := keyenc.PrefixEnd(keyenc.AppendField(bytes.Clone(prefix), cellValue(r.Hi), false))
		ivs = append(ivs, planner.Interval{Lo: lo, Hi: hi})
	}
	slices.SortFunc(ivs, func(a, b planner.Interval) int { return bytes.Compare(a.Lo, b.Lo) })
	return ivs
}

func cellValue(c s2.CellID) bson.RawValue {
	return bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, int64(c))}
}

// nearScan is what a $near plan's source needs.
type nearScan struct {
	q      *geo.Query
	prefix []byte
	parts  []string
}

// initialNearRadius is the first radius a $near search reads (about 60 m).
const initialNearRadius = s1.Angle(1e-5)

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
	radius s1.Angle
	done   bool
	found  []nearDoc // sorted by distance, beyond the radius read
	ready  []nearDoc
	cur    nearDoc
}

type nearDoc struct {
	doc  bson.Raw
	dist s1.Angle
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
	q := s.ns.q
	if s.radius == 0 {
		s.radius = q.Min + initialNearRadius
	} else {
		s.radius *= 2
	}
	if s.radius >= q.Max || s.radius >= math.Pi {
		s.radius, s.done = min(q.Max, math.Pi), true
	}
	ivs := geoIntervals(s.ns.prefix, geo.Ranges(s2.CapFromCenterAngle(q.Center, s.radius)))
	it, err := s.r.NewIter(s.prefix, keyenc.PrefixEnd(s.prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	n := 0
	for _, iv := range ivs {
		lo, hi := append(bytes.Clone(s.prefix), iv.Lo...), append(bytes.Clone(s.prefix), iv.Hi...)
		for it.SeekGE(lo); it.Valid() && bytes.Compare(it.Key(), hi) < 0; it.Next() {
			if n++; n%256 == 0 {
				if err := mongoerr.Interruption(s.ctx); err != nil {
					return err
				}
			}
			s.stats.KeysExamined++
			id := string(entryID(it.Value()))
			if _, ok := s.seen[id]; ok {
				continue
			}
			s.seen[id] = struct{}{}
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
	}
	if err := it.Error(); err != nil {
		return err
	}
	slices.SortStableFunc(s.found, func(a, b nearDoc) int {
		switch {
		case a.dist < b.dist:
			return -1
		case a.dist > b.dist:
			return 1
		}
		return 0
	})
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
func (s *geoNearSource) distance(doc bson.Raw) (s1.Angle, bson.RawValue, bool) {
	q := s.ns.q
	best, bestLoc, ok := s1.InfAngle(), bson.RawValue{}, false
	eachAtPath(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, s.ns.parts, func(v bson.RawValue) {
		gs, err := geo.Geometries(v)
		if err != nil {
			return
		}
		for _, g := range gs {
			if d := g.Distance(q.Center); d >= q.Min && d <= q.Max && d < best {
				best, bestLoc, ok = d, v, true
			}
		}
	})
	return best, bestLoc, ok
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
	d := float64(s.cur.dist)
	if s.ns.q.Meters {
		d *= geo.EarthRadiusMeters
	}
	return docsrc.Meta{GeoNearDistance: d, GeoNearPoint: s.cur.loc, HasGeoNear: true}
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
