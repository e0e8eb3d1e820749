package query

import (
	"slices"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Sort is a compiled sort specification.
type Sort struct {
	keys    []sortKey
	natural int
	coll    *collation.Collator // strings sort by it (nil: simple)
}

// Collated is s with strings ordered by coll: its keys (Keys) hold
// collation keys in place of strings.
func (s *Sort) Collated(coll *collation.Collator) *Sort {
	c := *s
	c.coll = coll
	return &c
}

type sortKey struct {
	field string
	path  fieldPath
	desc  bool
	// textScore sorts by the document's text score, highest first.
	textScore bool
}

// MaxCompoundFields is the most fields a sort or an index key pattern may
// name (Ordering's kMaxCompoundIndexKeys).
const MaxCompoundFields = 32

// CompileSort parses a sort specification such as {a: 1, b: -1}. Each value
// must be 1 or -1 (any numeric type); {$natural: ±1} requests natural order
// and is reported by Natural; {$meta: ...} sorts are refused.
func CompileSort(spec bson.Raw) (*Sort, error) {
	if len(spec) > 0 && rawdoc.Validate(spec) != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid BSON in sort document")
	}
	s := &Sort{}
	fields := 0 // the keys by a field, which MongoDB's Ordering counts
	it := rawdoc.Iterate(spec)
	for {
		k, v, ok := it.Next()
		if !ok {
			return s, nil
		}
		field := string(k)
		if v.Type == bson.TypeEmbeddedDocument {
			if rawdoc.FirstKey(v.Value) == "$meta" {
				arg := bson.Raw(v.Value).Lookup("$meta")
				switch name, _ := arg.StringValueOK(); {
				case name == "textScore":
				case name == "randVal", name == "searchScore":
					return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support a sort by {$meta: %q} yet", name)
				case expr.IsMetaName(name):
					// metadata MongoDB does not sort by
					return nil, mongoerr.New(mongoerr.SortMetaIllegal, "Illegal $meta sort: $meta: %q", name)
				default:
					return nil, expr.CheckMeta(arg)
				}
				s.keys = append(s.keys, sortKey{field: field, desc: true, textScore: true})
				continue
			}
			return nil, mongoerr.New(mongoerr.SortMetaOnly, "$meta is the only expression supported by $sort right now")
		}
		if !values.IsNumber(v.Type) {
			return nil, mongoerr.New(mongoerr.SortKeyIllegal, "Illegal key in $sort specification: %s: %s", field, values.Shell(v))
		}
		// MongoDB reads the direction as a long: a double truncated, a
		// decimal rounded half to even (1.999 and 0.51 are ascending).
		dir := expr.SafeLong(v)
		if dir != 1 && dir != -1 {
			return nil, mongoerr.New(mongoerr.SortKeyOrderInvalid, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
		if field == "$natural" {
			s.natural = int(dir)
			continue
		}
		if err := expr.CheckFieldPath(field); err != nil {
			return nil, err
		}
		if fields++; fields > MaxCompoundFields {
			return nil, mongoerr.New(mongoerr.TooManyCompoundKeys, "too many compound keys")
		}
		s.keys = append(s.keys, sortKey{field: field, path: parsePath(field), desc: dir < 0})
	}
}

// Natural is 1 or -1 when the sort asks for natural order, else 0.
func (s *Sort) Natural() int { return s.natural }

// Fields are the sort fields in order, with -1 for descending and 1 for
// ascending.
func (s *Sort) Fields() (fields []string, dirs []int) {
	for _, k := range s.keys {
		d := 1
		if k.desc {
			d = -1
		}
		fields = append(fields, k.field)
		dirs = append(dirs, d)
	}
	return fields, dirs
}

// Empty reports whether the sort has no field keys.
func (s *Sort) Empty() bool { return len(s.keys) == 0 }

// Compare orders two documents by the sort (negative when a sorts first).
func (s *Sort) Compare(a, b bson.Raw) int {
	return s.CompareKeys(s.Keys(a), s.Keys(b))
}

// Keys extracts the sort key of doc once so large sorts don't re-walk
// documents. Following MongoDB, a field whose path reaches several values
// (through arrays) sorts by the smallest of them when ascending and the
// largest when descending; a missing field sorts as null, and an empty array
// as undefined, which is below null. Keys does not check for parallel
// arrays; KeysErr does.
func (s *Sort) Keys(doc bson.Raw) []bson.RawValue {
	keys := make([]bson.RawValue, len(s.keys))
	for i, k := range s.keys {
		if k.textScore {
			keys[i] = bson.RawValue{Type: bson.TypeNull}
			continue
		}
		c := keyCollector{desc: k.desc, coll: s.coll}
		w := walker{path: k.path, mode: leafElements, scalarsMissing: true, vis: &c}
		w.walkDoc(doc, 0, -1)
		if !c.found || c.best.Type == 0 {
			c.best = bson.RawValue{Type: bson.TypeNull}
		}
		keys[i] = c.best
	}
	return keys
}

// KeysErr is Keys that fails, as MongoDB does, when two sort fields reach
// different arrays in doc ("parallel arrays", BadValue): MongoDB builds a
// sort key the way it builds a compound index key, which cannot expand two
// arrays at once. Fields reaching the same array ({"a.x": 1, "a.y": 1} on
// a: [{x, y}]) are not parallel; the check repeats inside its elements.
func (s *Sort) KeysErr(doc bson.Raw) ([]bson.RawValue, error) {
	if len(s.keys) > 1 {
		paths := make([]fieldPath, 0, len(s.keys))
		for _, k := range s.keys {
			if !k.textScore {
				paths = append(paths, k.path)
			}
		}
		if parallelArrays(doc, paths) {
			return nil, mongoerr.New(mongoerr.BadValue, "cannot sort with keys that are parallel arrays")
		}
	}
	return s.Keys(doc), nil
}

// NeedsTextScore reports whether the sort orders by {$meta: "textScore"}.
func (s *Sort) NeedsTextScore() bool {
	return slices.ContainsFunc(s.keys, func(k sortKey) bool { return k.textScore })
}

// KeysMeta is KeysErr with the text score keys taken from meta (40218
// without a text score, as in MongoDB).
func (s *Sort) KeysMeta(doc bson.Raw, meta docsrc.Meta) ([]bson.RawValue, error) {
	keys, err := s.KeysErr(doc)
	if err != nil {
		return nil, err
	}
	for i, k := range s.keys {
		if !k.textScore {
			continue
		}
		if !meta.HasTextScore {
			return nil, mongoerr.New(mongoerr.TextScoreUnavailable, "query requires text score metadata, but it is not available")
		}
		keys[i] = bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, meta.TextScore)}
	}
	return keys, nil
}

