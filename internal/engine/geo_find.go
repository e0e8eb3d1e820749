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
	"github.com/folio-db/folio/internal/values"
)

// geoIndexFor is a geo index of the kind asked (2dsphere when flat is
// false, 2d when true) among ixs on path whose fields before it the
// filter pins by equality, with those values encoded in each field's
// direction as the index's collation keys; nil when none. A string
// (or a value holding one) pins a field only under the index's collation,
// as MongoDB's planner bounds it. unpinned is such an index whose fields
// before path are not pinned.
func geoIndexFor(ixs []*Index, f *query.Filter, path string, flat, strict bool) (ix *Index, enc []byte, unpinned *Index) {
	for _, ix := range ixs {
		g := ix.geoFieldOf(path)
		if !ix.plannable(strict) || g < 0 || ix.Fields[g].Flat != flat || ix.Fields[g].GeoBucket {
			continue
		}
		var fields []string
		for _, pf := range ix.Fields[:g] {
			fields = append(fields, pf.Path)
		}
		vals, _, ok := indexPrefixOf(ix, f, conjuncts(f.Root()), fields, false)
		if !ok {
			unpinned = ix
			continue
		}
		var enc []byte
		for i, v := range vals {
			enc = keyenc.AppendField(enc, ix.coll.Transform(v), ix.Fields[i].Desc)
		}
		return ix, enc, nil
	}
	return nil, nil, unpinned
}

