package changestream

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// description is an update event's updateDescription, gathered from the
// oplog's $v: 2 diff (see oplog.UpdateO).
type description struct {
	updated   []byte // elements
	removed   []string
	truncated []byte // array elements
	nTrunc    int
	// ambiguous are the paths whose dotted form is ambiguous (a numeric
	// field name after the first, a field name holding a dot; see note),
	// with their components (indexes as ints): disambiguatedPaths.
	ambiguous []byte
}

// component is one step of a path: a field name or an array index.
type component struct {
	name  string
	index int
	isIdx bool
}

func (c component) String() string {
	if c.isIdx {
		return strconv.Itoa(c.index)
	}
	return c.name
}

func dotted(path []component) string {
	var b strings.Builder
	for i, c := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// note records path as ambiguous when it is: when a field name in it
// other than the first is numeric, or any holds a dot; an array index
// alone makes no path ambiguous (change_stream_document_diff_parser.cpp).
func (d *description) note(path []component) {
	amb := false
	for i, c := range path {
		if !c.isIdx && (i > 0 && isNumeric(c.name) || strings.Contains(c.name, ".")) {
			amb = true
			break
		}
	}
	if !amb {
		return
	}
	start, arr := bsoncore.AppendArrayStart(nil)
	for i, c := range path {
		if c.isIdx {
			arr = bsoncore.AppendInt32Element(arr, strconv.Itoa(i), int32(c.index))
		} else {
			arr = bsoncore.AppendStringElement(arr, strconv.Itoa(i), c.name)
		}
	}
	arr, _ = bsoncore.AppendArrayEnd(arr, start)
	d.ambiguous = bsoncore.AppendArrayElement(d.ambiguous, dotted(path), arr)
}

// isNumeric reports whether s is a number of digits without a leading
// zero (FieldRef::isNumericPathComponentStrict).
func isNumeric(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// docDiff walks a document diff at path.
func (d *description) docDiff(diff bson.Raw, path []component) {
	it := rawdoc.Iterate(diff)
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		switch key := string(k); {
		case key == "d":
			for f := rawdoc.Iterate(v.Document()); ; {
				name, _, ok := f.Next()
				if !ok {
					break
				}
				p := append(path, component{name: string(name)})
				d.removed = append(d.removed, dotted(p))
				d.note(p)
			}
		case key == "u" || key == "i":
			for f := rawdoc.Iterate(v.Document()); ; {
				name, val, ok := f.Next()
				if !ok {
					break
				}
				p := append(path, component{name: string(name)})
				d.updated = rawdoc.AppendElement(d.updated, dotted(p), val)
				d.note(p)
			}
		case strings.HasPrefix(key, "s"):
			p := append(path, component{name: key[1:]})
			sub := v.Document()
			if a, ok := sub.Lookup("a").BooleanOK(); ok && a {
				d.arrayDiff(sub, p)
			} else {
				d.docDiff(sub, p)
			}
		}
	}
}

// arrayDiff walks an array diff at path.
func (d *description) arrayDiff(diff bson.Raw, path []component) {
	it := rawdoc.Iterate(diff)
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		key := string(k)
		switch {
		case key == "a":
		case key == "l":
			start, el := bsoncore.AppendDocumentStart(nil)
			el = bsoncore.AppendStringElement(el, "field", dotted(path))
			el = bsoncore.AppendInt32Element(el, "newSize", int32(v.AsInt64()))
			el, _ = bsoncore.AppendDocumentEnd(el, start)
			d.truncated = bsoncore.AppendDocumentElement(d.truncated, strconv.Itoa(d.nTrunc), el)
			d.nTrunc++
			d.note(path)
		case len(key) > 1 && (key[0] == 'u' || key[0] == 's'):
			idx, err := strconv.Atoi(key[1:])
			if err != nil {
				continue
			}
			p := append(path, component{index: idx, isIdx: true})
			if key[0] == 'u' {
				d.updated = rawdoc.AppendElement(d.updated, dotted(p), v)
				d.note(p)
				continue
			}
			sub := v.Document()
			if a, ok := sub.Lookup("a").BooleanOK(); ok && a {
				d.arrayDiff(sub, p)
			} else {
				d.docDiff(sub, p)
			}
		}
	}
}

// appendUpdateDescription appends the updateDescription of diff:
// updatedFields, removedFields, truncatedArrays and, with expanded
// events, disambiguatedPaths.
func appendUpdateDescription(dst []byte, diff bson.Raw, expanded bool) []byte {
	var d description
	d.docDiff(diff, nil)
	start, dst := bsoncore.AppendDocumentElementStart(dst, "updateDescription")
	dst = appendElems(dst, "updatedFields", d.updated, bsoncore.TypeEmbeddedDocument)
	as, dst := bsoncore.AppendArrayElementStart(dst, "removedFields")
	for i, r := range d.removed {
		dst = bsoncore.AppendStringElement(dst, strconv.Itoa(i), r)
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, as)
	dst = appendElems(dst, "truncatedArrays", d.truncated, bsoncore.TypeArray)
	if expanded {
		dst = appendElems(dst, "disambiguatedPaths", d.ambiguous, bsoncore.TypeEmbeddedDocument)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// appendElems appends elems as a document or array field.
func appendElems(dst []byte, name string, elems []byte, t bsoncore.Type) []byte {
	dst = bsoncore.AppendHeader(dst, t, name)
	dst = bsoncore.AppendInt32(dst, int32(len(elems)+5))
	dst = append(dst, elems...)
	return append(dst, 0)
}
