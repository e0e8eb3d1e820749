package engine

import (
	"bytes"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
)

// maxIntervals bounds how many key intervals one plan scans (the product of
// $in lists over compound fields); past it the remaining fields are left
// unbounded.
const maxIntervals = 256

// plan is how a query reads its candidates: a scan of the document store
// in _id order (ix nil) or of a secondary index, over key intervals. Every
// candidate is still checked against the whole filter, so the intervals
// need only contain every matching document's keys.
type plan struct {
	ix        *Index
	keyPrefix []byte     // the document space of the collection, or the index's span
	intervals []interval // sorted, disjoint; nil scans the whole span
	reverse   bool
	// sorted reports that the scan yields the requested sort order.
	sorted bool
	// bounds describe the bounds of each bounded field, for explain.
	bounds bson.D
	// checks are the bounds of fields after those the intervals bound,
	// tested on each key before its document is fetched.
	checks []keyCheck
	// ranged reports that the intervals bound a field by a range after
	// the points.
	ranged bool
	fields []IndexField
	// pointFields counts the leading fields pinned to a single value,
	// eqFields those bounded by points only (equalities and $in).
	pointFields int
	eqFields    int
	// natural scans a capped collection's insertion order.
	natural bool
	// multikey is the index's multikey flag the plan was built with; the
	// query and collection it was built from let it be rebuilt (rebuilt).
	multikey   bool
	c          *Collection
	leaves     []*query.Node
	sortFields []string
	sortDirs   []int
}

// rebuilt returns the plan again if its index turned multikey after it
// was built (the plan may intersect ranges or take a sort from bounded
// fields, which a multikey index does not allow), else p. Called once the
// scan's snapshot is taken: a write sets the flag before it commits, so a
// snapshot holding an array the index expanded sees the flag set.
func (p *plan) rebuilt() *plan {
	if p.ix == nil || p.multikey || !p.ix.Multikey() {
		return p
	}
	return buildPlan(p.c, p.ix, p.leaves, p.sortFields, p.sortDirs)
}

// useNatural turns a plain scan of a capped collection into a scan of its
// insertion order, which is its natural order.
func (p *plan) useNatural(c *Collection) {
	if c.capped == nil || p.ix != nil || p.intervals != nil {
		return
	}
	p.natural = true
	p.keyPrefix = naturalPrefix(c.ID)
}

// idPoint reports whether the plan reads one document by its _id.
func (p *plan) idPoint() bool {
	return p.ix == nil && !p.natural && p.pointFields == 1 && len(p.intervals) == 1
}

// fetches reports whether the plan's entries hold encoded _ids to fetch
// documents by, rather than the documents themselves.
func (p *plan) fetches() bool { return p.ix != nil || p.natural }

// interval is a run of whole keys, [lo, hi).
type interval struct{ lo, hi []byte }

// idFields is the document store seen as an index on _id.
var idFields = []IndexField{{Path: "_id", parts: []string{"_id"}}}

// maxCandidates bounds the plans a trial runs.
const maxCandidates = 8

// candidatePlans lists the access paths for filter and sort on c, best
// first by score: the hinted index alone; a read of one _id alone;
// else every index (and the _id order) that bounds the query or yields
// its sort; else a scan of the document store. Indexes that may lack a
// matching document (partial, sparse) are used only when the query proves
// they hold every match.
func candidatePlans(c *Collection, f *query.Filter, sort *query.Sort, hint *Index, hintID bool) []*plan {
	var sortFields []string
	var sortDirs []int
	if sort != nil {
		sortFields, sortDirs = sort.Fields()
	}
	leaves := constraintLeaves(f.Root())
	idPlan := buildPlan(c, nil, leaves, sortFields, sortDirs)
	if hintID {
		return []*plan{idPlan}
	}
	if hint != nil {
		return []*plan{buildPlan(c, hint, leaves, sortFields, sortDirs)}
	}
	if idPlan.idPoint() {
		return []*plan{idPlan}
	}
	var out []*plan
	if score(idPlan) > 0 {
		out = append(out, idPlan)
	}
	for _, ix := range c.Indexes() {
		if ix.Hidden || !holdsEveryMatch(leaves, ix) {
			continue
		}
		if p := buildPlan(c, ix, leaves, sortFields, sortDirs); score(p) > 0 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return []*plan{idPlan}
	}
	slices.SortStableFunc(out, func(a, b *plan) int { return score(b) - score(a) })
	if len(out) > maxCandidates {
		out = out[:maxCandidates]
	}
	return out
}

// score ranks plans: leading fields pinned to points count most, then
// a further field bounded by a range, then a provided sort (equality
// before range before sort), then the fields checked on the keys.
func score(p *plan) int {
	s := 0
	if p.intervals != nil {
		s += 16 * p.eqFields
		if p.ranged {
			s += 4
		}
		s += len(p.checks)
	}
	if p.sorted {
		s += 2
	}
	return s
}