// planGeo plans a geo query an index serves. $near and $nearSphere need
// one on their path (291 otherwise): a GeoJSON point a 2dsphere index, a
// legacy $near (plane distances) a 2d index, a legacy $nearSphere either;
// a hint (h) leaves only the hinted index, as MongoDB's planner does; an
// index whose fields before the geo field the filter does not pin by
// equality serves it when no other does, reading all its keys; on a 2d
// index the center must lie within its bounds (16433). $geoWithin reads a 2dsphere or 2d index on
// its path, $geoIntersects a 2dsphere one, when there is one. A nil plan
// leaves the query to the planner (the filter then tests the geometry of
// each document it reads), as does a hint for $geoWithin and
// $geoIntersects.
func planGeo(c *Collection, q compiledFind, h hintChoice) (*planner.Plan, error) {
	near, err := q.filter.GeoNear()
	if err != nil {
		return nil, err
	}
	unhinted := h.ix == nil && !h.idOrder
	if near != nil {
		gq := near.Geo()
		ixs := c.Indexes()
		if !unhinted {
			ixs = nil
			if h.ix != nil {
				ixs = []*Index{h.ix}
			}
		}
		var ix, unpinned *Index
		var prefix []byte
		if !gq.Legacy {
			ix, prefix, unpinned = geoIndexFor(ixs, q.filter, near.Path, false, q.strict)
		}
		if ix == nil && (gq.Legacy || !gq.Meters) {
			var u *Index
			ix, prefix, u = geoIndexFor(ixs, q.filter, near.Path, true, q.strict)
			unpinned = cmp.Or(unpinned, u)
		}
		wholeIndex := false
		if ix == nil && unpinned != nil {
			// A 2dsphere index serves a $near whatever bounds its fields
			// before the geo field get (all values when the query has
			// none), as MongoDB's planner assigns it the $near alone
			// (stripInvalidAssignmentsTo2dsphereIndices needs a geo
			// field's predicate only; multikey_geonear.js).
			ix, wholeIndex = unpinned, true
		}
		if ix == nil {
			return nil, mongoerr.New(mongoerr.NoQueryExecutionPlans, "error processing query: planner returned error :: caused by :: unable to find index for $geoNear query")
		}
		if ix.flat != nil {
			// GeoNear2DStage hashes the center (GeoHashConverter::hash).
			if _, err := ix.flat.Hash(gq.CenterX, gq.CenterY); err != nil {
				center := bsoncore.NewArrayBuilder().AppendDouble(gq.CenterX).AppendDouble(gq.CenterY).Build()
				return nil, mongoerr.New(mongoerr.FlatNearOutOfBounds, "%v :: caused by :: %s", err, values.Shell(bson.RawValue{Type: bson.TypeArray, Value: center}))
			}
		}
		planned := ix.planned()
		ns := newNearScan(ix, ix.geoFieldOf(near.Path), prefix, gq)
		ns.wholeIndex = wholeIndex
		scan := &planner.GeoScan{Field: near.Path, Near: true, Flat: ix.flat != nil, Ref: ns,
			FirstRound: func() [][2]int64 { r, _ := ns.ranges(float64(gq.Min) + ns.initial); return r }}
		return planner.GeoPlan(&planned, scan, nil, q.filter), nil
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
		if ix, prefix, _ = geoIndexFor(c.Indexes(), q.filter, n.Path, false, q.strict); ix != nil {
			ranges = cellRanges(geo.Ranges(n.Geo().Region()))
		} else if ix, prefix, _ = geoIndexFor(c.Indexes(), q.filter, n.Path, true, q.strict); ix != nil && n.Geo().Op == geo.Within {
			ranges = hashRanges(ix.flat.Ranges(n.Geo().FlatBox()))
		} else {
			continue
		}
		planned := ix.planned()
		scan := &planner.GeoScan{Field: n.Path, Flat: ix.flat != nil, Cells: ranges}
		return planner.GeoPlan(&planned, scan, keyIntervals(prefix, ranges), q.filter), nil
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
// every match within a radius of the center (under prefix) with the
// radius they are known to cover (at least the one asked), the distance
// of a document's values, the radius past which the ranges hold every
// key, and Meta's distance per unit of radius (meters per radian from a
// GeoJSON point).
type nearScan struct {
	q       *geo.Query
	parts   []string
	prefix  []byte
	ranges  func(radius float64) (ranges [][2]int64, covered float64)
	dist    func(v bson.RawValue) (float64, bool)
	initial float64
	full    float64
	units   float64
	// density, when set, estimates a first radius from the keys near the
	// center (0: none found nearby).
	density func(r storage.Reader, prefix []byte) (float64, error)
	// bound, when set, is a lower bound of the distance of the document
	// an index entry keys, from its key alone (0 without it).
	bound func(value []byte) float64
	// wholeIndex, for an index whose fields before the geo field the
	// query does not pin, reads every key of the index in one round,
	// each a candidate by its cell's distance.
	wholeIndex bool
}

// newNearScan describes the $near q on ix's field g, of a 2dsphere index
// (spherical distances in radians over S2 cells) or a 2d index (over
// geohash boxes: plane distances for a legacy $near, radians for
// $nearSphere).
func newNearScan(ix *Index, g int, prefix []byte, q *geo.Query) *nearScan {
	ns := &nearScan{q: q, parts: ix.Fields[g].Parts, prefix: prefix, units: 1, initial: 1e-5, full: math.Pi}
	if q.Meters {
		ns.units = geo.EarthRadiusMeters
	}
	ns.dist = func(v bson.RawValue) (float64, bool) {
		d, ok := geo.SphereDistance(v, q.Center)
		return float64(d), ok
	}
	switch f := ix.flat; {
	case f == nil:
		ns.ranges = func(r float64) ([][2]int64, float64) {
			// Read as each round starts, after the query's snapshot: a
			// write that keyed a coarser cell raised the flag before
			// it committed.
			rs, covered := geo.NearRanges(q.Center, r, !ix.coarseCells.Load())
			return cellRanges(rs), covered
		}
		ns.density = func(r storage.Reader, ixPrefix []byte) (float64, error) {
			return nearDensity(r, append(bytes.Clone(ixPrefix), prefix...), q.Center)
		}
		// A key's cell holds what it keys: a point's leaf cell lies
		// within a centimeter of it.
		pos := strconv.Itoa(g)
		ns.bound = func(value []byte) float64 {
			n, ok := entryValues(value).Lookup(pos).Int64OK()
			if !ok {
				return 0
			}
			cell := s2.CellID(n)
			if cell.IsLeaf() {
				return max(0, float64(q.Center.Distance(cell.Point()))-leafSlack)
			}
			return float64(s2.CellFromCellID(cell).Distance(q.Center).Angle())
		}
	case q.Legacy:
		ns.initial, ns.full = (f.Max-f.Min)/f.Cells(), (f.Max-f.Min)*2
		ns.dist = func(v bson.RawValue) (float64, bool) {
			return geo.FlatDistance(geo.LegacyPairs(v), q.CenterX, q.CenterY)
		}
		ns.ranges = func(r float64) ([][2]int64, float64) {
			return hashRanges(f.Ranges(q.CenterX-r, q.CenterY-r, q.CenterX+r, q.CenterY+r)), r
		}
	default:
		// $nearSphere over a 2d index: the pairs within r of the center
		// lie in the cap's bounding rectangle, which is wider than r's
		// degrees of longitude over cos(latitude) away from the equator
		// and wraps at the antimeridian into two boxes of the plane.
		ns.ranges = func(r float64) ([][2]int64, float64) {
			b := s2.CapFromCenterAngle(q.Center, s1.Angle(r)).RectBound()
			const deg = 180 / math.Pi
			y0, y1 := b.Lat.Lo*deg, b.Lat.Hi*deg
			var hs []geo.HashRange
			switch {
			case b.Lng.IsFull():
				hs = f.Ranges(-180, y0, 180, y1)
			case b.Lng.IsInverted():
				// The two boxes' runs, sorted and merged.
				hs = append(f.Ranges(b.Lng.Lo*deg, y0, 180, y1), f.Ranges(-180, y0, b.Lng.Hi*deg, y1)...)
				_, rs := subtractRanges(hashRanges(hs), nil)
				return rs, r
			default:
				hs = f.Ranges(b.Lng.Lo*deg, y0, b.Lng.Hi*deg, y1)
			}
			return hashRanges(hs), r
		}
	}
	return ns
}

// geoNearSource yields the documents of a $near plan by distance, as an
// incremental nearest-neighbour search: each round reads the index keys
// within a radius of the center not read before (the radius doubles each
// round, as MongoDB's GEO_NEAR_2DSPHERE's does), each key a candidate
// with a lower bound of its document's distance; the candidate of least
// bound is read while it may come before the closest document read so
// far, which is yielded once no candidate and nothing beyond the radius
// can come before it. A document is read once however many keys it has.
type geoNearSource struct {
	r      storage.Reader
	collID uint32
	ns     *nearScan
	plan   *planner.Plan // its key checks skip entries before any fetch
	prefix []byte        // the index's storage prefix
	stats  *OpStats
	ctx    context.Context
	closer func() error

	radius  float64    // every key within it has been read
	done    bool       // every key has been read
	scanned [][2]int64 // the key ranges read, sorted and disjoint
	// bounds is each candidate's least bound pushed, or nearRead (below
	// every bound) once its document was read; cands and docs are heaps
	// by bound and distance.
	bounds map[string]float64
	cands  nearHeap[nearCand]
	docs   nearHeap[nearDoc]
	seq    int
	cur    nearDoc
	// reads counts the documents read; held is reads when the cursor last
	// resumed after a getMore (restored): a document read before is
	// returned as read (recheckLatest).
	reads, held int
	// ids gives the documents their record ids (giveRecordIDs).
	ids bool
}

type nearCand struct {
	id    string
	bound float64
	seq   int // discovery order, between equal bounds
}

type nearDoc struct {
	doc  bson.Raw
	dist float64
	seq  int
	loc  bson.RawValue
	read int    // the document's number in the order of reads, from 1
	id   string // its record id (encoded _id)
}

func (c nearCand) key() (float64, int) { return c.bound, c.seq }
func (d nearDoc) key() (float64, int)  { return d.dist, d.seq }

// nearHeap is a min-heap by key.
type nearHeap[T interface{ key() (float64, int) }] []T

func (h nearHeap[T]) less(i, j int) bool {
	a, as := h[i].key()
	b, bs := h[j].key()
	return a < b || a == b && as < bs
}

func (h *nearHeap[T]) push(x T) {
	*h = append(*h, x)
	for i := len(*h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		(*h)[i], (*h)[p] = (*h)[p], (*h)[i]
		i = p
	}
}

func (h *nearHeap[T]) pop() T {
	old := *h
	top := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(l, m) {
			m = l
		}
		if l+1 < n && h.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			break
		}
		(*h)[i], (*h)[m] = (*h)[m], (*h)[i]
		i = m
	}
	return top
}

