package engine

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// wildcardIndex is what a wildcard index ({"$**": 1} or {"p.$**": 1})
// adds to an index: the paths it covers and the paths at which it met
// arrays (MongoDB's multikey paths, which the planner asks per path). A
// compound wildcard index (MongoDB 7.0: {a: 1, "$**": 1}) has other
// fields, each indexing one value (never an array) beside each of the
// wildcard's (path, value) pairs.
type wildcardIndex struct {
	// pos is where the wildcard stands in the key pattern; regular are
	// the other fields, in order.
	pos     int
	regular []IndexField

	// proj, when set, selects the covered parts of a document: the
	// wildcardProjection, or the prefix of a "p.$**" pattern (_id is
	// left out unless the projection includes it).
	proj *query.Projection
	// include lists the included paths (an inclusion projection or a
	// prefix), exclude the excluded ones; idIncluded reports _id: 1.
	include, exclude []string
	idIncluded       bool
	// projected: the spec has a wildcardProjection.
	projected bool
	// coll is the index's collation: the values' strings are keyed by
	// it, the paths ($_path) compare bytewise whatever it is.
	coll *collation.Collator

	mu       sync.Mutex // orders additions to multikey
	multikey atomic.Pointer[[]string]
}

// isWildcardKey reports whether a key pattern field names a wildcard.
func isWildcardKey(path string) bool { return path == "$**" || strings.HasSuffix(path, ".$**") }

// IsWildcardPattern reports whether key is a wildcard index's pattern (a
// wildcard field with a number; {"$**": "text"} is a text index's).
func IsWildcardPattern(key bson.Raw) bool {
	elems, _ := key.Elements()
	return slices.ContainsFunc(elems, func(el bson.RawElement) bool {
		return isWildcardKey(el.Key()) && values.IsNumber(el.Value().Type)
	})
}

