package engine

import (
	"github.com/folio-db/folio/internal/planner"

	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
)

// A query's shape is what MongoDB's classic plan cache keys plans by
// (manual, "Query Plans": queryHash): the filter's operators and field
// paths without their values, the sort and the projection. As in MongoDB's
// canonical form, the order of conjuncts and disjuncts does not matter, a
// one-element $in is an equality, and some values still count: regex flags
// (of a $regex, or of the regexes in an $in), comparisons with MinKey and
// MaxKey, and negations of equality with null, which need their own plans.
// The collation is part of it: which indexes bound strings depends on it.

// shapeOf encodes the shape of the filter f, the sort and the projection
// (as written; nil for none).
func shapeOf(f *query.Filter, sortDoc, projDoc bson.Raw) string {
	s, _ := encodeShape(f, sortDoc, projDoc)
	return s
}

// encodeShape is shapeOf, with the length of its part before the
// collation.
func encodeShape(f *query.Filter, sortDoc, projDoc bson.Raw) (string, int) {
	var b strings.Builder
	encodeNode(&b, f.Root())
	encodeSort(&b, sortDoc)
	encodeProjection(&b, projDoc)
	base := b.Len()
	if c := f.Collator(); c != nil {
		b.WriteString("|c")
		b.Write(c.Document())
	}
	return b.String(), base
}

// shapes returns q's shape and its command shape: the shape the plan
// cache commands name it by (planCacheClear, the index filters), which
// has the collation the command gave but not the collection's default a
// query inherits, as MongoDB's encodeForPlanCacheCommand encodes only a
// user-specified collation. A filter or planCacheClear given no collation
// thus names the queries that give none, on a collection with a default
// collation too (jstest index_filter_collation.js).
func (q compiledFind) shapes() (shape, cmdShape string) {
	shape, base := encodeShape(q.filter, q.sortDoc, q.projDoc)
	if q.inheritedCollation {
		return shape, shape[:base]
	}
	return shape, shape
}

// commandShape is q's command shape (shapes).
func (q compiledFind) commandShape() string {
	_, s := q.shapes()
	return s
}

// encodeNode appends the shape of n: its operator, path, the value
// discriminators, and its children sorted by their shapes.
func encodeNode(b *strings.Builder, n *query.Node) {
	kind := n.Kind
	if kind == query.KindIn && inLen(n) == 1 && !inHasRegex(n) {
		kind = query.KindEq
	}
	if (kind == query.KindAnd || kind == query.KindOr) && len(n.Children) == 1 {
		encodeNode(b, n.Children[0])
		return
	}
	b.WriteString(kind.String())
	if n.Path != "" {
		b.WriteByte(' ')
		b.WriteString(escapePath(n.Path))
	}
	switch kind {
	case query.KindRegex:
		_, opts := n.Value.Regex()
		writeFlags(b, opts)
	case query.KindIn:
		if inHasRegex(n) {
			b.WriteString("_re")
			var all string
			for _, v := range arrayElems(n.Value) {
				if v.Type == bson.TypeRegex {
					_, o := v.Regex()
					all += o
				}
			}
			writeFlags(b, all)
		}
	case query.KindGt, query.KindGte:
		if n.Value.Type == bson.TypeMinKey {
			b.WriteString(" min")
		}
	case query.KindLt, query.KindLte:
		if n.Value.Type == bson.TypeMaxKey {
			b.WriteString(" max")
		}
	case query.KindNot:
		if negatesNull(n.Children[0]) {
			b.WriteString(" not_eq_null")
		}
	}
	children := flatChildren(n)
	if len(children) == 0 {
		return
	}
	parts := make([]string, len(children))
	for i, ch := range children {
		var cb strings.Builder
		encodeNode(&cb, ch)
		parts[i] = cb.String()
	}
	if kind == query.KindAnd || kind == query.KindOr || kind == query.KindNor {
		slices.Sort(parts)
	}
	b.WriteByte('[')
	b.WriteString(strings.Join(parts, ","))
	b.WriteByte(']')
}

// flatChildren are n's children with those of nested conjunctions (of a
// conjunction) spliced in, as MongoDB's canonical form flattens them.
func flatChildren(n *query.Node) []*query.Node {
	if n.Kind != query.KindAnd && n.Kind != query.KindOr {
		return n.Children
	}
	var out []*query.Node
	for _, ch := range n.Children {
		if ch.Kind == n.Kind && ch.Path == "" {
			out = append(out, flatChildren(ch)...)
			continue
		}
		out = append(out, ch)
	}
	return out
}