func newGeoNearSource(ctx context.Context, r storage.Reader, c *Collection, p *planner.Plan, stats *OpStats, closer func() error) *geoNearSource {
	return &geoNearSource{r: r, collID: c.ID, ns: p.Geo.Ref.(*nearScan), plan: p, prefix: indexPrefix(c.ID, indexOf(p).ID),
		stats: stats, ctx: ctx, closer: closer, bounds: map[string]float64{}, radius: -1}
}

func (s *geoNearSource) Next() (bson.Raw, error) {
	for n := 0; ; n++ {
		if n%256 == 255 {
			if err := mongoerr.Interruption(s.ctx); err != nil {
				return nil, err
			}
		}
		closest := math.Inf(1)
		if len(s.docs) > 0 {
			closest = s.docs[0].dist
		}
		switch {
		case len(s.cands) > 0 && s.cands[0].bound <= s.radius && s.cands[0].bound < closest:
			if err := s.fetch(s.cands.pop()); err != nil {
				return nil, err
			}
		case len(s.docs) > 0 && (closest <= s.radius || s.done):
			s.cur = s.docs.pop()
			return s.cur.doc, nil
		case s.done:
			return nil, nil
		default:
			if err := s.round(); err != nil {
				return nil, err
			}
		}
	}
}

// fetch reads a candidate's document, unless read already, and keeps it
// when it lies within the query's bounds.
func (s *geoNearSource) fetch(c nearCand) error {
	if s.bounds[c.id] == nearRead {
		return nil
	}
	s.bounds[c.id] = nearRead
	var buf []byte
	doc, found, err := getDoc(s.r, docKeyFromEncodedID(s.collID, []byte(c.id)), &buf)
	if err != nil || !found {
		return err
	}
	s.stats.DocsExamined++
	s.reads++
	if d, loc, ok := s.distance(doc); ok {
		s.docs.push(nearDoc{doc: bytes.Clone(doc), dist: d, seq: c.seq, loc: loc, read: s.reads, id: c.id})
	}
	return nil
}

