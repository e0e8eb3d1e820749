package planner

import (
	"bytes"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
)

// maxIntervals bounds how many key intervals one plan scans (the product of
// $in lists over compound fields); past it the remaining fields are left
// unbounded. MongoDB bounds a field by any number of points, so one large
// $in (thousands of values) is still an index scan of its points.
const maxIntervals = 1 << 16

// maxCandidates bounds the plans a trial runs.
const maxCandidates = 8

// Query is what a plan answers: a compiled filter, and optionally a sort, a
// projection (compiled, and its spec) and a hint (an index, or the _id
// order, to use alone).
type Query struct {
	Filter         *query.Filter
	Sort           *query.Sort
	Projection     *query.Projection
	ProjectionSpec bson.Raw
	Hint           *Index
	HintID         bool
	// IDCollation is the collation of the _id order (the collection's
	// default; nil: simple).
	IDCollation *collation.Collator
	// Clustered reports a clustered collection: MongoDB scans its
	// documents by _id as a collection scan, with no _id index.
	Clustered bool
	// NoIDHack reports a find with a skip or showRecordId: MongoDB reads
	// its _id point through the _id index, not by IDHACK
	// (isIdHackEligibleQuery), as it does under a hint.
	NoIDHack bool
	// KeysOnly reports a find that reads nothing of its documents but
	// the index keys (returnKey without a sortKey field): a scan of an
	// index whose keys decide the filter and give the sort fetches none,
	// as MongoDB's RETURN_KEY over an IXSCAN does (Plan.Covered, with no
	// field).
	KeysOnly bool
	// Text is the scan of the text index for the filter's $text clause
	// when it is in a branch of an $or among the conjuncts
	// (query.Filter.TextOr; TextPlan, for the branch). MongoDB must read
	// the search through the index (a mandatory assignment): the one
	// candidate is then the union of that $or, none when another branch
	// has no bounded scan.
	Text *Plan
	// GroupDistinct reports a distinct scan (DistinctScan) read for a
	// $group by the key: each document's value at the key whole, a
	// missing one as null, so the index must hold every document (not
	// sparse) and each value unsplit (not multikey), as MongoDB's
	// STRICT_DISTINCT_ONLY planning of such a $group requires.
	GroupDistinct bool
}