// negatesNull reports whether a negated node compares with null: its
// index bounds cannot be inverted (empty arrays index as null).
func negatesNull(n *query.Node) bool {
	switch n.Kind {
	case query.KindEq, query.KindLte, query.KindGte:
		return n.Value.Type == bson.TypeNull
	case query.KindIn:
		for _, v := range arrayElems(n.Value) {
			if v.Type == bson.TypeNull {
				return true
			}
		}
	}
	return false
}

// writeFlags appends the distinct valid regex flags of opts, sorted, so
// that flags in another order or repeated give the same shape.
func writeFlags(b *strings.Builder, opts string) {
	var seen [4]bool
	for _, c := range opts {
		if i := strings.IndexRune("imsx", c); i >= 0 {
			seen[i] = true
		}
	}
	first := true
	for i, on := range seen {
		if !on {
			continue
		}
		if first {
			b.WriteByte('/')
			first = false
		}
		b.WriteByte("imsx"[i])
	}
	if !first {
		b.WriteByte('/')
	}
}

func inLen(n *query.Node) int {
	if n.Value.Type != bson.TypeArray {
		return 0
	}
	count := 0
	for it := rawdoc.Iterate(n.Value.Value); ; count++ {
		if _, _, ok := it.Next(); !ok {
			return count
		}
	}
}

func inHasRegex(n *query.Node) bool {
	for _, v := range arrayElems(n.Value) {
		if v.Type == bson.TypeRegex {
			return true
		}
	}
	return false
}

// arrayElems are the elements of an array value (none for another type).
func arrayElems(v bson.RawValue) []bson.RawValue {
	if v.Type != bson.TypeArray {
		return nil
	}
	vals, _ := v.Array().Values()
	return vals
}

// escapePath keeps paths holding the shape's delimiters unambiguous.
func escapePath(p string) string {
	if !strings.ContainsAny(p, "\\[],~|/ ") {
		return p
	}
	r := strings.NewReplacer("\\", "\\\\", "[", "\\[", "]", "\\]", ",", "\\,", "~", "\\~", "|", "\\|", "/", "\\/", " ", "\\ ")
	return r.Replace(p)
}

// encodeSort appends the sort: each field with its direction.
func encodeSort(b *strings.Builder, sortDoc bson.Raw) {
	if len(sortDoc) <= 5 {
		return
	}
	b.WriteByte('~')
	it := rawdoc.Iterate(sortDoc)
	first := true
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		switch {
		case v.Type == bson.TypeEmbeddedDocument:
			b.WriteByte('t') // {$meta: ...}
		case numberValue(v) < 0:
			b.WriteByte('d')
		default:
			b.WriteByte('a')
		}
		b.WriteString(escapePath(string(k)))
	}
}

// encodeProjection appends the fields an inclusion projection needs, in
// order; a projection needing the whole document (exclusions, computed
// fields, $slice, $elemMatch) adds nothing, as in MongoDB.
func encodeProjection(b *strings.Builder, projDoc bson.Raw) {
	if len(projDoc) <= 5 {
		return
	}
	var fields []string
	keepID := true
	it := rawdoc.Iterate(projDoc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		path := strings.TrimSuffix(string(k), ".$")
		var on bool
		switch v.Type {
		case bson.TypeBoolean:
			on = v.Boolean()
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
			on = numberValue(v) != 0
		default:
			return
		}
		switch {
		case path == "_id":
			keepID = on
		case !on:
			return
		default:
			fields = append(fields, path)
		}
	}
	if keepID {
		fields = append(fields, "_id")
	}
	slices.Sort(fields)
	fields = slices.Compact(fields)
	b.WriteByte('|')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(escapePath(f))
	}
}

// planKey is the key of a query's entry in its collection's plan cache:
// the shape, then which indexes the query may use (an index is usable by
// one query of a shape and not by another when it is hidden, partial or
// sparse, as MongoDB's index discriminators record) and, for each, which
// of the query's conditions on its fields fit its collation.
func planKey(c *Collection, shape string, strict bool, usable func(*planner.Index) bool, fits func(*planner.Index) string) string {
	var b strings.Builder
	b.WriteString(shape)
	b.WriteByte('@')
	for _, ix := range c.Indexes() {
		if !ix.plannable(strict) {
			continue
		}
		pi := ix.planned()
		if !usable(&pi) {
			continue
		}
		fmt.Fprintf(&b, "<%d>%s", ix.ID, fits(&pi))
	}
	return b.String()
}

// shapeHash is queryHash and planCacheKey as MongoDB shows them: eight
// upper-case hex digits of a 32-bit hash.
func shapeHash(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08X", h.Sum32())
}