// restored marks the documents read so far as held across the getMore.
func (s *geoNearSource) restored() { s.held = s.reads }

// recheckLatest returns a document read before the cursor resumed as it
// was read, as MongoDB's near stage returns the documents it buffered
// (near.cpp), and rechecks the others.
func (s *geoNearSource) recheckLatest(r *recheck, doc bson.Raw) (bson.Raw, error) {
	if s.cur.read <= s.held {
		return doc, nil
	}
	return r.latest(doc)
}

// nearRead marks in geoNearSource.bounds a candidate whose document was read:
// below every distance, so no later key of it is pushed again.
const nearRead = -1.0

// round reads the keys within the next radius not read yet, each a
// candidate unless its document was read or lies beyond $maxDistance.
func (s *geoNearSource) round() error {
	ns := s.ns
	if ns.wholeIndex {
		s.done, s.radius = true, math.Inf(1)
		return scanEntries(s.ctx, s.r, s.prefix, []planner.Interval{{}}, s.stats, s.candidate)
	}
	maxD := float64(ns.q.Max)
	radius := s.radius * 2
	if s.radius < 0 {
		r0 := ns.initial
		if ns.density != nil {
			d, err := ns.density(s.r, s.prefix)
			if err != nil {
				return err
			}
			r0 = max(r0, d)
		}
		radius = float64(ns.q.Min) + r0
	}
	ranges, covered := [][2]int64(nil), ns.full
	if radius < ns.full {
		ranges, covered = ns.ranges(radius)
	}
	if covered >= ns.full || covered >= maxD {
		s.done = true
		if covered < ns.full {
			// Past $maxDistance: nothing beyond it can match.
			covered = math.Inf(1)
		} else {
			ranges, _ = ns.ranges(ns.full)
		}
	}
	s.radius = covered
	var fresh [][2]int64
	fresh, s.scanned = subtractRanges(ranges, s.scanned)
	return scanEntries(s.ctx, s.r, s.prefix, keyIntervals(ns.prefix, fresh), s.stats, s.candidate)
}

// candidate makes an index entry's document a candidate, unless it was
// read, lies beyond $maxDistance or the entry's other fields fall outside
// the query's bounds of them (the plan's key checks).
func (s *geoNearSource) candidate(key, value []byte) {
	if s.plan.HasChecks() {
		if ok, _, _ := s.plan.CheckKey(key, len(s.prefix)); !ok {
			return
		}
	}
	id := string(entryID(value))
	b := 0.0
	if s.ns.bound != nil {
		b = s.ns.bound(value)
	}
	if b > float64(s.ns.q.Max) {
		return
	}
	if old, ok := s.bounds[id]; ok && old <= b {
		return // a smaller bound is pushed, or the document was read
	}
	s.bounds[id] = b
	s.seq++
	s.cands.push(nearCand{id: id, bound: b, seq: s.seq})
}

