package advise

import (
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/rawdoc"
)

// appendShape appends filter's shape (the filter with its values replaced
// by "?", the same string parseFilter's shape is) to dst without
// allocating, and returns the largest $in list it holds: what each
// execution of an already known shape needs.
func appendShape(dst []byte, filter []byte) ([]byte, int) {
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
					dst, n = appendShape(dst, item.Value)
					maxIn = max(maxIn, n)
				}
			}
			dst = append(dst, ']')
		case len(k) > 0 && k[0] == '$':
			dst = append(dst, '?')
		case v.Type == bson.TypeRegex:
			pattern, options := v.Regex()
			dst = appendRegex(dst, pattern, options)
		case v.Type != bson.TypeEmbeddedDocument || !isOperatorDoc(v.Value):
			dst = append(dst, '?')
		default:
			var n int
			dst, n = appendOperators(dst, v.Value)
			maxIn = max(maxIn, n)
		}
	}
	return append(dst, '}'), maxIn
}

// appendOperators appends the shape of one field's operator document.
func appendOperators(dst []byte, ops []byte) ([]byte, int) {
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
			var n int
			dst, n = appendShape(dst, v.Value)
			maxIn = max(maxIn, n)
		case string(op) == "$in" && v.Type == bson.TypeArray:
			maxIn = max(maxIn, rawdoc.Len(v.Value))
			dst = append(dst, '?')
		case string(op) == "$regex" && v.Type == bson.TypeString:
			options, _ := rawdoc.Lookup(ops, "$options").StringValueOK()
			dst = appendRegex(dst, v.StringValue(), options)
		case string(op) == "$regex" && v.Type == bson.TypeRegex:
			pattern, options := v.Regex()
			dst = appendRegex(dst, pattern, options)
		default:
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
	q.walk(filter, "")
	shape, maxIn := appendShape(nil, filter)
	q.shape, q.maxIn = string(shape), maxIn
	q.eq, q.rng = dedupe(q.eq), dedupe(q.rng)
	q.fields = dedupe(append(append([]string{}, q.eq...), q.rng...))
	return q
}

// walk notes the fields doc tests; prefix is the path of an $elemMatch's
// array.
func (q *query) walk(doc bson.Raw, prefix string) {
	elems, err := doc.Elements()
	if err != nil {
		return
	}
	for _, el := range elems {
		k, v := el.Key(), el.Value()
		switch {
		case k == "$and" || k == "$or" || k == "$nor":
			arr, ok := v.ArrayOK()
			if !ok {
				continue
			}
			vals, _ := arr.Values()
			for _, item := range vals {
				if d, ok := item.DocumentOK(); ok {
					q.walk(d, prefix)
				}
			}
		case strings.HasPrefix(k, "$"):
			// $expr, $where, $text...: no field of their own
		default:
			q.condition(prefix+k, v)
		}
	}
}

// condition notes one field's condition.
func (q *query) condition(path string, v bson.RawValue) {
	d, ok := v.DocumentOK()
	if !ok || !isOperatorDoc(d) {
		if v.Type == bson.TypeRegex {
			q.regex(path, v)
			return
		}
		q.eq = append(q.eq, path)
		return
	}
	elems, _ := d.Elements()
	for _, el := range elems {
		op, ov := el.Key(), el.Value()
		switch {
		case op == "$elemMatch":
			if sub, ok := ov.DocumentOK(); ok && !isOperatorDoc(sub) {
				q.walk(sub, path+".")
			}
		case op == "$eq" || op == "$in":
			q.eq = append(q.eq, path)
		case op == "$regex":
			if opts, ok := d.Lookup("$options").StringValueOK(); ok && ov.Type == bson.TypeString {
				ov = bson.RawValue{Type: bson.TypeRegex, Value: append(append(append([]byte(ov.StringValue()), 0), opts...), 0)}
			}
			q.regex(path, ov)
		case rangeOps[op]:
			q.rng = append(q.rng, path)
		}
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

// regex notes a regular expression on path that an index on it cannot
// narrow: not anchored at the start (^ or \A), or case-insensitive.
func (q *query) regex(path string, v bson.RawValue) {
	var pattern, options string
	switch v.Type {
	case bson.TypeRegex:
		pattern, options = v.Regex()
	case bson.TypeString:
		pattern = v.StringValue()
	default:
		return
	}
	if !indexable(pattern, options) {
		q.unanchored = append(q.unanchored, path)
		return
	}
	q.rng = append(q.rng, path)
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
