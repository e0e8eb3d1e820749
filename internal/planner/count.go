package planner

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// CountScan reports whether the plan's keys alone decide the filter: each
// key in its intervals that passes its key checks is the key of one
// matching document, so a count need fetch nothing (MongoDB's COUNT_SCAN,
// or a COUNT over an IXSCAN without FETCH).
// Under an index's collation, the collation keys of its bounds decide
// the filter too, as MongoDB counts them with a COUNT_SCAN. On a multikey
// index a matching document may have several keys in the bounds: the
// count counts each document once (CountDedups).
func (p *Plan) CountScan() bool { return p.exact || p.countExact || p.multikeyExact || p.nullExact }

// CountDedups reports that the plan's keys decide the filter on a
// multikey index (CountScan), where a document may have several keys in
// the bounds: a count counts the distinct documents of the keys, as
// MongoDB's COUNT_SCAN drops the record ids it has seen when its index is
// multikey.
func (p *Plan) CountDedups() bool { return p.multikeyExact }

// setExact decides p.exact for the filter root: p scans a secondary index
// that is not multikey (a document has one key, and ranges intersect),
// and the filter is a conjunction of equalities, $in lists and
// comparisons (a regex that is a literal prefix among them) on index
// fields that the bounds express exactly: on each field either one
// equality or $in and nothing else, or comparisons only; no null or
// undefined (the index holds missing fields as null), arrays, regexes or,
// in a comparison, NaN among the values.
func (p *Plan) setExact(root *query.Node) {
	if collated(root) || p.coll != nil {
		// Collation keys are not the values: a covered read or a
		// distinct scan could not answer with the strings (MongoDB
		// fetches too). They decide a filter whose every comparison
		// bounds the index (its collation, or no string), for a count.
		p.exact, p.idDecides, p.multikeyExact, p.nullExact = false, false, false, false
		p.countExact = p.coll != nil && p.Index != nil && !p.multikey && p.Or == nil && p.checks == nil &&
			allFit(root, p.coll) && decides([]*query.Node{root}, p.fields, true)
		return
	}
	p.exact = p.Index != nil && !p.multikey && p.Or == nil && decides([]*query.Node{root}, p.fields, false)
	p.nullExact = !p.exact && p.Index != nil && !p.multikey && p.Or == nil && !wildcardFields(p.fields) &&
		decidesUses([]*query.Node{root}, p.fields, false, nil, true)
	p.multikeyExact = p.Index != nil && p.multikey && p.Or == nil && !wildcardFields(p.fields) &&
		decidesMultikey([]*query.Node{root}, p.fields, p.fieldBounds)
	p.idDecides = p.Index == nil && !p.Natural && p.Or == nil && p.Intervals != nil && p.checks == nil &&
		decides([]*query.Node{root}, p.fields, false)
}

// setExactPaths decides p.exactPaths for the filter root: the paths of
// the index fields (or _id, for a scan of the documents by _id ranges)
// whose bounds the plan scans, not open, and whose top-level predicates
// all the bounds express exactly (decides), on an index that is neither
// multikey, hashed on them, wildcard nor under a collation. MongoDB's
// planner drops such predicates from the FETCH above the scan (their
// bounds are EXACT: QueryPlannerAccess keeps only the others as the
// FETCH's filter), so its explain shows only the rest.
func (p *Plan) setExactPaths(root *query.Node) {
	p.exactPaths = nil
	if root == nil || p.Or != nil || p.multikey || p.Natural || p.Intervals == nil || p.Text != nil || p.Geo != nil ||
		p.coll != nil || collated(root) || p.Index != nil && p.Index.Wildcard != nil {
		return
	}
	conj := []*query.Node{root}
	if root.Kind == query.KindAnd {
		conj = root.Children
	}
	var onBuf [4]*query.Node
	for i, f := range p.fields {
		if i >= len(p.fieldBounds) || p.fieldBounds[i].empty() || f.Hashed || positional(f.Parts) {
			continue
		}
		on := onBuf[:0]
		for _, n := range conj {
			if n.Path == f.Path {
				on = append(on, n)
			}
		}
		if decides(on, p.fields, false) {
			p.exactPaths = append(p.exactPaths, f.Path)
		}
	}
}

