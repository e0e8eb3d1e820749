package advise

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/rawdoc"
)

// appendShape appends filter's shape (the filter with its values replaced
// by "?") to dst and returns the largest $in list it holds. Without q it
// allocates nothing: what each execution of a known shape needs. With q it
// also notes in q the fields the filter tests, as parseFilter does for a
// new shape; prefix is the path of an $elemMatch's array.
func appendShape(dst []byte, filter []byte, q *query, prefix string) ([]byte, int) {
	maxIn := 0
	dst = append(dst, '{')
	it := rawdoc.Iterate(filter)
	for i := 0; ; i++ {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(dst, k...), ':')
		switch {
		case (string(k) == "$and" || string(k) == "$or" || string(k) == "$nor") && v.Type == bson.TypeArray:
			dst = append(dst, '[')
			items := rawdoc.Iterate(v.Value)
			for j := 0; ; j++ {
				_, item, ok := items.Next()
				if !ok {
					break
				}
				if j > 0 {
					dst = append(dst, ',')
				}
				if item.Type == bson.TypeEmbeddedDocument {
					var n int
					dst, n = appendShape(dst, item.Value, q, prefix)
					maxIn = max(maxIn, n)
				}
			}
			dst = append(dst, ']')
		case len(k) > 0 && k[0] == '$':
			// $expr, $where, $text...: no field of their own
			dst = append(dst, '?')
		case v.Type == bson.TypeRegex:
			pattern, options := v.Regex()
			dst = appendRegex(dst, pattern, options)
			q.regex(prefix, k, pattern, options)
		case v.Type != bson.TypeEmbeddedDocument || !isOperatorDoc(v.Value):
			dst = append(dst, '?')
			q.note(byEquality, prefix, k)
		default:
			var n int
			dst, n = appendOperators(dst, v.Value, q, prefix, k)
			maxIn = max(maxIn, n)
		}
	}
	return append(dst, '}'), maxIn
}

// appendOperators appends the shape of the operator document of the field
// prefix+field, noting its conditions in q (when set).
func appendOperators(dst []byte, ops []byte, q *query, prefix string, field []byte) ([]byte, int) {
	maxIn := 0
	dst = append(dst, '{')
	it := rawdoc.Iterate(ops)
	for i := 0; ; i++ {
		op, v, ok := it.Next()
		if !ok {
			break
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(dst, op...), ':')
		switch {
		case string(op) == "$elemMatch" && v.Type == bson.TypeEmbeddedDocument && !isOperatorDoc(v.Value):
			sub := ""
			if q != nil {
				sub = prefix + string(field) + "."
			}
			var n int
			dst, n = appendShape(dst, v.Value, q, sub)
			maxIn = max(maxIn, n)
		case string(op) == "$regex" && (v.Type == bson.TypeString || v.Type == bson.TypeRegex):
			var pattern, options string
			if v.Type == bson.TypeString {
				pattern = v.StringValue()
				options, _ = rawdoc.Lookup(ops, "$options").StringValueOK()
			} else {
				pattern, options = v.Regex()
			}
			dst = appendRegex(dst, pattern, options)
			q.regex(prefix, field, pattern, options)
		default:
			switch {
			case string(op) == "$in" && v.Type == bson.TypeArray:
				maxIn = max(maxIn, rawdoc.Len(v.Value))
				q.note(byEquality, prefix, field)
			case string(op) == "$eq" || string(op) == "$in":
				q.note(byEquality, prefix, field)
			case rangeOps[string(op)]:
				q.note(byRange, prefix, field)
			}
			dst = append(dst, '?')
		}
	}
	return append(dst, '}'), maxIn
}

// query is what the advisor reads of one filter: its shape (the filter
// with every value replaced by "?", so that queries differing only in
// values share it), the fields it tests by equality and by range (the
// makings of an index: equality, then sort, then range), its regular
// expressions that cannot use an index on their field, and its largest
// $in list.
type query struct {
	shape      string
	eq, rng    []string
	unanchored []string
	maxIn      int
	fields     []string // every field the filter reads
}

// rangeOps are the comparison operators an index serves as a range.
var rangeOps = map[string]bool{"$gt": true, "$gte": true, "$lt": true, "$lte": true}

// parseFilter reads a filter document.
func parseFilter(filter bson.Raw) query {
	var q query
	shape, maxIn := appendShape(nil, filter, &q, "")
	q.shape, q.maxIn = string(shape), maxIn
	q.eq, q.rng = dedupe(q.eq), dedupe(q.rng)
	q.fields = dedupe(append(append([]string{}, q.eq...), q.rng...))
	return q
}

// fieldUse is how a filter tests a field.
type fieldUse int

const (
	byEquality fieldUse = iota
	byRange
	byUnanchoredRegex // a regex an index on the field cannot narrow
)

// note records that the filter tests the field prefix+field so; nothing
// without q.
func (q *query) note(use fieldUse, prefix string, field []byte) {
	if q == nil {
		return
	}
	path := prefix + string(field)
	switch use {
	case byEquality:
		q.eq = append(q.eq, path)
	case byRange:
		q.rng = append(q.rng, path)
	default:
		q.unanchored = append(q.unanchored, path)
	}
}

// indexable reports whether an index on its field narrows a regular
// expression: anchored at the start (^ or \A) and case-sensitive.
func indexable(pattern, options string) bool {
	return (strings.HasPrefix(pattern, "^") || strings.HasPrefix(pattern, `\A`)) && !strings.Contains(options, "i")
}

// appendRegex appends a regular expression's shape: /^?/ when an index
// narrows it, /?/ when not, so that the two are different shapes.
func appendRegex(dst []byte, pattern, options string) []byte {
	if indexable(pattern, options) {
		return append(dst, "/^?/"...)
	}
	return append(dst, "/?/"...)
}

// regex notes a regular expression on prefix+field: a range when an
// index on the field narrows it, else one that cannot use the index.
func (q *query) regex(prefix string, field []byte, pattern, options string) {
	if indexable(pattern, options) {
		q.note(byRange, prefix, field)
		return
	}
	q.note(byUnanchoredRegex, prefix, field)
}

// isOperatorDoc reports whether d's first field is an operator.
func isOperatorDoc(d []byte) bool {
	it := rawdoc.Iterate(d)
	k, _, ok := it.Next()
	return ok && len(k) > 0 && k[0] == '$'
}

// appendKeys appends the shape of a sort or a projection: its field names.
func appendKeys(dst []byte, d []byte) []byte {
	it := rawdoc.Iterate(d)
	for i := 0; ; i++ {
		k, _, ok := it.Next()
		if !ok {
			return dst
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, k...)
	}
}

// sortKeys are a sort's (or a projection's) field names.
func sortKeys(d bson.Raw) []string {
	elems, _ := d.Elements()
	keys := make([]string, len(elems))
	for i, el := range elems {
		keys[i] = el.Key()
	}
	return keys
}

func dedupe(s []string) []string {
	if len(s) < 2 {
		return s
	}
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