// Plan is how a query reads its candidates: a scan of the document store
// in _id order (Index nil) or of a secondary index, over key intervals, or
// the union of such scans (Or). Every candidate is still checked against
// the whole filter, so the intervals need only contain every matching
// document's keys.
type Plan struct {
	Index *Index
	// Or, when set, are the scans whose union (each document once) the
	// plan reads; the plan's other fields are then unset.
	Or []*Plan
	// Intervals are runs of keys of the index (without any storage
	// prefix), sorted and disjoint; nil scans every key. An empty lo is
	// the start of the index, an empty hi its end.
	Intervals []Interval
	Reverse   bool
	// Sorted reports that the scan yields the requested sort order.
	Sorted bool
	// Natural scans a capped collection's insertion order (UseNatural).
	Natural bool
	// Text, when set, reads a text index for a $text query (TextPlan).
	Text *TextScan
	// Geo, when set, reads a 2dsphere index for a geo query (GeoPlan).
	Geo *GeoScan
	// PointFields counts the leading fields pinned to a single value.
	PointFields int
	// idHack reports MongoDB's IDHACK: a read of one _id by a filter on
	// _id alone, without hint, skip or showRecordId (candidates).
	idHack bool
	// coll is the collation of the scanned keys (nil: simple).
	coll   *collation.Collator
	fields []Field
	// fieldBounds are the bounds of each of fields (empty: unbounded).
	fieldBounds []fieldBounds
	// checks are the bounds of fields after those the intervals bound,
	// tested on each key before its document is fetched; ivFields counts
	// the fields the intervals bound.
	checks   []keyCheck
	ivFields int
	// keyFilters are the conditions the keys' values decide but the
	// bounds only approximate (keyFiltersOf), tested on each key before
	// its document is fetched.
	keyFilters []keyFilter
	// ranged reports that the intervals bound a field by a range after
	// the points; eqFields counts the fields bounded by points only
	// (equalities and $in).
	ranged   bool
	eqFields int
	// exact reports that the keys alone decide the filter (CountScan).
	exact bool
	// countExact reports that the keys of an index with a collation
	// decide a filter under the same collation: a count may count them,
	// but they are collation keys, not the values (CountScan).
	countExact bool
	// multikeyExact reports that the keys of a multikey index decide the
	// filter, a document counted once however many of its keys match
	// (CountDedups).
	multikeyExact bool
	// nullExact reports that the keys of an index that is not multikey
	// decide a filter with equalities to null: its bounds, [undefined,
	// undefined] and [null, null], hold exactly the documents whose field
	// is null, undefined or missing, which the filter matches, though a
	// null key does not tell null from missing. A count needs no document
	// (CountScan), and a projection of _id alone is covered (Covered), as
	// MongoDB 7.0 covers such queries (jstests/core/cover_null_queries.js).
	nullExact bool
	// idDecides reports that the _id ranges decide the filter
	// (IDRangeDecides).
	idDecides bool
	// exactPaths are the fields of the filter's top level whose every
	// predicate the plan's bounds answer exactly (setExactPaths).
	exactPaths []string
	// covered are the positions of the fields a covered read answers
	// with (Covered).
	covered []int
	// distinct is the field a DistinctScan plan reads, distinctPos its
	// position among the index's fields.
	distinct    string
	distinctPos int
	// keyRange marks a KeyRange plan: its one interval is the range.
	keyRange bool
	// minRecord and maxRecord are the _id values a key range of a
	// clustered collection's documents was given (RecordRange).
	minRecord, maxRecord bson.RawValue
	// multikey is the index's multikey flag the plan was built with; the
	// query it was built from lets it be rebuilt (Rebuilt).
	multikey bool
	leaves   []*query.Node
	sort     sortReq
	// oneInterval and oneBounds back Intervals and fieldBounds when there
	// is one of each (every read by _id): such a plan is one allocation.
	oneInterval [1]Interval
	oneBounds   [1]fieldBounds
}

// Interval is a run of whole keys, [Lo, Hi).
type Interval struct{ Lo, Hi []byte }

// Bounds are the bounds of each bounded field as explain shows them,
// built when asked (a plan that is only run never shows them).
func (p *Plan) Bounds() bson.D {
	var out bson.D
	for i, fb := range p.fieldBounds {
		if !fb.empty() {
			out = append(out, bson.E{Key: p.fields[i].Path, Value: fb.shown(p.Reverse)})
		}
	}
	return out
}

// IDPoint reports whether the plan reads one document by its _id.
func (p *Plan) IDPoint() bool {
	return p.Index == nil && !p.Natural && p.PointFields == 1 && len(p.Intervals) == 1
}

// IDHack reports whether the plan is MongoDB's IDHACK (see idHack), which
// MongoDB chooses before it consults the plan cache.
func (p *Plan) IDHack() bool { return p.idHack }

// UniquePoint reports whether the plan reads at most one entry of a
// unique index keyed by its values, every field pinned to one value: the
// entry's key is the interval's start.
func (p *Plan) UniquePoint() bool {
	return p.Index != nil && p.Index.Unique && p.Index.ValueKeyed && p.Index.Wildcard == nil && p.PointFields == len(p.fields) &&
		len(p.Intervals) == 1 && p.checks == nil
}

// Fetches reports whether the plan's entries hold encoded _ids to fetch
// documents by, rather than the documents themselves.
func (p *Plan) Fetches() bool { return p.Index != nil || p.Natural }

// HasChecks reports whether the scan must test keys with CheckKey.
func (p *Plan) HasChecks() bool { return p.checks != nil }

// StartAfter makes p, a forward scan of the document store, start after
// the document whose encoded _id is id (a resumed scan); a scan bounded by
// _id intervals (a clustered collection's) keeps what of them lies past it.
func (p *Plan) StartAfter(id []byte) {
	from := append(slices.Clip(id), 0)
	if p.Intervals == nil {
		p.Intervals = []Interval{{Lo: from}}
		return
	}
	kept := []Interval{}
	for _, iv := range p.Intervals {
		if len(iv.Hi) > 0 && bytes.Compare(iv.Hi, from) <= 0 {
			continue
		}
		if bytes.Compare(iv.Lo, from) < 0 {
			iv.Lo = from
		}
		kept = append(kept, iv)
	}
	p.Intervals = kept
}