// keyFiltered splits filter, the FETCH's, into what the FETCH still
// tests and the top-level fields the plan's key filters decide alone
// (keyFilter), which MongoDB shows as the IXSCAN's filter instead; keyed
// is nil when there are none.
func (p *Plan) keyFiltered(filter bson.Raw) (fetch, keyed bson.Raw) {
	if p.keyFilters == nil {
		return filter, nil
	}
	return splitTop(filter, func(path string) bool {
		n := 0
		for _, l := range p.leaves {
			if l.Path != path {
				continue
			}
			if !slices.ContainsFunc(p.keyFilters, func(kf keyFilter) bool { return kf.cond == l }) {
				return false
			}
			n++
		}
		return n > 0
	})
}

// residual is filter without its top-level fields the plan's bounds
// answer exactly (setExactPaths): the filter of the FETCH above the
// scan.
func (p *Plan) residual(filter bson.Raw) bson.Raw {
	if len(p.exactPaths) == 0 {
		return filter
	}
	rest, _ := splitTop(filter, func(path string) bool { return slices.Contains(p.exactPaths, path) })
	return rest
}

// splitTop splits filter into the rest and the top-level fields take
// picks (nil when none, rest then filter itself). A field written twice,
// or under an operator ($and, $or), stays in the rest.
func splitTop(filter bson.Raw, take func(path string) bool) (rest, taken bson.Raw) {
	elems, err := filter.Elements()
	if err != nil {
		return filter, nil
	}
	seen := map[string]int{}
	for _, e := range elems {
		seen[e.Key()]++
	}
	rstart, rout := bsoncore.AppendDocumentStart(nil)
	tstart, tout := bsoncore.AppendDocumentStart(nil)
	moved := false
	for _, e := range elems {
		if seen[e.Key()] == 1 && take(e.Key()) {
			tout = append(tout, e...)
			moved = true
			continue
		}
		rout = append(rout, e...)
	}
	if !moved {
		return filter, nil
	}
	rout, _ = bsoncore.AppendDocumentEnd(rout, rstart)
	tout, _ = bsoncore.AppendDocumentEnd(tout, tstart)
	return rout, tout
}

// IDRangeDecides reports whether the plan scans the documents by ranges
// of _id that decide the filter: every document in them matches (an _id
// is never an array, so the bounds are as exact as a non-multikey
// index's; see setExact).
func (p *Plan) IDRangeDecides() bool { return p.idDecides }

// decides reports whether bounds on fields (not multikey) express the
// conjunction of nodes exactly (see setExact); collated: the fields are
// an index's under a collation, whose bounds of a regex are every string.
func decides(nodes []*query.Node, fields []Field, collated bool) bool {
	return decidesUses(nodes, fields, collated, nil, false)
}

// decidesMultikey reports whether the bounds (fb, by field) of a multikey
// index express the conjunction of nodes exactly: as decides, with one
// condition at most on each field, whose bounds are that field's (the
// elements of one array may each satisfy one of two conditions, so a
// multikey field's bounds come from one, and a field sharing an array
// with a bounded one may be left unbounded: MongoDB keeps such
// conditions as a filter), and no MinKey or MaxKey operand (an array's
// bounds keep the ends a comparison with them excludes).
func decidesMultikey(nodes []*query.Node, fields []Field, fb []fieldBounds) bool {
	return decidesUses(nodes, fields, false, fb, false)
}

// wildcardFields reports whether fields are a wildcard index's expanded
// for a path, whose multikey paths' keys are left to the filter.
func wildcardFields(fields []Field) bool {
	return slices.ContainsFunc(fields, func(f Field) bool { return f.Wildcard || f.WildcardOf != "" })
}

// decidesUses is decides, and decidesMultikey when multikey holds the
// fields' bounds; nulls admits equalities with null (see nullExact).
func decidesUses(nodes []*query.Node, fields []Field, collated bool, multikey []fieldBounds, nulls bool) bool {
	// uses counts, per field (by position), the points and the ranges
	// on it; a plan has few fields.
	var usesBuf [8]fieldUse
	uses := usesBuf[:0]
	if len(fields) > len(usesBuf) {
		uses = make([]fieldUse, 0, len(fields))
	}
	uses = uses[:len(fields)]
	for _, n := range nodes {
		if n == nil || !decidesNode(n, fields, uses, collated, multikey != nil, nulls) {
			return false
		}
	}
	for i, u := range uses {
		if u.points > 1 || u.points == 1 && u.ranges > 0 {
			return false
		}
		if multikey != nil && u.points+u.ranges > 0 && (u.ranges > 1 || i >= len(multikey) || multikey[i].empty()) {
			return false
		}
	}
	return len(nodes) > 0
}

// fieldUse counts the points and the ranges a filter puts on one field.
type fieldUse struct{ points, ranges int }