// holdsEveryMatch reports whether ix holds an entry for every document the
// query (given by its conjunct leaves) can match: a partial index only
// when the query implies its filter, a sparse one only when the query
// cannot match a document missing all of its fields.
func holdsEveryMatch(leaves []*query.Node, ix *Index) bool {
	if ix.partial != nil && !implies(leaves, ix.partial) {
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

// constraintLeaves are the conditions every match satisfies: the top-level
// conjuncts, and the conditions inside $elemMatch on documents, with their
// paths made absolute.
func constraintLeaves(root *query.Node) []*query.Node {
	var out []*query.Node
	var add func(n *query.Node, prefix string)
	add = func(n *query.Node, prefix string) {
		switch n.Kind {
		case query.KindAnd:
			for _, ch := range n.Children {
				add(ch, prefix)
			}
		case query.KindElemMatchObject:
			for _, ch := range n.Children {
				add(ch, joinPath(prefix, n.Path))
			}
		default:
			if prefix != "" {
				cp := *n
				cp.Path = joinPath(prefix, n.Path)
				n = &cp
			}
			out = append(out, n)
		}
	}
	add(root, "")
	return out
}

func joinPath(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// buildPlan derives the scan of ix (nil: the document store) for the
// query: the product of the leading fields' points, then the intervals of
// the next bounded field; the bounds of the fields after those are checked
// on each key (see planSource.checkKey).
func buildPlan(c *Collection, ix *Index, leaves []*query.Node, sortFields []string, sortDirs []int) *plan {
	multikey := ix != nil && ix.Multikey()
	p := &plan{ix: ix, fields: idFields, keyPrefix: docPrefix(c.ID),
		multikey: multikey, c: c, leaves: leaves, sortFields: sortFields, sortDirs: sortDirs}
	if ix != nil {
		p.fields = ix.Fields
		p.keyPrefix = indexPrefix(c.ID, ix.ID)
	}
	prefixes := [][]byte{p.keyPrefix}
	single := make([]bool, len(p.fields))
	bounded := make([]bool, len(p.fields))
	var last *fieldBounds // a field bounded by ranges, ending the intervals
	leading := true       // the fields so far are points making intervals
	for i, f := range p.fields {
		if positional(f.parts) {
			leading = false
			continue
		}
		fb := boundsFor(leaves, f, multikey)
		if fb.empty() {
			leading = false
			continue
		}
		p.bounds = append(p.bounds, bson.E{Key: f.Path, Value: fb.shown()})
		bounded[i] = true
		single[i] = fb.single()
		if !leading || len(prefixes)*len(fb.ivs) > maxIntervals {
			leading = false
			p.checks = append(p.checks, keyCheck{field: i, bounds: fb})
			continue
		}
		if !fb.point {
			last, leading = &fb, false
			p.ranged = true
			continue
		}
		p.eqFields++
		next := make([][]byte, 0, len(prefixes)*len(fb.ivs))
		for _, pre := range prefixes {
			for _, iv := range fb.ivs {
				next = append(next, append(slices.Clip(pre), iv.lo...))
			}
		}
		prefixes = next
	}
	if p.eqFields > 0 || last != nil {
		for _, pre := range prefixes {
			if last == nil {
				p.intervals = append(p.intervals, interval{lo: pre, hi: keyenc.PrefixEnd(pre)})
				continue
			}
			for _, iv := range last.ivs {
				p.intervals = append(p.intervals, interval{lo: append(slices.Clip(pre), iv.lo...), hi: append(slices.Clip(pre), iv.hi...)})
			}
		}
		slices.SortFunc(p.intervals, func(a, b interval) int { return bytes.Compare(a.lo, b.lo) })
	}
	for p.pointFields < len(single) && single[p.pointFields] && p.pointFields < p.eqFields {
		p.pointFields++
	}
	p.sorted, p.reverse = providesSort(p.fields, single, bounded, multikey, sortFields, sortDirs)
	return p
}

// positional reports whether a path has a numeric component. On a field
// that holds an array, such a component both selects an array element and
// names a field of the documents in the array, and a query matches either
// way while the index holds only the element (and selecting one does not
// make the index multikey): no index bounds or sorts such a path.
func positional(parts []string) bool {
	for _, p := range parts {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			return true
		}
	}
	return false
}

// providesSort reports whether scanning fields in order (or in reverse)
// yields the sort: the sort fields must follow the index fields, skipping
// only fields pinned to a single value. On a multikey index a scan meets a
// document first at its smallest key (largest, backward), which is its
// sort key only when the scan reads every key of the sort fields: as in
// MongoDB, a multikey index provides a sort only if the sort fields are
// unbounded.
func providesSort(fields []IndexField, single, bounded []bool, multikey bool, sortFields []string, sortDirs []int) (sorted, reverse bool) {
	if len(sortFields) == 0 {
		return false, false
	}
	j := 0
	dir := 0 // 1 forward, -1 backward, 0 undecided
	for i, f := range fields {
		if j == len(sortFields) {
			break
		}
		if f.Path == sortFields[j] {
			if positional(f.parts) || multikey && bounded[i] {
				return false, false
			}
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