// UseNatural turns a plain scan of a capped collection into a scan of its
// insertion order, which is its natural order.
func (p *Plan) UseNatural() {
	if p.Index == nil && p.Intervals == nil && p.Or == nil {
		p.Natural = true
	}
}

// Rebuilt returns the plan again if its index turned multikey, or met
// arrays at components of its fields' paths it had not (Index.FieldArrays),
// after it was built (the plan may intersect ranges, compound bounds or
// take a sort from bounded fields, which arrays there do not allow), else
// p. The caller passes the index's flag and array components as its
// scan's snapshot sees them: a write raises them before it commits, so a
// snapshot holding an array the index expanded sees them.
func (p *Plan) Rebuilt(multikey bool, fieldArrays []uint64) *Plan {
	if p.Index == nil || !multikey || p.multikey && !moreArrays(p.Index.FieldArrays, fieldArrays) {
		return p
	}
	ix := *p.Index
	ix.Multikey, ix.FieldArrays = true, fieldArrays
	if p.keyRange {
		r := *p
		r.Index, r.multikey = &ix, true
		r.sortKeyRange()
		return &r
	}
	return build(&ix, p.leaves, p.sort)
}

// moreArrays reports whether now holds an array component was lacks, or
// no longer tracks them.
func moreArrays(was, now []uint64) bool {
	if was == nil {
		return false
	}
	if now == nil {
		return true
	}
	for i, a := range now {
		if i >= len(was) || was[i]|a != was[i] {
			return true
		}
	}
	return false
}

// NaturalScan is the plan of a $natural hint or sort: a collection scan
// in natural order, backward when dir < 0; sorted reports that the query
// sorts by $natural.
func NaturalScan(dir int, sorted bool) *Plan {
	p := build(nil, nil, sortReq{})
	p.Reverse = dir < 0
	p.Sorted = sorted
	return p
}

// Candidates lists the access paths for q on the collection of cat, best
// first by score: the union holding q.Text alone (none without one); the
// hinted index alone; a read of one _id alone;
// else every index (and the _id order) that bounds the query or yields
// its sort; else a scan of the document store. Indexes that may lack a
// matching document (partial, sparse) are used only when the query proves
// they hold every match.
func Candidates(cat Catalog, q Query) []*Plan {
	out := candidates(cat, q)
	for _, p := range out {
		p.setExact(q.Filter.Root())
		p.setExactPaths(q.Filter.Root())
		p.setCovered(q.ProjectionSpec, q.Sort == nil || p.Sorted, q.Sort)
		if q.KeysOnly {
			p.setKeysOnly(q.Sort == nil || p.Sorted)
		}
	}
	return out
}

// sortReq is the sort asked of a scan: the query's fields and directions,
// and whether the scan's keys follow another collation than the sort's.
// Such a scan still gives the sort on a field whose bounds hold no string,
// object or array, whose order is the same under every collation (MongoDB's
// computeSortsForScan, by IndexScanNode::getFieldsWithStringBounds).
type sortReq struct {
	fields         []string
	dirs           []int
	otherCollation bool
}

// sortFor is the sort a scan of ix (nil: the document store) may yield:
// q's, unless it has a {$meta} key.
func (q Query) sortFor(ix *Index) sortReq {
	if q.Sort == nil || q.Sort.ByMeta() {
		return sortReq{}
	}
	coll := q.IDCollation
	if ix != nil {
		coll = ix.Collation
	}
	fields, dirs := q.Sort.Fields()
	return sortReq{fields: fields, dirs: dirs, otherCollation: !collation.Equal(coll, q.Sort.Collator())}
}