// decidesNode reports whether bounds on fields express n exactly,
// counting in uses (by field position) the points and ranges it puts on
// each field.
func decidesNode(n *query.Node, fields []Field, uses []fieldUse, collated, multikey, nulls bool) bool {
	if n.Kind == query.KindAnd {
		for _, ch := range n.Children {
			if !decidesNode(ch, fields, uses, collated, multikey, nulls) {
				return false
			}
		}
		return true
	}
	if n.Kind == query.KindNot {
		return !collated && !multikey && decidesNegation(n, fields, uses)
	}
	// u is the use of the field at n's path whose bounds hold leaf n: a
	// wildcard index's leave out the conditions it does not answer
	// (wildcardBounds: comparisons with MinKey or MaxKey among them),
	// which stay the filter's.
	var u *fieldUse
	for i, f := range fields {
		if f.Path == n.Path && !positional(f.Parts) && !f.Hashed && (!f.Wildcard || wildcardBounds(n)) {
			u = &uses[i]
			break
		}
	}
	if u == nil {
		return false
	}
	switch n.Kind {
	case query.KindEq:
		u.points++
		return exactPoint(n.Value, true) || nulls && n.Value.Type == bson.TypeNull
	case query.KindIn:
		u.points++
		vals, err := n.Value.Array().Values()
		if err != nil || len(vals) == 0 {
			return false
		}
		for _, v := range vals {
			if !exactPoint(v, true) {
				return false
			}
		}
		return true
	case query.KindGt, query.KindGte, query.KindLt, query.KindLte:
		u.ranges++
		if t := n.Value.Type; multikey && (t == bson.TypeMinKey || t == bson.TypeMaxKey) {
			return false
		}
		return exactPoint(n.Value, false)
	case query.KindRegex:
		// an index under a collation is scanned over every string
		u.ranges++
		return !collated && wholePrefix(n)
	}
	return false
}

// decidesNegation reports whether bounds on fields, none holding arrays,
// express n exactly: a $not of an equality, $in or comparison ($ne, $nin,
// {$not: {$lt: 3}}) whose own bounds are exact, or which is an equality
// or $in with null, bounded by their complement (complementBounds). As
// MongoDB's index_bounds_builder makes a NOT's bounds EXACT (its child's
// were, or isEqualityOrInNull) unless the path is multikey. Counted as a
// range on its field.
func decidesNegation(n *query.Node, fields []Field, uses []fieldUse) bool {
	if len(n.Children) != 1 {
		return false
	}
	ch := n.Children[0]
	vals := []bson.RawValue{ch.Value}
	switch ch.Kind {
	case query.KindIn:
		var err error
		if vals, err = ch.Value.Array().Values(); err != nil || len(vals) == 0 {
			return false
		}
	case query.KindEq, query.KindGt, query.KindGte, query.KindLt, query.KindLte:
	default:
		return false
	}
	eq := ch.Kind == query.KindEq || ch.Kind == query.KindIn
	for _, v := range vals {
		if !(eq && v.Type == bson.TypeNull) && !exactPoint(v, eq) {
			return false
		}
	}
	for i, f := range fields {
		if f.Path != ch.Path || positional(f.Parts) || f.Hashed || f.Wildcard || f.WildcardOf != "" {
			continue
		}
		if complementBounds(ch, f, false).empty() {
			return false
		}
		uses[i].ranges++
		return true
	}
	return false
}

// wholePrefix reports whether n is a regex that is a literal prefix and
// nothing else (/^abc/): its bounds, the strings starting with the prefix
// and the regex itself, hold exactly what it matches (simpleRegex's EXACT
// tightness).
func wholePrefix(n *query.Node) bool {
	pattern, opts := n.Value.Regex()
	_, whole, _ := regexPrefix(pattern, opts)
	return whole
}

// exactPoint reports whether index bounds express matching v exactly; eq
// says v is an equality's ($eq, $in value). NaN's point holds every NaN,
// double or decimal, and only them, so it decides an equality with NaN; a
// comparison with NaN is left to the filter (nanComparisonBounds: a point,
// or no key, which a count scan has no ends for).
func exactPoint(v bson.RawValue, eq bool) bool {
	switch v.Type {
	case bson.TypeNull, bson.TypeUndefined, bson.TypeArray, bson.TypeRegex:
		return false
	}
	return eq || !values.IsNumber(v.Type) || !isNaN(v)
}