// newWildcard validates a wildcard index's spec (MongoDB 7.0: one
// wildcard field, neither unique nor sparse, a wildcardProjection only on
// "$**") and builds its description; setRegular adds the other fields.
func newWildcard(spec IndexSpec, elems []bson.RawElement) (*wildcardIndex, error) {
	w := &wildcardIndex{pos: -1}
	for i, el := range elems {
		if isWildcardKey(el.Key()) {
			if w.pos >= 0 {
				return nil, mongoerr.New(mongoerr.WildcardMultipleFields, "wildcard indexes do not allow compounding multiple wildcard fields: %s", values.ShellDoc(spec.Key))
			}
			w.pos = i
		}
	}
	key, v := elems[w.pos].Key(), elems[w.pos].Value()
	if plugin, ok := v.StringValueOK(); ok {
		// {"$**": "text"} is a text index on every string field.
		_, err := pluginField(key, plugin)
		if err == nil || mongoerr.Is(err, mongoerr.WildcardPluginName) {
			err = checkKeyPath(key, false)
		}
		return nil, err
	}
	if f, ok := values.Float64(v); !ok || f == 0 {
		return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Values in v:2 index key pattern cannot be of type %s. Only numbers > 0, numbers < 0, and strings are allowed.", values.TypeName(v.Type))
	}
	switch {
	case spec.Unique:
		return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Index type 'wildcard' does not support the unique option")
	case spec.Sparse:
		return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Index type 'wildcard' does not support the sparse option")
	case spec.ExpireAfter >= 0:
		return nil, mongoerr.New(mongoerr.CannotCreateIndex, "Index type 'wildcard' cannot be a TTL index")
	}
	w.multikey.Store(&[]string{})
	projSpec := bson.D{}
	idGiven := false // the wildcardProjection names _id
	switch {
	case key != "$**" && spec.WildcardProjection != nil:
		return nil, mongoerr.New(mongoerr.FailedToParse, "The field 'wildcardProjection' is only allowed when 'key' is {\"$**\": ±1}")
	case key != "$**":
		pre := strings.TrimSuffix(key, ".$**")
		if err := checkKeyPath(pre, false); err != nil {
			return nil, err
		}
		w.include = []string{pre}
		projSpec = bson.D{{Key: pre, Value: int32(1)}}
		idGiven = pre == "_id" || strings.HasPrefix(pre, "_id.")
	case spec.WildcardProjection != nil:
		w.projected = true
		var add func(prefix string, d bson.Raw) error
		add = func(prefix string, d bson.Raw) error {
			elems, _ := d.Elements()
			if len(elems) == 0 {
				return mongoerr.New(mongoerr.FailedToParse, "The 'wildcardProjection' field can't be an empty object")
			}
			for _, el := range elems {
				// The projection is parsed with find-only features banned
				// (wildcardIndexSpecProjectionPolicies): no positional
				// path "a.$" (31324).
				if _, err := query.ProjectionKey(el.Key(), false); err != nil {
					return err
				}
				p, v := prefix+el.Key(), el.Value()
				if sub, ok := v.DocumentOK(); ok {
					// {a: {b: 1}} is {"a.b": 1}.
					if err := add(p+".", sub); err != nil {
						return err
					}
					continue
				}
				if !values.IsNumber(v.Type) && v.Type != bson.TypeBoolean {
					return mongoerr.New(mongoerr.IndexProjectionComputed, "The 'wildcardProjection' value for '%s' must be a number or a boolean: an index projection computes no field", p)
				}
				on := values.Truthy(v)
				switch {
				case p == "_id":
					w.idIncluded, idGiven = on, true
				case on:
					w.include = append(w.include, p)
				default:
					w.exclude = append(w.exclude, p)
				}
				idGiven = idGiven || strings.HasPrefix(p, "_id.")
				projSpec = append(projSpec, bson.E{Key: p, Value: on})
			}
			return nil
		}
		if err := add("", spec.WildcardProjection); err != nil {
			return nil, err
		}
		// MongoDB's projection rules: no path and a path under it, no
		// inclusion beside an exclusion (_id aside).
		if _, err := query.CompileProjection(spec.WildcardProjection); err != nil {
			return nil, err
		}
	}
	if !idGiven && (len(w.include) > 0 || len(w.exclude) > 0) {
		projSpec = append(projSpec, bson.E{Key: "_id", Value: false})
	}
	// Without a projection the walk leaves _id out; {_id: 1} alone keeps
	// only it.
	if len(projSpec) > 0 && (len(w.include) > 0 || len(w.exclude) > 0 || w.idIncluded) {
		raw, _ := bson.Marshal(projSpec)
		p, err := query.CompileProjection(raw)
		if err != nil {
			return nil, err
		}
		w.proj = p
	}
	return w, nil
}

// checkNewCompoundWildcard applies, on creation only (an index stored
// before these checks still loads), MongoDB's rules for the fields of a
// compound wildcard index (wildcard_validation.cpp, run with the key
// pattern's and the spec's checks, before the options'): a "p.$**" field
// holds no other field of the index (validateWildcardIndex, 7246204), and
// a wildcardProjection on "$**" meets checkCompoundProjection. A key
// pattern with no wildcard, two of them or a non-numeric one is left to
// newIndex.
func checkNewCompoundWildcard(spec IndexSpec) error {
	elems, _ := spec.Key.Elements()
	if len(elems) < 2 || !IsWildcardPattern(spec.Key) {
		return nil
	}
	key := ""
	var regular []string // the other fields' paths
	for _, el := range elems {
		switch {
		case !isWildcardKey(el.Key()):
			regular = append(regular, el.Key())
		case key != "":
			return nil
		default:
			key = el.Key()
		}
	}
	if pre, ok := strings.CutSuffix(key, ".$**"); ok {
		for _, r := range regular {
			if pathPrefixOrEqual(pre, r) {
				return mongoerr.New(mongoerr.WildcardKeyOverlap, "A wildcard index field should not overlap with and index key fields if wildcard projection is empty, however '%s' is overlapping with the wildcard index field.", r)
			}
		}
		return nil
	}
	if spec.WildcardProjection == nil {
		return nil
	}
	return checkCompoundProjection(regular, spec.WildcardProjection)
}