// parallelArrays reports whether paths, followed from doc, expand two
// different arrays, at this level or inside the elements of the one array
// they share.
func parallelArrays(doc []byte, paths []fieldPath) bool {
	var arr []byte
	var rests []fieldPath
	for _, p := range paths {
		a, rest, ok := firstArray(doc, p)
		if !ok {
			continue
		}
		if arr != nil && &a[0] != &arr[0] {
			return true
		}
		arr = a
		if len(rest) > 0 {
			rests = append(rests, rest)
		}
	}
	if len(rests) < 2 {
		return false
	}
	it := rawdoc.Iterate(arr)
	for {
		_, e, ok := it.Next()
		if !ok {
			return false
		}
		if e.Type == bson.TypeEmbeddedDocument && parallelArrays(e.Value, rests) {
			return true
		}
	}
}

// firstArray follows path from doc to the first array it expands: one met
// at the end of the path, or before a component that is not an array
// index. An index component selects that element instead. rest is the path
// after the array.
func firstArray(doc []byte, path fieldPath) (arr []byte, rest fieldPath, ok bool) {
	v := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	for i := 0; i < len(path); i++ {
		switch {
		case v.Type == bson.TypeEmbeddedDocument:
			v = rawdoc.Lookup(v.Value, path[i].name)
		case v.Type == bson.TypeArray && path[i].index < 0:
			return v.Value, path[i:], true
		case v.Type == bson.TypeArray:
			v = rawdoc.Lookup(v.Value, path[i].name)
		default:
			return nil, nil, false
		}
	}
	if v.Type == bson.TypeArray {
		return v.Value, nil, true
	}
	return nil, nil, false
}

// CompareKeys compares two keys produced by Keys.
func (s *Sort) CompareKeys(a, b []bson.RawValue) int {
	for i, k := range s.keys {
		if c := values.Compare(sortValue(a[i]), sortValue(b[i])); c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// sortValue treats missing as null.
func sortValue(v bson.RawValue) bson.RawValue {
	if v.Type == 0 {
		return bson.RawValue{Type: bson.TypeNull}
	}
	return v
}

// keyCollector keeps the smallest (or, descending, the largest) value a path
// yields.
type keyCollector struct {
	desc  bool
	found bool
	best  bson.RawValue
	coll  *collation.Collator
}

func (c *keyCollector) visit(v bson.RawValue, _ int) (bool, int) {
	v = c.coll.Transform(sortValue(v))
	if !c.found {
		c.best, c.found = v, true
		return false, -1
	}
	cmp := values.Compare(v, c.best)
	if (c.desc && cmp > 0) || (!c.desc && cmp < 0) {
		c.best = v
	}
	return false, -1
}
