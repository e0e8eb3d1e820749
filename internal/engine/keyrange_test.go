package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/hashkey"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/querygen"
	"github.com/folio-db/folio/internal/values"
)

// TestKeyRangeDifferential checks find's min and max on random data sets,
// under every index that is not multikey (or multikey on one top-level
// field) and the _id index, with a random
// filter half the time, against an oracle that knows nothing of key
// encodings: each document's key is the values at the index's paths (null
// when missing, the hash on a hashed field), compared field by field with
// values.Compare in each field's direction; the find must return the
// documents the filter matches (as a collection scan finds them) whose key
// lies in [min, max), in key order then _id order, or fail with 51175 when
// min does not come before max.
func TestKeyRangeDifferential(t *testing.T) {
	e := newTestEngine(t)
	for _, seed := range diffSeeds(20) {
		checkKeyRangeDataset(t, e, seed)
	}
}

// FuzzKeyRange runs TestKeyRangeDifferential's check on the data sets of
// fuzzed seeds, without bound.
func FuzzKeyRange(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(20261130))
	e := newTestEngine(f)
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkKeyRangeDataset(t, e, seed)
	})
}

// checkKeyRangeDataset builds the data set of seed in a new collection of
// e and checks 30 random key ranges under each index the oracle knows.
func checkKeyRangeDataset(t *testing.T, e *Engine, seed uint64) {
	t.Helper()
	g := querygen.New(seed)
	coll := fmt.Sprintf("kr%d", datasetCount.Add(1))
	if err := e.CreateCollection("test", coll, CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range g.Indexes() {
		// Errors (a wildcard index with another) leave the index out.
		e.CreateIndexes("test", coll, []IndexSpec{{Key: bsonDoc(spec.Key), Unique: spec.Unique, ExpireAfter: -1}}, nil)
	}
	var docs []bson.Raw
	for i := range 20 + g.Intn(60) {
		d := bsonDoc(g.Doc(int32(i)))
		if _, werrs, err := e.Insert("test", coll, []bson.Raw{d}, true, WriteOptions{}); err == nil && len(werrs) == 0 {
			docs = append(docs, d)
		}
	}
	c := e.Collection("test", coll)
	names, patterns, multikey := []string{idIndexName}, []bson.Raw{idKeyPattern}, []bool{false}
	for _, ix := range c.Indexes() {
		// A multikey index only on one top-level field, whose keys
		// the oracle knows: an array's elements.
		multiOK := len(ix.Fields) == 1 && !strings.Contains(ix.Fields[0].Path, ".") && !ix.Fields[0].Hashed
		if (!ix.Multikey() || multiOK) && ix.wild == nil && ix.text == nil && ix.geoField() < 0 {
			names, patterns, multikey = append(names, ix.Name), append(patterns, ix.keyPattern()), append(multikey, ix.Multikey())
		}
	}
	for i, name := range names {
		for range 30 {
			var filter bson.Raw
			if g.Intn(2) == 0 {
				filter = bsonDoc(g.Query())
			}
			min, max := randomBound(g, patterns[i], docs), randomBound(g, patterns[i], docs)
			if multikey[i] && min == nil && max == nil {
				// Without a key range a filter bounds the scan, and a
				// multikey document is read at its first key within
				// those bounds, which the oracle does not model.
				continue
			}
			checkKeyRange(t, e, seed, c, name, patterns[i], docs, filter, min, max)
		}
	}
}

// randomBound is an empty bound, the key of a random document, or random
// values, over pattern's fields.
func randomBound(g *querygen.Gen, pattern bson.Raw, docs []bson.Raw) bson.Raw {
	kind := g.Intn(3)
	if kind == 0 {
		return nil
	}
	doc := docs[g.Intn(len(docs))]
	start, out := bsoncore.AppendDocumentStart(nil)
	elems, _ := pattern.Elements()
	for _, el := range elems {
		var v bson.RawValue
		if kind == 1 {
			v = indexedValue(doc, el)
		} else {
			v = bson.Raw(bsonDoc(bson.D{{Key: "v", Value: g.Scalar()}})).Lookup("v")
		}
		out = bsoncore.AppendValueElement(out, el.Key(), bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// indexedValue is the value an index field keys doc under: the value at
// its path (null when missing), or its hash on a hashed field.
func indexedValue(doc bson.Raw, field bson.RawElement) bson.RawValue {
	v, err := doc.LookupErr(strings.Split(field.Key(), ".")...)
	if err != nil {
		v = bson.RawValue{Type: bson.TypeNull}
	}
	if field.Value().Type == bson.TypeString {
		return bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, hashkey.Hash(v))}
	}
	return v
}

// compareKeys compares two keys (values in pattern's field order) in the
// index's order.
func compareKeys(pattern bson.Raw, a, b []bson.RawValue) int {
	elems, _ := pattern.Elements()
	for i, el := range elems {
		c := values.Compare(a[i], b[i])
		if n, ok := values.Float64(el.Value()); ok && n < 0 {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func checkKeyRange(t *testing.T, e *Engine, seed uint64, c *Collection, name string, pattern bson.Raw, docs []bson.Raw, filter, min, max bson.Raw) {
	t.Helper()
	elems, _ := pattern.Elements()
	ids := func(o FindOptions) ([]bson.RawValue, error) {
		cur, err := e.Find("test", c.Name, o)
		if err != nil {
			return nil, err
		}
		defer cur.Close()
		var out []bson.RawValue
		for {
			d, err := docsrc.Lend(cur)
			if d == nil || err != nil {
				return out, err
			}
			out = append(out, bson.Raw(slices.Clone(d)).Lookup("_id"))
		}
	}
	natural := bsonDoc(bson.D{{Key: "h", Value: bson.D{{Key: "$natural", Value: 1}}}})
	matching, err := ids(FindOptions{Filter: filter, Hint: bson.Raw(natural).Lookup("h")})
	if err != nil {
		return // a filter some document makes fail
	}
	matches := func(id bson.RawValue) bool {
		return slices.ContainsFunc(matching, func(m bson.RawValue) bool { return values.Compare(m, id) == 0 })
	}
	// keysOf are a document's keys: one, or on a single-field index one
	// per element of an array (undefined for an empty one).
	keysOf := func(doc bson.Raw) [][]bson.RawValue {
		k := make([]bson.RawValue, len(elems))
		for i, el := range elems {
			k[i] = indexedValue(doc, el)
		}
		if len(k) != 1 || k[0].Type != bson.TypeArray {
			return [][]bson.RawValue{k}
		}
		vals, _ := k[0].Array().Values()
		if len(vals) == 0 {
			return [][]bson.RawValue{{{Type: bson.TypeUndefined}}}
		}
		out := make([][]bson.RawValue, len(vals))
		for i, v := range vals {
			out[i] = []bson.RawValue{v}
		}
		return out
	}
	// An open bound is filled as finishMinObj and finishMaxObj fill it:
	// MinKey (upper: MaxKey) where the key pattern's value is not a number
	// or its integer part is positive, else MaxKey (MinKey).
	boundKey := func(b bson.Raw, upper bool) []bson.RawValue {
		if b != nil {
			vals, _ := b.Values()
			return vals
		}
		k := make([]bson.RawValue, len(elems))
		for i, el := range elems {
			n, ok := values.Float64(el.Value())
			k[i].Type = bson.TypeMinKey
			if upper == (!ok || int64(n) > 0) {
				k[i].Type = bson.TypeMaxKey
			}
		}
		return k
	}
	lo, hi := boundKey(min, false), boundKey(max, true)
	type keyed struct {
		key []bson.RawValue
		id  bson.RawValue
	}
	var want []keyed
	for _, d := range docs {
		if !matches(d.Lookup("_id")) {
			continue
		}
		// A document is read once, at its first key in the range (without
		// min and max the find is a plain scan of the index).
		var first []bson.RawValue
		for _, k := range keysOf(d) {
			if min == nil && max == nil || compareKeys(pattern, k, lo) >= 0 && compareKeys(pattern, k, hi) < 0 {
				if first == nil || compareKeys(pattern, k, first) < 0 {
					first = k
				}
			}
		}
		if first != nil {
			want = append(want, keyed{first, d.Lookup("_id")})
		}
	}
	slices.SortStableFunc(want, func(a, b keyed) int {
		if c := compareKeys(pattern, a.key, b.key); c != 0 {
			return c
		}
		return values.Compare(a.id, b.id)
	})
	empty := (min != nil || max != nil) && compareKeys(pattern, lo, hi) >= 0
	hint := bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, name)}
	got, err := ids(FindOptions{Filter: filter, Hint: hint, Min: min, Max: max})
	where := fmt.Sprintf("seed %d (-diffseed=%d), index %s, filter %v, min %v, max %v", seed, seed, pattern, filter, min, max)
	if empty {
		if !mongoerr.Is(err, mongoerr.MinNotBeforeMax) {
			t.Fatalf("%s: got %v (%d documents), want error 51175", where, err, len(got))
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	wantIDs := make([]bson.RawValue, len(want))
	for i, w := range want {
		wantIDs[i] = w.id
	}
	if !slices.EqualFunc(got, wantIDs, func(a, b bson.RawValue) bool { return values.Compare(a, b) == 0 }) {
		t.Fatalf("%s:\n got _ids %v\nwant _ids %v", where, got, wantIDs)
	}
}
