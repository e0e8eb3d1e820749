package query

import (
	"strings"

	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// pathPart is one component of a dotted field path. index is the array
// offset the component names when it is written in canonical decimal form
// ("0", "12", not "01"), else -1: MongoDB tries such a component both as an
// array index and as a field name of the array's document elements.
type pathPart struct {
	name  string
	index int
}

type fieldPath []pathPart

func parsePath(p string) fieldPath {
	fp := make(fieldPath, 0, strings.Count(p, ".")+1)
	for {
		name, rest, more := strings.Cut(p, ".")
		fp = append(fp, pathPart{name: name, index: rawdoc.ArrayIndex(name)})
		if !more {
			return fp
		}
		p = rest
	}
}

// leafMode says what a path walk yields for an array found at the end of
// the path.
type leafMode uint8

const (
	// leafExpand yields each element, then the array itself (most operators).
	leafExpand leafMode = iota
	// leafWhole yields only the array itself ($size, $elemMatch).
	leafWhole
)

// visitor receives the values a path walk yields. off is the offset in the
// outermost array traversed implicitly, or -1. visit returns whether the walk
// should stop, and the positional index to report.
type visitor interface {
	visit(v bson.RawValue, off int) (stop bool, pos int)
}

// walker implements MongoDB's path traversal (BSONElementIterator): objects
// are descended by field name; an array met before the path ends is
// traversed implicitly (its document elements continue with the same
// component) and, when the component is a numeric index, the element at that
// offset continues with the rest of the path. A path ending inside a scalar
// or a missing field yields one missing value.
type walker struct {
	path fieldPath
	mode leafMode
	vis  visitor
}

func (w *walker) walkDoc(doc []byte, i, off int) (bool, int) {
	v := rawdoc.Lookup(doc, w.path[i].name)
	i++
	for i < len(w.path) && v.Type == bson.TypeEmbeddedDocument {
		v = rawdoc.Lookup(v.Value, w.path[i].name)
		i++
	}
	if v.Type == bson.TypeArray {
		if i < len(w.path) {
			return w.walkArray(v.Value, i, off)
		}
		return w.leafArray(v, off)
	}
	if i < len(w.path) {
		v = bson.RawValue{}
	}
	return w.vis.visit(v, off)
}

func (w *walker) leafArray(arr bson.RawValue, off int) (bool, int) {
	if w.mode == leafWhole {
		return w.vis.visit(arr, off)
	}
	it := rawdoc.Iterate(arr.Value)
	idx := 0
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		if stop, pos := w.vis.visit(e, outer(off, idx)); stop {
			return true, pos
		}
		idx++
	}
	return w.vis.visit(arr, off)
}

func (w *walker) walkArray(arr []byte, i, off int) (bool, int) {
	part := w.path[i]
	it := rawdoc.Iterate(arr)
	for idx := 0; ; idx++ {
		_, e, ok := it.Next()
		if !ok {
			return false, -1
		}
		switch {
		case e.Type == bson.TypeEmbeddedDocument:
			if stop, pos := w.walkDoc(e.Value, i, outer(off, idx)); stop {
				return true, pos
			}
		}
		if part.index != idx {
			continue
		}
		var stop bool
		var pos int
		switch {
		case i+1 == len(w.path):
			stop, pos = w.vis.visit(e, off)
		case e.Type == bson.TypeEmbeddedDocument:
			stop, pos = w.walkDoc(e.Value, i+1, off)
		case e.Type == bson.TypeArray:
			stop, pos = w.walkArray(e.Value, i+1, off)
		}
		if stop {
			return true, pos
		}
	}
}

// outer keeps the outermost array offset: an offset already set by an
// enclosing implicit traversal wins over the current index.
func outer(off, idx int) int {
	if off >= 0 {
		return off
	}
	return idx
}
