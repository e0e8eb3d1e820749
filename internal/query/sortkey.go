package query

import (
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// keyGen builds a document's sort key as MongoDB does: it generates the
// keys an index with the sort's pattern would hold for the document and
// keeps the one that sorts first under the sort's directions. So a field
// reaching several values through an array sorts by the smallest of them
// ascending and the largest descending, and fields reaching the same array
// take their values from one element at a time ({"a.x": 1, "a.y": 1} keys
// a: [{x: 1, y: 9}, {x: 2, y: 0}] by (1, 9)). Fields reaching different
// arrays cannot be keyed ("parallel arrays"). An array at the end of a path
// yields its elements, undefined when empty; an array before the end yields
// the rest of the path in each document element, null for other elements
// and null when empty; a numeric component selects the element at that
// offset when there is one, which is not expanded when the path ends
// there. A missing field is null.
type keyGen struct {
	s         *Sort
	cur, best []bson.RawValue // by position in s.keys
	found     bool
	parallel  bool
}

// keyField is a sort field part-way along its path: v is the value at
// path[:at].
type keyField struct {
	key int
	v   bson.RawValue
	at  int
}

var (
	nullKey      = bson.RawValue{Type: bson.TypeNull}
	undefinedKey = bson.RawValue{Type: bson.TypeUndefined}
)

// KeysErr returns doc's sort key (see keyGen), with null for text score
// fields. It fails, as MongoDB does, when two fields reach different
// arrays ("parallel arrays", BadValue): a sort key is built as a compound
// index key is, which cannot expand two arrays at once.
func (s *Sort) KeysErr(doc bson.Raw) ([]bson.RawValue, error) {
	n := len(s.keys)
	// cur holds values read from doc, apart from best: a caller copying
	// best's values (ownKeys) then keeps nothing of doc.
	g := keyGen{s: s, cur: make([]bson.RawValue, n), best: make([]bson.RawValue, n)}
	start := make([]keyField, 0, n)
	for i, k := range s.keys {
		if k.byMeta() {
			g.cur[i] = nullKey
			continue
		}
		start = append(start, keyField{key: i, v: bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}})
	}
	g.gen(start)
	if g.parallel {
		return nil, mongoerr.New(mongoerr.BadValue, "cannot sort with keys that are parallel arrays")
	}
	return g.best, nil
}

// ValueKey is the key sort field i has in a document whose field holds v:
// an array's smallest element ascending, its largest descending, undefined
// when empty; a missing value is null.
func (s *Sort) ValueKey(i int, v bson.RawValue) bson.RawValue {
	if v.Type == 0 {
		return nullKey
	}
	g := keyGen{s: s, cur: make([]bson.RawValue, len(s.keys)), best: make([]bson.RawValue, len(s.keys))}
	g.gen([]keyField{{key: i, v: v, at: len(s.keys[i].path)}})
	return g.best[i]
}

// gen follows fields down to a value or an array each. Fields ending on
// values set them in cur; those reaching the same array then take each of
// its elements in turn, the ones whose path goes on continuing inside it.
func (g *keyGen) gen(fields []keyField) {
	var arr []byte
	var ends, deeper []keyField
	for _, f := range fields {
		a, ok := g.follow(&f)
		if !ok {
			continue
		}
		if len(a) == 0 { // malformed: no elements to key by
			g.cur[f.key] = nullKey
			continue
		}
		if arr != nil && &a[len(a)-1] != &arr[len(arr)-1] {
			g.parallel = true
			return
		}
		arr = a
		if f.at == len(g.s.keys[f.key].path) {
			ends = append(ends, f)
		} else {
			deeper = append(deeper, f)
		}
	}
	if arr == nil {
		g.emit()
		return
	}
	it := rawdoc.Iterate(arr)
	empty := true
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		empty = false
		for _, f := range ends {
			g.set(f.key, e)
		}
		if e.Type != bson.TypeEmbeddedDocument {
			for _, f := range deeper {
				g.cur[f.key] = nullKey
			}
			g.emit()
			continue
		}
		next := make([]keyField, len(deeper))
		for i, f := range deeper {
			next[i] = keyField{key: f.key, v: e, at: f.at}
		}
		g.gen(next)
		if g.parallel {
			return
		}
	}
	if empty {
		for _, f := range ends {
			g.cur[f.key] = undefinedKey
		}
		for _, f := range deeper {
			g.cur[f.key] = nullKey
		}
		g.emit()
	}
}

// follow moves f along its path through documents and positional array
// elements. It stops at the path's end, setting the value in cur (null
// when missing or past a scalar), or at an array to expand, which it
// returns with ok.
func (g *keyGen) follow(f *keyField) (arr []byte, ok bool) {
	path := g.s.keys[f.key].path
	for {
		switch {
		case f.v.Type == bson.TypeArray:
			if f.at < len(path) && path[f.at].index >= 0 {
				if e := elementAt(f.v.Value, path[f.at].index); e.Type != 0 {
					f.v, f.at = e, f.at+1
					if f.at == len(path) { // an array element is not expanded
						g.set(f.key, f.v)
						return nil, false
					}
					continue
				}
			}
			return f.v.Value, true
		case f.at == len(path):
			g.set(f.key, f.v)
			return nil, false
		case f.v.Type == bson.TypeEmbeddedDocument:
			f.v = rawdoc.Lookup(f.v.Value, path[f.at].name)
			f.at++
			if f.v.Type == 0 {
				g.cur[f.key] = nullKey
				return nil, false
			}
		default:
			g.cur[f.key] = nullKey
			return nil, false
		}
	}
}

// set makes v, in the sort's collation, key i's value.
func (g *keyGen) set(i int, v bson.RawValue) {
	g.cur[i] = g.s.coll.Transform(v)
}

// emit offers the key in cur, keeping it when it sorts before the best.
func (g *keyGen) emit() {
	if !g.found || g.before(g.cur, g.best) {
		copy(g.best, g.cur)
		g.found = true
	}
}

// before reports whether key a sorts before key b.
func (g *keyGen) before(a, b []bson.RawValue) bool {
	for i, k := range g.s.keys {
		if k.byMeta() {
			continue
		}
		if c := values.Compare(a[i], b[i]); c != 0 {
			return c < 0 != k.desc
		}
	}
	return false
}

// elementAt is the element at offset n of arr, or a zero value.
func elementAt(arr []byte, n int) bson.RawValue {
	it := rawdoc.Iterate(arr)
	for i := 0; ; i++ {
		_, e, ok := it.Next()
		if !ok || i == n {
			return e
		}
	}
}