func candidates(cat Catalog, q Query) []*Plan {
	leaves := constraintLeaves(q.Filter.Root())
	if q.Text != nil {
		or, branch := q.Filter.TextOr()
		i := slices.Index(leaves, or)
		if i < 0 {
			return nil
		}
		if p := union(cat.Indexes(), leaves, i, branch, q.Text, q.IDCollation, cat.StoreByID()); p != nil {
			return []*Plan{p}
		}
		return nil
	}
	idPlan := buildWith(nil, q.IDCollation, leaves, q.sortFor(nil))
	switch {
	case !cat.StoreByID():
		idPlan = build(nil, nil, sortReq{})
	case idPlan.Intervals == nil && (idPlan.Sorted || q.HintID) && !q.Clustered:
		// MongoDB reads a sort by _id, or a hint of the _id index,
		// through the whole _id index (an IXSCAN, whose keys returnKey
		// gives), not a collection scan.
		idPlan.Intervals = []Interval{{}}
	}
	if q.HintID {
		return []*Plan{idPlan}
	}
	if q.Hint != nil {
		if q.Hint.Wildcard != nil {
			return hintedWildcard(q.Hint, idPlan, leaves, q.sortFor(q.Hint))
		}
		return []*Plan{build(q.Hint, leaves, q.sortFor(q.Hint))}
	}
	if idPlan.IDPoint() {
		idPlan.idHack = !q.NoIDHack && SimpleIDQuery(q.Filter.Doc())
		return []*Plan{idPlan}
	}
	all := cat.Indexes()
	if !cat.StoreByID() {
		// A read of one _id through the _id index is MongoDB's IDHACK
		// too: no other plan is tried.
		for i := range all {
			if ix := &all[i]; ix.Name == IDIndexName {
				if p := build(ix, leaves, q.sortFor(ix)); p.UniquePoint() {
					return []*Plan{p}
				}
			}
		}
	}
	var out []*Plan
	if Score(idPlan) > 0 {
		out = append(out, idPlan)
	}
	indexes := expandWildcards(all, leaves)
	for i := range indexes {
		ix := &indexes[i]
		if !holdsEveryMatch(leaves, ix) {
			continue
		}
		if p := build(ix, leaves, q.sortFor(ix)); Score(p) > 0 {
			out = append(out, p)
		}
	}
	out = append(out, orPlans(all, leaves, q.IDCollation, cat.StoreByID())...)
	if len(out) == 0 {
		return []*Plan{idPlan}
	}
	slices.SortStableFunc(out, func(a, b *Plan) int { return Score(b) - Score(a) })
	if len(out) > maxCandidates {
		out = out[:maxCandidates]
	}
	return out
}

// Score ranks plans: leading fields pinned to points count most, then
// a further field bounded by a range, then a provided sort (equality
// before range before sort), then the fields checked on the keys. A
// union scores as its weakest scan.
func Score(p *Plan) int {
	if p.Or != nil {
		s := Score(p.Or[0])
		for _, br := range p.Or[1:] {
			s = min(s, Score(br))
		}
		return s
	}
	s := 0
	if p.Intervals != nil {
		s += 16 * p.eqFields
		if p.ranged {
			s += 4
		}
		s += len(p.checks)
	}
	if p.Sorted {
		s += 2
	}
	return s
}

// Usable returns the test of whether an index may answer queries with
// filter f: a partial or sparse index only when f proves it holds every
// match (what MongoDB's plan cache records as index discriminators).
func Usable(f *query.Filter) func(ix *Index) bool {
	leaves := constraintLeaves(f.Root())
	return func(ix *Index) bool { return holdsEveryMatch(leaves, ix) }
}

// CollationFits is, for an index, whether each leaf of f on one of its
// fields (in the index's order) may bound it under its collation
// (collationFits), one '1' or '0' per such leaf: the discriminator
// MongoDB's plan cache key records per index
// (PlanCacheIndexabilityState::processIndexCollation), so that two queries
// of one shape (one queryHash) whose strings sit on other fields have
// other planCacheKeys.
func CollationFits(f *query.Filter) func(ix *Index) string {
	leaves := pathLeaves(f.Root())
	return func(ix *Index) string {
		var b []byte
		for i, fl := range ix.Fields {
			if slices.ContainsFunc(ix.Fields[:i], func(g Field) bool { return g.Path == fl.Path }) {
				continue
			}
			for _, n := range leaves {
				if n.Path == fl.Path {
					b = append(b, "01"[btoi(collationFits(n, ix.Collation))])
				}
			}
		}
		return string(b)
	}
}