// Covered lists, in key order, the positions of the index fields a
// covered plan answers with (MongoDB's PROJECTION_COVERED; none, not nil,
// for a find that needs only the keys, Query.KeysOnly): nil unless
// the keys decide the filter (CountScan) and the projection includes only
// top-level index fields whose keys are their values (the filter bounds
// the others), excluding _id unless the index holds it. On a multikey
// index the keys may decide the filter too (decidesMultikey), and the
// projection may then name only fields no document held an array under
// (Index.FieldArrays): each key of a document holds their one value, as
// MongoDB's IndexScanNode::hasField provides a field whose multikey path
// is empty (jstests/core/query/covered_multikey.js). With equalities to
// null (nullExact) the projection may name only _id, which no document
// lacks: a null key stands for null, undefined or missing, and MongoDB
// fetches to tell them apart for any other field (cover_null_queries.js:
// {_id: 1, b: 1} fetches though the index holds b). The plan's reads then
// build each result from the key's values without fetching a document.
// A sort the scan does not give sorts those results (MongoDB's SORT over
// the index keys, below its PROJECTION_COVERED), so it may name only
// fields they hold.
func (p *Plan) Covered() []int { return p.covered }

// setCovered decides p.covered for a projection spec; sorted reports that
// the query's sort, if any, is the scan's order, else sort is the
// blocking sort the covered results must hold the fields of.
func (p *Plan) setCovered(spec bson.Raw, sorted bool, sort *query.Sort) {
	p.covered = nil
	if !(p.exact || p.multikeyExact || p.nullExact) || len(spec) == 0 || !sorted && (sort == nil || sort.ByMeta() || sort.Natural() != 0) {
		return
	}
	elems, err := spec.Elements()
	if err != nil {
		return
	}
	include := map[string]bool{}
	id := true
	for _, el := range elems {
		key, v := el.Key(), el.Value()
		on, ok := projectionFlag(v)
		if !ok {
			return
		}
		if key == "_id" {
			id = on
			continue
		}
		if !on || strings.ContainsAny(key, ".$") {
			return
		}
		include[key] = true
	}
	if id {
		include["_id"] = true
	}
	var out []int
	arr := arrays{ix: p.Index, multikey: p.multikey}
	for i, f := range p.fields {
		if include[f.Path] {
			if p.fieldBounds[i].empty() && !valueKeyed(f) || arr.field(i) || p.nullExact && f.Path != "_id" {
				return
			}
			out = append(out, i)
			delete(include, f.Path)
		}
	}
	if len(include) > 0 || out == nil {
		return
	}
	if !sorted {
		fields, _ := sort.Fields()
		for _, f := range fields {
			if !slices.ContainsFunc(out, func(i int) bool { return p.fields[i].Path == f }) {
				return
			}
		}
	}
	p.covered = out
}

// valueKeyed reports whether f's keys are its values (not hashes, cells,
// terms or a wildcard's expansion), so that a covered read may answer with
// them though the filter does not bound f: a document lacking f answers
// null, its key, as MongoDB's PROJECTION_COVERED does
// (jstests/core/index/covered/covered_index_sort_1.js covers
// find({}, {foo: 1, _id: 0}).hint({foo: 1}) over documents without foo).
func valueKeyed(f Field) bool {
	return !f.Hashed && !f.Text && !f.Geo && !f.Flat && !f.Wildcard && f.WildcardOf == ""
}

// setKeysOnly makes p covered with no field for a find that needs only
// its index keys (Query.KeysOnly) when p scans a secondary index whose
// keys decide the filter (exact) and, sorted reports, give the query's
// sort: its reads then fetch no document. A wildcard index qualifies
// once expanded for one path (Index.Wildcard is then nil), whose keys
// ({$_path, path}) decide as a single field's do; unexpanded, it never
// does.
func (p *Plan) setKeysOnly(sorted bool) {
	if (p.exact || p.nullExact) && sorted && p.Index != nil && p.Index.Wildcard == nil {
		p.covered = []int{}
	}
}

// allFit reports whether every condition of a filter may bound an index
// whose keys follow coll (collationFits): the same collation, or no
// string among its operands.
func allFit(root *query.Node, coll *collation.Collator) bool {
	return !slices.ContainsFunc(pathLeaves(root), func(n *query.Node) bool { return !collationFits(n, coll) })
}

// collated reports whether a filter's comparisons follow a collation.
func collated(root *query.Node) bool {
	found := false
	query.Walk(root, func(n *query.Node) bool {
		found = found || n.Collator() != nil
		return !found
	})
	return found
}