// checkCompoundProjection applies MongoDB's validateWildcardProjection
// (wildcard_validation.cpp) to a compound wildcard index's projection
// before the projection itself is parsed: its top-level entries split
// into included (a true value, or an object) and excluded paths; no
// path on either side may hold another on that side (7246200); no
// included path may hold one of the other fields (7246208); an
// exclusion must exclude every other field, the paths and the fields
// walked in order (7246209 when a field sorts between two excluded
// paths, 7246210 when fields remain past the last one), unless _id alone
// is excluded (an inclusion beside it: the setRegular check then
// applies); and inclusions
// and exclusions do not mix unless one side is _id alone (7246211).
func checkCompoundProjection(regular []string, proj bson.Raw) error {
	var incl, excl []string
	elems, _ := proj.Elements()
	for _, el := range elems {
		if el.Value().Type == bson.TypeEmbeddedDocument || values.Truthy(el.Value()) {
			incl = append(incl, el.Key())
		} else {
			excl = append(excl, el.Key())
		}
	}
	fields := slices.Clone(regular)
	for _, list := range [][]string{fields, incl, excl} {
		slices.SortFunc(list, comparePaths)
	}
	for _, list := range [][]string{incl, excl} {
		for i := 1; i < len(list); i++ {
			if pathPrefixOrEqual(list[i-1], list[i]) {
				return mongoerr.New(mongoerr.WildcardProjectionOverlap, "Fields in Wildcard Projection cannot overlap, however '%s' is overlapped with '%s", list[i-1], list[i])
			}
		}
	}
	for _, f := range fields {
		for _, p := range incl {
			if pathPrefixOrEqual(p, f) {
				return mongoerr.New(mongoerr.WildcardProjectionIncludesKey, "Index Key and Wildcard Projection cannot contain overlapping fields, however '%s' index field is ovverlapping with '%s' wildcardProjection path.", f, p)
			}
		}
	}
	idAlone := func(l []string) bool { return len(l) == 1 && l[0] == "_id" }
	if len(excl) > 0 && !idAlone(excl) {
		i, j := 0, 0
		for i < len(fields) && j < len(excl) {
			switch {
			case pathPrefixOrEqual(excl[j], fields[i]):
				i++
			case comparePaths(excl[j], fields[i]) < 0:
				j++
			default:
				return mongoerr.New(mongoerr.WildcardProjectionNotExcluded, "wildcardProjection paths must exclude all regular index fields, however '%s'is not excluded.", fields[i])
			}
		}
		if i < len(fields) {
			return mongoerr.New(mongoerr.WildcardProjectionExcludesTooFew, "wildcardProjection paths must exclude all regular index fields, however '%s'is not excluded.", fields[i])
		}
	}
	if len(incl) > 0 && len(excl) > 0 && !idAlone(incl) && !idAlone(excl) {
		return mongoerr.New(mongoerr.WildcardProjectionMixed, "Inclusion and exclusion statements cannot combine in the wildcardProjection with an exception of explicitly including _id field")
	}
	return nil
}

// comparePaths orders dotted paths component by component (MongoDB's
// FieldRef order), so that a path sorts just before the paths under it.
func comparePaths(a, b string) int {
	for {
		ha, ta, moreA := strings.Cut(a, ".")
		hb, tb, moreB := strings.Cut(b, ".")
		if c := strings.Compare(ha, hb); c != 0 {
			return c
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = ta, tb
	}
}

// pathPrefixOrEqual reports whether path p is q or a path above it.
func pathPrefixOrEqual(p, q string) bool {
	return p == q || strings.HasPrefix(q, p+".")
}

// setRegular takes the fields of a compound wildcard index other than the
// wildcard's: plain ascending or descending fields outside the paths the
// wildcard covers, which a wildcardProjection on "$**" must exclude.
func (w *wildcardIndex) setRegular(fields []IndexField) error {
	for _, f := range fields {
		if f.Path == "$_path" || isWildcardKey(f.Path) {
			continue
		}
		if f.Hashed || f.Geo || f.Flat || f.Text {
			return mongoerr.New(mongoerr.CannotCreateIndex, "a compound wildcard index takes ascending and descending fields only, not %q", f.Path)
		}
		w.regular = append(w.regular, f)
	}
	for _, f := range w.regular {
		overlaps := w.covers(f.Path) || slices.ContainsFunc(w.include, func(r string) bool { return strings.HasPrefix(r, f.Path+".") })
		switch {
		case !overlaps:
		case !w.projected:
			return mongoerr.New(mongoerr.CannotCreateIndex, "the wildcard of a compound wildcard index covers its field %q: index a subtree (\"p.$**\") or exclude it with a wildcardProjection", f.Path)
		default:
			return mongoerr.New(mongoerr.WildcardProjectionNotExcluded, "the wildcardProjection of a compound wildcard index must exclude its field %q", f.Path)
		}
	}
	return nil
}

// wildcardFields are the fields of a wildcard's part of an index's keys:
// the path, then the value.
func wildcardFields(key string) []IndexField {
	return []IndexField{{Path: "$_path", Parts: []string{"$_path"}}, {Path: key, Parts: []string{key}}}
}

// covers reports whether the index holds the values at path.
func (w *wildcardIndex) covers(path string) bool {
	under := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+".") }
	if under(path, "_id") {
		return w.idIncluded || slices.ContainsFunc(w.include, func(r string) bool { return under(path, r) })
	}
	if len(w.include) > 0 || w.idIncluded && len(w.exclude) == 0 {
		// an inclusion ({_id: 1} alone included)
		return slices.ContainsFunc(w.include, func(r string) bool { return under(path, r) })
	}
	return !slices.ContainsFunc(w.exclude, func(r string) bool { return under(path, r) })
}

