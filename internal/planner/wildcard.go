package planner

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/query"
)

// Wildcard describes a wildcard index ($** or path.$**): its keys are
// (path, value) for every leaf of the paths it covers, an array's
// elements under the array's own path.
type Wildcard struct {
	// Covers reports whether the index holds the values at path (under
	// its prefix, within its wildcardProjection).
	Covers func(path string) bool
	// MultikeyPaths are the paths at which some document held an array.
	MultikeyPaths []string
}

// multikeyPrefixes are path and its prefixes at which an array was
// indexed, shortest first: MongoDB's multiKeyPaths of the path.
func (w *Wildcard) multikeyPrefixes(path string) []string {
	var out []string
	for _, m := range w.MultikeyPaths {
		if m == path || strings.HasPrefix(path, m+".") {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(a) - len(b) })
	return out
}

// expandWildcards replaces each wildcard index of indexes by one index per
// path the query's leaves bound that it covers, as MongoDB's planner
// expands a wildcard index: a key pattern {$_path: 1, <path>: 1} whose
// first field is pinned to the path. A wildcard index a query bounds on
// no covered path is left out.
func expandWildcards(indexes []Index, leaves []*query.Node) []Index {
	if !slices.ContainsFunc(indexes, func(ix Index) bool { return ix.Wildcard != nil }) {
		return indexes
	}
	out := make([]Index, 0, len(indexes))
	for _, ix := range indexes {
		if ix.Wildcard == nil {
			out = append(out, ix)
			continue
		}
		out = append(out, wildcardPaths(ix, leaves)...)
	}
	return out
}

// wildcardPaths are the per-path indexes of the wildcard index ix for
// the leaves, one per distinct path, in the leaves' order. A compound
// wildcard index bounding no path is read for the leaves on its other
// fields alone, across every path.
func wildcardPaths(ix Index, leaves []*query.Node) []Index {
	var out []Index
	var seen []string
	for _, n := range leaves {
		p := n.Path
		if slices.Contains(seen, p) || !ix.Wildcard.Covers(p) || !wildcardBounds(n) || !collationFits(n, ix.Collation) {
			continue
		}
		// A numeric component names a field, not an array position,
		// where no array was met along the path; after an array it may
		// be either, and the keys are read under every path it may be
		// stored at, for the conditions positionComparable allows.
		var paths []string
		if positional(strings.Split(p, ".")) && len(ix.Wildcard.multikeyPrefixes(p)) > 0 {
			paths = fieldNameOrArrayIndexPaths(p, ix.Wildcard.MultikeyPaths)
			if paths == nil || !positionComparable(n) {
				continue
			}
		}
		seen = append(seen, p)
		exp := ix.withWildcard(Field{Path: "$_path", Parts: []string{"$_path"}, WildcardOf: p, WildcardPaths: paths}, Field{Path: p, Parts: strings.Split(p, "."), Wildcard: true}, p)
		exp.MultikeyPaths = ix.Wildcard.multikeyPrefixes(p)
		exp.Multikey = len(exp.MultikeyPaths) > 0
		out = append(out, exp)
	}
	if len(out) == 0 && len(ix.Fields) > 2 && slices.ContainsFunc(leaves, func(n *query.Node) bool {
		return slices.ContainsFunc(ix.Fields, func(f Field) bool { return f.Path == n.Path })
	}) {
		w := wildcardPos(ix.Fields)
		exp := ix.withWildcard(ix.Fields[w], ix.Fields[w+1], ix.Fields[w+1].Path)
		exp.Multikey = true // a document's keys: one per path
		out = append(out, exp)
	}
	return out
}

// positionComparable reports whether the keys under the paths of
// fieldNameOrArrayIndexPaths answer leaf n: an equality, $in or range,
// which compare an array in an array (keyed whole, as a value) as a
// whole as the filter does; not $elemMatch, $type, $regex or $exists,
// which would look inside such an array.
func positionComparable(n *query.Node) bool {
	switch n.Kind {
	case query.KindEq, query.KindIn, query.KindLt, query.KindLte, query.KindGt, query.KindGte:
		return true
	}
	return false
}