// subtractRanges are the parts of ranges (sorted, inclusive) outside
// done (sorted, disjoint), and done with them added.
func subtractRanges(ranges, done [][2]int64) (fresh, all [][2]int64) {
	for _, r := range ranges {
		lo, consumed := r[0], false
		for _, d := range done {
			if d[1] < lo || d[0] > r[1] {
				continue
			}
			if d[0] > lo {
				fresh = append(fresh, [2]int64{lo, d[0] - 1})
			}
			if d[1] >= r[1] {
				consumed = true
				break
			}
			lo = d[1] + 1
		}
		if !consumed {
			fresh = append(fresh, [2]int64{lo, r[1]})
		}
	}
	all = append(slices.Clone(done), fresh...)
	slices.SortFunc(all, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	merged := all[:0]
	for _, r := range all {
		if n := len(merged); n > 0 && (merged[n-1][1] == math.MaxInt64 || r[0] <= merged[n-1][1]+1) {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return fresh, merged
}

// distance is the distance from the center to the closest geometry at
// the field's path in doc, and that geometry's value, when it lies
// within the query's bounds.
func (s *geoNearSource) distance(doc bson.Raw) (float64, bson.RawValue, bool) {
	q := s.ns.q
	best, bestLoc, ok := math.Inf(1), bson.RawValue{}, false
	_ = geo.EachValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, s.ns.parts, func(v bson.RawValue) error {
		for _, loc := range geo.Locations(v) {
			if d, found := s.ns.dist(loc); found && d >= float64(q.Min) && d <= float64(q.Max) && d < best {
				best, bestLoc, ok = d, loc, true
			}
		}
		return nil
	})
	return best, bestLoc, ok
}

// Meta carries the distance and location of the document Next returned
// last: meters for a GeoJSON center, radians for a legacy one; and its
// record id when asked, as MongoDB's near stage's documents, fetched,
// carry theirs.
func (s *geoNearSource) Meta() docsrc.Meta {
	m := docsrc.Meta{GeoNearDistance: s.cur.dist * s.ns.units, GeoNearPoint: s.cur.loc, HasGeoNear: true}
	if s.ids && s.cur.id != "" {
		m.RecordID = []byte(s.cur.id)
	}
	return m
}

func (s *geoNearSource) giveRecordIDs() { s.ids = true }

func (s *geoNearSource) Close() error {
	if s.closer != nil {
		return s.closer()
	}
	return nil
}

// geoNearMissing is MongoDB's refusal of a $geoNear on a collection that
// does not exist (PipelineD::buildInnerQueryExecutorGeoNear), where other
// reads of it find nothing.
func geoNearMissing(db, coll string) error {
	return mongoerr.New(mongoerr.NamespaceNotFound, "$geoNear requires a geo index to run, but %s.%s does not exist", db, coll)
}

// geoNearFilter is the find a $geoNear stage's search runs on c: its
// query and a $nearSphere (or, from a legacy pair without spherical, a
// flat $near) on its key, or on the field of c's one 2d index, else of its
// one 2dsphere index.
func geoNearFilter(c *Collection, g *aggregate.GeoNear) (bson.Raw, error) {
	key := g.Key
	if key == "" && c != nil {
		// MongoDB takes the field of the one 2d index, else of the one
		// 2dsphere index; two of the kind it looks at are ambiguous.
		var flat, sphere []string
		for _, ix := range c.Indexes() {
			if f := ix.geoField(); f >= 0 && !ix.Hidden && !ix.Fields[f].GeoBucket {
				if ix.Fields[f].Flat {
					flat = append(flat, ix.Fields[f].Path)
				} else {
					sphere = append(sphere, ix.Fields[f].Path)
				}
			}
		}
		switch {
		case len(flat) > 1:
			return nil, mongoerr.New(mongoerr.IndexNotFound, "There is more than one 2d index on %s.%s; unsure which to use for $geoNear", c.DB, c.Name)
		case len(flat) == 1:
			key = flat[0]
		case len(sphere) > 1:
			return nil, mongoerr.New(mongoerr.IndexNotFound, "There is more than one 2dsphere index on %s.%s; unsure which to use for $geoNear", c.DB, c.Name)
		case len(sphere) == 1:
			key = sphere[0]
		default:
			return nil, mongoerr.New(mongoerr.IndexNotFound, "$geoNear requires a 2d or 2dsphere index, but none were found")
		}
	}
	cond := g.NearCondition()
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