// multikeyAt reports whether the index met an array at path or above it.
func (w *wildcardIndex) multikeyAt(path string) bool {
	return slices.ContainsFunc(w.multikeyPaths(), func(m string) bool { return m == path || strings.HasPrefix(path, m+".") })
}

// multikeyPaths are the paths at which the index met arrays, sorted.
func (w *wildcardIndex) multikeyPaths() []string { return *w.multikey.Load() }

// addMultikey records new multikey paths and reports whether there were
// any: the caller then records them in the catalog with its write.
func (w *wildcardIndex) addMultikey(paths []string) bool {
	cur := w.multikeyPaths()
	if !slices.ContainsFunc(paths, func(p string) bool { _, found := slices.BinarySearch(cur, p); return !found }) {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	next := slices.Clone(*w.multikey.Load())
	added := false
	for _, p := range paths {
		if i, found := slices.BinarySearch(next, p); !found {
			next = slices.Insert(next, i, p)
			added = true
		}
	}
	if added {
		w.multikey.Store(&next)
	}
	return added
}

// planned describes the index to the planner.
func (w *wildcardIndex) planned() *planner.Wildcard {
	return &planner.Wildcard{Covers: w.covers, MultikeyPaths: w.multikeyPaths()}
}

// keys are doc's keys in a wildcard index, as MongoDB's wildcard key
// generator makes them: (path, value) for every scalar leaf; an empty
// object as itself, an empty array as undefined; an array's elements
// under the array's path (its path recorded as multikey), arrays nested
// in arrays as values; fields whose names hold a dot are skipped.
// multikey reports that doc added multikey paths.
func (w *wildcardIndex) keys(doc bson.Raw) (keys []indexKey, multikey bool, err error) {
	whole := doc
	if w.proj != nil {
		if doc, err = w.proj.Apply(doc, -1); err != nil {
			return nil, false, err
		}
	}
	var arrays []string
	var walk func(d bson.Raw, path string, inArray bool)
	add := func(path string, v bson.RawValue) {
		p := bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, path)}
		enc := keyenc.AppendField(keyenc.AppendField(nil, p, false), w.coll.Transform(v), false)
		keys = append(keys, indexKey{enc: enc, vals: []bson.RawValue{p, v}})
	}
	walk = func(d bson.Raw, path string, inArray bool) {
		elems, _ := d.Elements()
		for _, el := range elems {
			p := path
			if !inArray {
				if strings.Contains(el.Key(), ".") {
					continue
				}
				if path == "" && w.proj == nil && el.Key() == "_id" {
					continue
				}
				p = joinPath(path, el.Key())
			}
			v := el.Value()
			switch v.Type {
			case bson.TypeArray:
				if inArray {
					add(p, v)
					continue
				}
				if !slices.Contains(arrays, p) {
					arrays = append(arrays, p)
				}
				if len(v.Array()) <= 5 {
					add(p, undefinedValue)
					continue
				}
				walk(bson.Raw(v.Array()), p, true)
			case bson.TypeEmbeddedDocument:
				if len(v.Document()) <= 5 {
					add(p, v)
					continue
				}
				walk(v.Document(), p, false)
			default:
				add(p, v)
			}
		}
	}
	walk(doc, "", false)
	if len(w.regular) > 0 {
		if keys, err = w.compound(whole, keys); err != nil {
			return nil, false, err
		}
	}
	if len(keys) > 1 {
		slices.SortFunc(keys, func(a, b indexKey) int { return strings.Compare(string(a.enc), string(b.enc)) })
		keys = slices.CompactFunc(keys, func(a, b indexKey) bool { return string(a.enc) == string(b.enc) })
	}
	if len(arrays) > 0 {
		slices.Sort(arrays)
		multikey = w.addMultikey(arrays)
	}
	return keys, multikey, nil
}