// fieldNameOrArrayIndexPaths are the paths under which a wildcard index
// may hold the values of query path p whose last component is numeric
// and follows a path the index met an array at (MongoDB's planner
// expands such a path with generateFieldNameOrArrayIndexPathSet): the
// component may name a field (p) or an array position, whose element the
// index keys under the array's path. Nil for any other numeric
// component after an array: the element there may be an array in an
// array, which the index keys as a whole value, not by its elements'
// fields, so no path holds what the filter reads through it.
func fieldNameOrArrayIndexPaths(p string, multikey []string) []string {
	parts := strings.Split(p, ".")
	for i := 1; i < len(parts); i++ {
		if allDigits(parts[i]) && slices.ContainsFunc(multikey, func(m string) bool { return m == strings.Join(parts[:i], ".") }) {
			if i < len(parts)-1 {
				return nil
			}
			return []string{strings.Join(parts[:i], "."), p}
		}
	}
	return nil
}

// wildcardPos is the position of a wildcard index's $_path field.
func wildcardPos(fields []Field) int {
	return slices.IndexFunc(fields, func(f Field) bool { return f.Path == "$_path" })
}

// withWildcard is the wildcard index ix with its path and value fields
// replaced, named valueKey in the key pattern.
func (ix Index) withWildcard(path, value Field, valueKey string) Index {
	w := wildcardPos(ix.Fields)
	fields := slices.Clone(ix.Fields)
	fields[w], fields[w+1] = path, value
	var key bson.D
	elems, _ := ix.KeyPattern.Elements()
	for i, el := range elems {
		if i == w {
			key = append(key, bson.E{Key: "$_path", Value: int32(1)}, bson.E{Key: valueKey, Value: int32(1)})
			continue
		}
		key = append(key, bson.E{Key: el.Key(), Value: el.Value()})
	}
	kp, _ := bson.Marshal(key)
	return Index{Name: ix.Name, KeyPattern: kp, Partial: ix.Partial, Ref: ix.Ref, Fields: fields, Collation: ix.Collation}
}

// WildcardPath is the path a wildcard index expanded for one path scans,
// "" for any other index (a compound wildcard index read across every
// path included).
func (ix *Index) WildcardPath() string {
	if w := wildcardPos(ix.Fields); w >= 0 {
		return ix.Fields[w].WildcardOf
	}
	return ""
}

// wildcardBounds reports whether a wildcard index bounds leaf n. It holds
// no key for a missing field, and an object or array value only through
// its leaves, so it answers neither null, nor equality with an object or
// an array, nor comparisons with them (MongoDB's wildcard restrictions,
// planner_ixselect's canUseWildcardIndex), except $lte: {}, which type
// bracketing makes equality with the empty object the index keys.
func wildcardBounds(n *query.Node) bool {
	switch n.Kind {
	case query.KindEq:
		return wildcardEq(n.Value)
	case query.KindLte:
		if n.Value.Type == bson.TypeEmbeddedDocument {
			return len(n.Value.Value) == 5
		}
		return wildcardPoint(n.Value) && n.Value.Type != bson.TypeMinKey && n.Value.Type != bson.TypeMaxKey
	case query.KindIn:
		vals, err := n.Value.Array().Values()
		if err != nil || len(vals) == 0 {
			return false
		}
		for _, v := range vals {
			if !wildcardEq(v) {
				return false
			}
		}
		return true
	case query.KindGt, query.KindGte, query.KindLt:
		return wildcardPoint(n.Value) && n.Value.Type != bson.TypeMinKey && n.Value.Type != bson.TypeMaxKey
	case query.KindRegex, query.KindExists, query.KindType:
		return true
	case query.KindElemMatchValue:
		// Every operator must be one the index answers (planner_ixselect's
		// _compatible for ELEM_MATCH_VALUE) and bounds the element's values.
		for _, ch := range n.Children {
			if wildcardSubpaths(ch) || !wildcardBounds(ch) {
				return false
			}
		}
		return len(n.Children) > 0
	}
	return false
}