// pathLeaves are the conditions on a field anywhere in a filter (under
// $or, $not and $elemMatch too), whose operands decide whether an index
// with a collation may answer them (collationFits).
func pathLeaves(root *query.Node) []*query.Node {
	var leaves []*query.Node
	query.Walk(root, func(n *query.Node) bool {
		if len(n.Children) == 0 && n.Path != "" {
			leaves = append(leaves, n)
		}
		return true
	})
	return leaves
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// holdsEveryMatch reports whether ix holds an entry for every document the
// query (given by its conjunct leaves) can match: a partial index only
// when the query implies its filter, a sparse one only when the query
// cannot match a document missing all of its fields.
func holdsEveryMatch(leaves []*query.Node, ix *Index) bool {
	if !partialHolds(leaves, ix) {
		return false
	}
	if !ix.Sparse {
		return true
	}
	for _, n := range leaves {
		for _, f := range ix.Fields {
			if n.Path == f.Path && cannotMatchMissing(n) {
				return true
			}
		}
	}
	return false
}

// partialHolds reports whether the query (given by its conjunct leaves)
// implies ix's partial filter, if it has one (MongoDB's
// stripInvalidAssignmentsToPartialIndices). A partial filter follows the
// index's collation: only a query under the same one can prove it.
func partialHolds(leaves []*query.Node, ix *Index) bool {
	return ix.Partial == nil || collation.Equal(ix.Collation, leavesCollator(leaves)) && implies(leaves, ix.Partial)
}

// TextIndexHolds reports whether a $text clause may read the text index
// ix, the clauses being those AND-ed with it: a partial text index only
// when they imply its filter. MongoDB strips the $text's assignment to a
// partial index they do not prove, and the $text then has no index
// (NoQueryExecutionPlans).
func TextIndexHolds(clauses []*query.Node, ix *Index) bool {
	var leaves []*query.Node
	for _, c := range clauses {
		leaves = appendConstraintLeaves(leaves, c, nil)
	}
	return partialHolds(leaves, ix)
}

// constraintLeaves are the conditions every match satisfies: the top-level
// conjuncts (the clause of an $or of one clause among them, which
// MongoDB's optimizer puts in the $or's place), and the conditions inside
// $elemMatch on documents, with their paths made absolute and the
// $elemMatch they lie within (query.Node.Within).
func constraintLeaves(root *query.Node) []*query.Node {
	return appendConstraintLeaves(nil, root, nil)
}

// appendConstraintLeaves appends to out the constraint leaves of n, which
// lies within the $elemMatch within (nil: at the top level). Its paths are
// relative to within's path followed by a dot, so that a field named ""
// stays a component of the absolute path ("a." + "" is "a.", "" + "." +
// "b" is ".b"), which then names no index field (an index key pattern has
// no empty field names) instead of its parent's or a top-level field.
func appendConstraintLeaves(out []*query.Node, n *query.Node, within *query.Scope) []*query.Node {
	switch n.Kind {
	case query.KindAnd:
		for _, ch := range n.Children {
			out = appendConstraintLeaves(out, ch, within)
		}
	case query.KindOr:
		if len(n.Children) != 1 || holdsSearch(n) {
			out = appendLeaf(out, n, within)
			break
		}
		out = appendConstraintLeaves(out, n.Children[0], within)
	case query.KindElemMatchObject:
		path := scopePrefix(within) + n.Path
		inner := &query.Scope{Path: path, Parts: strings.Count(path, ".") + 1}
		for _, ch := range n.Children {
			out = appendConstraintLeaves(out, ch, inner)
		}
	default:
		out = appendLeaf(out, n, within)
	}
	return out
}

// scopePrefix is what the paths within an $elemMatch are relative to: its
// path and a dot ("" at the top level).
func scopePrefix(within *query.Scope) string {
	if within == nil {
		return ""
	}
	return within.Path + "."
}

// holdsSearch reports whether n holds a $text or geo clause, which the
// engine plans from where it lies in the filter (an $or of one clause
// holding one stays an $or for them).
func holdsSearch(n *query.Node) bool {
	found := false
	query.Walk(n, func(c *query.Node) bool {
		found = found || c.Kind == query.KindText || c.Kind == query.KindGeo
		return !found
	})
	return found
}

// appendLeaf appends leaf n, its path made absolute and marked as within
// the $elemMatch within (see appendConstraintLeaves), and so the path of
// the condition a $not negates, which the bounds of a negation read: {a:
// {$elemMatch: {b: {$ne: 1}}}} constrains a.b, never a top-level b.
func appendLeaf(out []*query.Node, n *query.Node, within *query.Scope) []*query.Node {
	if within != nil {
		prefix := scopePrefix(within)
		cp := *n
		cp.Path, cp.Within = prefix+n.Path, within
		if n.Kind == query.KindNot && len(n.Children) == 1 {
			ch := *n.Children[0]
			ch.Path = prefix + ch.Path
			cp.Children = []*query.Node{&ch}
		}
		n = &cp
	}
	return append(out, n)
}

// build derives the scan of ix (nil: the document store) for the query:
// the product of the leading fields' points, then the intervals of the
// next bounded field; the bounds of the fields after those are checked on
// each key (see CheckKey).
func build(ix *Index, leaves []*query.Node, sort sortReq) *Plan {
	var coll *collation.Collator
	if ix != nil {
		coll = ix.Collation
	}
	return buildWith(ix, coll, leaves, sort)
}

// buildWith is build for a scan whose keys follow ixColl: ix's collation,
// or for the document store (ix nil) the collation of its _id order.
func buildWith(ix *Index, ixColl *collation.Collator, leaves []*query.Node, sort sortReq) *Plan {
	multikey := ix != nil && ix.Multikey
	p := &Plan{Index: ix, coll: ixColl, fields: idFields, multikey: multikey, leaves: leaves, sort: sort}
	if ix != nil {
		p.fields = ix.Fields
	}
	if len(p.fields) == 1 {
		p.fieldBounds = p.oneBounds[:]
	} else {
		p.fieldBounds = make([]fieldBounds, len(p.fields))
	}
	// single and bounded live on the stack for the indexes queries name
	// (up to eight fields), as do the prefixes while they are one: a plan
	// is built for every query.
	var singleBuf, boundedBuf [8]bool
	var single, bounded []bool
	if n := len(p.fields); n <= len(singleBuf) {
		single, bounded = singleBuf[:n], boundedBuf[:n]
	} else {
		single, bounded = make([]bool, n), make([]bool, n)
	}
	var firstBuf [1][]byte
	prefixes := firstBuf[:]
	var last fieldBounds // a field bounded by ranges, ending the intervals
	leading := true      // the fields so far are points making intervals
	// paired: the condition bounding each field (from) decides which may
	// bound a field sharing its path's start (pairedLeaves).
	arr := arrays{ix: ix, multikey: multikey}
	paired := multikey && ix.PairedArrays
	var from []*query.Node
	if paired {
		from = make([]*query.Node, len(p.fields))
	}
	for i, f := range p.fields {
		// (a wildcard index is expanded for such a path only where it
		// met no array, see wildcardPaths)
		if positional(f.Parts) && !f.Wildcard {
			leading = false
			continue
		}
		fl := leaves
		if paired {
			fl = pairedLeaves(leaves, p.fields, arr, from, i)
		}
		fb, src := boundsFor(fl, f, arr.deepest(i, len(f.Parts)), ixColl)
		if fb.empty() {
			leading = false
			continue
		}
		if paired {
			from[i] = src
		}
		p.fieldBounds[i] = fb
		bounded[i] = true
		single[i] = fb.single()
		if !leading || len(prefixes)*len(fb.ivs) > maxIntervals {
			leading = false
			p.checks = append(p.checks, keyCheck{field: i, bounds: fb})
			continue
		}
		p.ivFields++
		if !fb.point {
			last, leading = fb, false
			p.ranged = true
			continue
		}
		if f.WildcardOf == "" {
			p.eqFields++
		}
		var next [][]byte
		if len(prefixes)*len(fb.ivs) == 1 {
			// the one prefix is read (into pre) before it is replaced
			next = firstBuf[:0]
		} else {
			next = make([][]byte, 0, len(prefixes)*len(fb.ivs))
		}
		for _, pre := range prefixes {
			for _, iv := range fb.ivs {
				// The bounds' keys are never written to: a prefix
				// that is one of them is shared, and appending to one
				// copies it.
				if len(pre) == 0 {
					next = append(next, iv.lo)
				} else {
					next = append(next, append(slices.Clip(pre), iv.lo...))
				}
			}
		}
		prefixes = next
	}
	if len(prefixes[0]) > 0 || !last.empty() {
		p.Intervals = p.oneInterval[:0]
		for _, pre := range prefixes {
			if last.empty() {
				p.Intervals = append(p.Intervals, Interval{Lo: pre, Hi: keyenc.PrefixEnd(pre)})
				continue
			}
			for _, iv := range last.ivs {
				p.Intervals = append(p.Intervals, Interval{Lo: append(slices.Clip(pre), iv.lo...), Hi: appendEnd(pre, iv.hi)})
			}
		}
		slices.SortFunc(p.Intervals, func(a, b Interval) int { return bytes.Compare(a.Lo, b.Lo) })
	}
	for p.PointFields < len(single) && single[p.PointFields] && p.PointFields < p.eqFields {
		p.PointFields++
	}
	p.Sorted, p.Reverse = providesSort(p.fields, p.fieldBounds, single, bounded, arr, paired, sort)
	if ix != nil && !multikey && ixColl == nil {
		p.keyFilters = keyFiltersOf(leaves, p.fields)
	}
	return p
}

// pairedLeaves are the leaves that may bound field i of a multikey index
// keyed by element (Index.PairedArrays), given the conditions bounding the
// fields before it (from). Where field i and a bounded field may run
// through one array along the start of their paths, their values in one
// key lie in one element of it, so only a condition within the same
// $elemMatch, on a path below the deepest such array and within what the
// two paths share, may bound field i: conditions elsewhere may be met by
// different elements (MongoDB compounds such bounds only under
// $elemMatch).
func pairedLeaves(leaves []*query.Node, fields []Field, arr arrays, from []*query.Node, i int) []*query.Node {
	out := leaves
	for j, src := range from[:i] {
		deepest := arr.deepestShared(fields, i, j)
		if src == nil || deepest < 0 {
			continue
		}
		var kept []*query.Node
		for _, l := range out {
			// (the $elemMatch's path starts both fields' paths)
			if pinsElement(l, src, deepest) {
				kept = append(kept, l)
			}
		}
		out = kept
	}
	return out
}

// appendEnd is the end of the keys starting with pre whose next field
// lies below hi: pre followed by hi, or the end of every key starting with
// pre when hi is empty (no field value lies past it).
func appendEnd(pre, hi []byte) []byte {
	if len(hi) == 0 {
		return keyenc.PrefixEnd(pre)
	}
	return append(slices.Clip(pre), hi...)
}

// positional reports whether a path has a numeric component. On a field
// that holds an array, such a component both selects an array element and
// names a field of the documents in the array, and a query matches either
// way while the index holds only the element (and selecting one does not
// make the index multikey): no index bounds or sorts such a path.
func positional(parts []string) bool {
	return slices.ContainsFunc(parts, allDigits)
}

// allDigits reports whether p is a non-empty run of decimal digits (the
// planner asks for each field of each plan: strings.Trim built its set
// of digits on each call).
func allDigits(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return p != ""
}

// providesSort reports whether scanning fields in order (or in reverse)
// yields the sort: the sort fields must follow the index fields, skipping
// only fields pinned to a single value. On a multikey index a scan meets a
// document first at its smallest key (largest, backward), which is its
// sort key only when the scan reads every key of the sort fields: as in
// MongoDB, a multikey index provides a sort only if the sort fields are
// unbounded. Nor does it when two of the sort fields share a leading path
// component: MongoDB's sort key takes such fields from one array element
// at a time ({"a.x": 1, "a.y": 1} keys a: [{x: 1, y: 5}, {x: 2, y: 0}] by
// (1, 5), as its index keys are built), while these index keys pair every
// value of one with every value of the other, so a scan meets the document
// first at (1, 0). Under another collation than the sort's, a sort field's
// bounds (fb) must hold no value the collation orders (sortReq).
func providesSort(fields []Field, fb []fieldBounds, single, bounded []bool, arr arrays, paired bool, sort sortReq) (sorted, reverse bool) {
	sortFields, sortDirs := sort.fields, sort.dirs
	if len(sortFields) == 0 {
		return false, false
	}
	j := 0
	dir := 0 // 1 forward, -1 backward, 0 undecided
	// before are the index fields of the sort fields before j
	var beforeBuf [8]int
	before := beforeBuf[:0]
	// A compound wildcard index's other fields never hold arrays (7246301):
	// its keys are multikey through the wildcard's paths only.
	wild := wildcardPos(fields) >= 0
	for i, f := range fields {
		if j == len(sortFields) {
			break
		}
		if f.Path == sortFields[j] {
			// A wildcard index keys no object inside an array at its
			// path (their fields have their own paths), which the sort
			// of an array compares: on a multikey path it sorts nothing.
			if positional(f.Parts) || f.Hashed || arr.field(i) && (wild && f.Wildcard || !wild && bounded[i]) ||
				sort.otherCollation && fb[i].collatable(f.Desc) {
				return false, false
			}
			if !wild && slices.ContainsFunc(before, func(k int) bool { return arr.shared(fields, i, k) }) {
				return false, false
			}
			if paired && sharesBoundedArray(fields, bounded, arr, i) {
				return false, false
			}
			before = append(before, i)
			d := sortDirs[j]
			if f.Desc {
				d = -d
			}
			if dir != 0 && d != dir {
				return false, false
			}
			dir = d
			j++
			continue
		}
		if !single[i] {
			return false, false
		}
	}
	return j == len(sortFields), dir < 0
}

// sharesBoundedArray reports whether a bounded field other than field i
// may run through one array with it. On a multikey index keyed by
// element, the scan then reads only the values of field i in the elements
// meeting the other field's bounds, not all of a document's, whose least
// or greatest is the document's sort key (MongoDB's index scan provides
// no sort on a multikey path sharing a component with non-trivial bounds).
func sharesBoundedArray(fields []Field, bounded []bool, arr arrays, i int) bool {
	for k := range fields {
		if k != i && bounded[k] && arr.shared(fields, i, k) {
			return true
		}
	}
	return false
}

// leavesCollator is the collation the query's comparisons follow (nil:
// simple, or none compares).
func leavesCollator(leaves []*query.Node) *collation.Collator {
	for _, n := range leaves {
		if c := n.Collator(); c != nil {
			return c
		}
	}
	return nil
}

// SimpleIDQuery is MongoDB's CanonicalQuery::isSimpleIdQuery, the filters
// an IDHACK answers: a field named _id alone, whose value gives exact
// index bounds (Indexability::isExactBoundsGenerating) or is a document
// that is not an operator expression ({_id: {$eq: 1}} is not one).
// MongoDB lets several _id fields through, and its IDHACK reads the
// document the first names; here a filter naming _id twice is planned as
// any other, so that the second condition is applied too.
func SimpleIDQuery(filter bson.Raw) bool {
	n := 0
	for it := rawdoc.Iterate(filter); ; n++ {
		k, v, ok := it.Next()
		if !ok {
			return n == 1
		}
		if n > 0 || string(k) != "_id" {
			return false
		}
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			if strings.HasPrefix(rawdoc.FirstKey(v.Value), "$") {
				return false
			}
		case bson.TypeInt64, bson.TypeDouble, bson.TypeInt32, bson.TypeDecimal128, bson.TypeString, bson.TypeBoolean,
			bson.TypeDateTime, bson.TypeTimestamp, bson.TypeObjectID, bson.TypeBinary, bson.TypeJavaScript,
			bson.TypeCodeWithScope, bson.TypeMinKey, bson.TypeMaxKey:
		default:
			return false
		}
	}
}