// noPathKey is the wildcard's part of the key a compound wildcard index
// gives a document none of whose paths it covers, so that a scan of the
// other fields alone finds it: MinKey for the path and the value.
var noPathKey = func() indexKey {
	minKey := bson.RawValue{Type: bson.TypeMinKey}
	return indexKey{enc: keyenc.AppendField(keyenc.AppendField(nil, minKey, false), minKey, false), vals: []bson.RawValue{minKey, minKey}}
}()

// compound puts the values of doc's regular fields around each of the
// wildcard's keys; an array at a regular field is refused (7246301).
func (w *wildcardIndex) compound(doc bson.Raw, wild []indexKey) ([]indexKey, error) {
	if len(wild) == 0 {
		wild = []indexKey{noPathKey}
	}
	root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
	var before, after []byte
	var beforeVals, afterVals []bson.RawValue
	for i, f := range w.regular {
		var fv fieldValues
		fv.collect(root, f.Parts, 0)
		vals, arrays := fv.vals, fv.arrays
		if len(arrays) > 0 {
			return nil, mongoerr.New(mongoerr.WildcardRegularFieldMultikey, "a compound wildcard index cannot index the array at its field %q (at %s)", f.Path, arrays[0])
		}
		if i < w.pos {
			before, beforeVals = keyenc.AppendField(before, w.coll.Transform(vals[0]), f.Desc), append(beforeVals, vals[0])
		} else {
			after, afterVals = keyenc.AppendField(after, w.coll.Transform(vals[0]), f.Desc), append(afterVals, vals[0])
		}
	}
	keys := make([]indexKey, len(wild))
	for i, k := range wild {
		enc := append(append(slices.Clip(before), k.enc...), after...)
		vals := append(append(slices.Clip(beforeVals), k.vals...), afterVals...)
		keys[i] = indexKey{enc: enc, vals: vals}
	}
	return keys, nil
}

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// projectedPath is one path of a wildcardProjection, included or not.
type projectedPath struct {
	path string
	on   bool
}

// sameWildcardProjection reports whether two wildcardProjections are one
// for MongoDB's index signature, which compares them normalized
// (IndexDescriptor::compareIndexOptions): {a: {b: 1}} is {"a.b": 1}, a
// number is a boolean, the paths' order does not matter, and _id: 0 is
// the default a wildcard index has anyway (jstests/core/index/
// index_signature.js).
func sameWildcardProjection(a, b bson.Raw) bool {
	return bytes.Equal(a, b) || slices.Equal(normalizedProjection(a), normalizedProjection(b))
}

// normalizedProjection lists a wildcardProjection's paths, flattened and
// sorted, without _id's default exclusion.
func normalizedProjection(p bson.Raw) []projectedPath {
	var out []projectedPath
	var add func(prefix string, d bson.Raw)
	add = func(prefix string, d bson.Raw) {
		elems, _ := d.Elements()
		for _, el := range elems {
			path, v := prefix+el.Key(), el.Value()
			if sub, ok := v.DocumentOK(); ok {
				add(path+".", sub)
				continue
			}
			if on := values.Truthy(v); on || path != "_id" {
				out = append(out, projectedPath{path, on})
			}
		}
	}
	add("", p)
	slices.SortFunc(out, func(x, y projectedPath) int { return strings.Compare(x.path, y.path) })
	return out
}