// wildcardEq reports whether the index answers equality with v: a
// scalar, or an empty object or array (keyed as themselves, an empty
// array as undefined), as MongoDB's wildcard indexes do; not another
// object or array, which MongoDB leaves to other plans.
func wildcardEq(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		return len(v.Value) == 5
	}
	return wildcardPoint(v)
}

func wildcardPoint(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeNull, bson.TypeUndefined, bson.TypeEmbeddedDocument, bson.TypeArray:
		return false
	}
	return true
}

// wildcardPathBounds are the bounds of the $_path field for path: the
// path itself when a condition bounds its values, else (only $exists)
// the path and every path below it, whose keys an object at path leaves.
func wildcardPathBounds(leaves []*query.Node, path string) fieldBounds {
	exists := false
	for _, n := range leaves {
		if n.Path != path || !wildcardBounds(n) {
			continue
		}
		if !wildcardSubpaths(n) {
			return pathPoint(path)
		}
		exists = true
	}
	if !exists {
		return fieldBounds{}
	}
	fb := pathPoint(path)
	fb.point = false
	below := bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, path+".")}
	end := bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, path+"/")}
	fb.ivs = append(fb.ivs, fieldInterval{
		lo: keyenc.AppendField(nil, below, false), hi: keyenc.AppendField(nil, end, false),
		loVal: below, hiVal: end, loIncl: true,
	})
	return fb
}

func pathPoint(path string) fieldBounds {
	fb, _ := pointBounds([]bson.RawValue{{Type: bson.TypeString, Value: bsoncore.AppendString(nil, path)}}, false)
	return fb
}

// wildcardSubpaths reports whether leaf n holds of a path whose object
// or array value the index keys only below it: $exists, and $type naming
// object or array (whose values it then leaves unbounded).
func wildcardSubpaths(n *query.Node) bool {
	switch n.Kind {
	case query.KindExists:
		return true
	case query.KindType:
		types := n.Types()
		return slices.Contains(types, bson.TypeEmbeddedDocument) || slices.Contains(types, bson.TypeArray)
	}
	return false
}

// wildcardValueBounds are the bounds on the values of a wildcard index's
// path: those of its equalities, $in lists, ranges and prefix regexes as
// on any field (strings as keys of coll, the index's collation), leaving
// out the conditions the index cannot answer.
func wildcardValueBounds(leaves []*query.Node, f Field, multikey bool, coll *collation.Collator) fieldBounds {
	var usable []*query.Node
	for _, n := range leaves {
		if n.Path == f.Path && !wildcardSubpaths(n) && wildcardBounds(n) {
			usable = append(usable, n)
		}
	}
	return keyBounds(usable, Field{Path: f.Path, Parts: f.Parts}, multikey, coll)
}

// WildcardHintFits reports whether a query with filter f may hint the
// wildcard index ix: it must bound a path the index covers, or each
// branch of a $or must (MongoDB otherwise finds no query solution).
func WildcardHintFits(ix *Index, f *query.Filter) bool {
	return hintedWildcardPlan(ix, constraintLeaves(f.Root()), sortReq{}) != nil
}

// hintedWildcard plans a query hinting a wildcard index: its best
// expansion for the query, or a collection scan when the query bounds no
// path it covers (which callers refuse first, see WildcardHintFits).
func hintedWildcard(ix *Index, idPlan *Plan, leaves []*query.Node, sort sortReq) []*Plan {
	if best := hintedWildcardPlan(ix, leaves, sort); best != nil {
		return []*Plan{best}
	}
	return []*Plan{idPlan}
}

// hintedWildcardPlan is the best plan of a query on the wildcard index ix
// alone: its best expansion, else a union over a $or whose every branch
// it bounds; nil when there is none.
func hintedWildcardPlan(ix *Index, leaves []*query.Node, sort sortReq) *Plan {
	var best *Plan
	for _, exp := range wildcardPaths(*ix, leaves) {
		p := build(&exp, leaves, sort)
		if best == nil || Score(p) > Score(best) {
			best = p
		}
	}
	if best == nil {
		if ors := orPlans([]Index{*ix}, leaves, nil, false); len(ors) > 0 {
			best = ors[0]
		}
	}
	return best
}
