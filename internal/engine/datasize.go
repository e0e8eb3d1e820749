package engine

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// SizeOptions are what dataSize measures: the documents between Min
// (inclusive) and Max (exclusive) in the order of an index whose key
// pattern starts with KeyPattern (empty: inferred from Min), or with both
// empty the whole collection; Estimate counts the average document size
// for each; the scan stops past MaxSize bytes or MaxObjects documents (0:
// no bound).
type SizeOptions struct {
	KeyPattern, Min, Max bson.Raw
	Estimate             bool
	MaxSize, MaxObjects  int64
	Ctx                  context.Context
}

// SizeResult is dataSize's answer. Empty reports a collection without
// documents (or missing), for which MongoDB reports zeros and nothing else.
type SizeResult struct {
	Size, Objects int64
	MaxReached    bool
	Empty         bool
}

// DataSize measures db.coll as MongoDB 7.0's dataSize does.
func (e *Engine) DataSize(db, coll string, o SizeOptions) (SizeResult, error) {
	c := e.cat.get(db, coll)
	if c == nil {
		return SizeResult{Empty: true}, nil
	}
	empty, err := collectionEmpty(e.kv, c)
	if err != nil || empty {
		return SizeResult{Empty: true}, err
	}
	whole := rawdoc.Len(o.Min) == 0
	if whole != (rawdoc.Len(o.Max) == 0) {
		return SizeResult{}, mongoerr.New(mongoerr.BadValue, "Only one of min or max specified")
	}
	// Only an estimate needs the collection's totals, which take a scan.
	var avg int64
	if o.Estimate {
		stats, err := e.Stats(c)
		if err != nil {
			return SizeResult{}, err
		}
		if whole {
			return SizeResult{Size: stats.Size, Objects: stats.Count}, nil
		}
		if stats.Count > 0 {
			avg = stats.Size / stats.Count
		}
	}
	p := planner.NaturalScan(1, false)
	if !whole {
		if p, err = sizeRangePlan(c, o); err != nil {
			return SizeResult{}, err
		}
	}
	scan, err := e.openScan(c, p, nil, nil, o.Ctx, opStatsOf(o.Ctx))
	if err != nil {
		return SizeResult{}, err
	}
	defer scan.src.Close()
	var r SizeResult
	for {
		doc, _, err := scan.next()
		if doc == nil || err != nil {
			return r, err
		}
		if o.Estimate {
			r.Size += avg
		} else {
			r.Size += int64(len(doc))
		}
		r.Objects++
		if o.MaxSize > 0 && r.Size > o.MaxSize || o.MaxObjects > 0 && r.Objects > o.MaxObjects {
			r.MaxReached = true
			return r, nil
		}
	}
}

// sizeRangePlan is the scan of dataSize's key range. On a sharded
// collection, keyPattern must be the shard key's (or empty) and min and
// max name its fields, reordered to its order (BadValue otherwise). The
// index is the first (the _id index first, then the catalog's order) that
// holds every document under one key of the key pattern's fields
// (ServesShardKey, not multikey) and whose key pattern starts with o's
// (findShardKeyPrefixedIndex, which looks at hidden indexes too); the
// scan runs from Min to Max, each filled to the index's fields with the
// first key of the fields it lacks (KeyPattern::extendRangeBound).
func sizeRangePlan(c *Collection, o SizeOptions) (*planner.Plan, error) {
	kp, min, max := o.KeyPattern, o.Min, o.Max
	if c.shard != nil {
		if rawdoc.Len(kp) > 0 && !SameKeyPattern(kp, c.shard.key) {
			return nil, mongoerr.New(mongoerr.BadValue, "keyPattern must be empty or must be an object that equals the shard key")
		}
		var err error
		if min, err = normalizeShardKey(c.shard.key, min, "min"); err != nil {
			return nil, err
		}
		if max, err = normalizeShardKey(c.shard.key, max, "max"); err != nil {
			return nil, err
		}
	}
	if rawdoc.Len(kp) == 0 {
		kp = inferKeyPattern(min)
	}
	var ix *planner.Index
	found := c.shard == nil && c.DefaultCollator() == nil && KeyPatternPrefix(kp, planner.IDKeyPattern)
	cands := c.Indexes()
	if c.shard != nil {
		cands = append([]*Index{c.shard.idIndex}, cands...)
	}
	for _, cand := range cands {
		if found {
			break
		}
		if !cand.ServesShardKey() || cand.Multikey() || !KeyPatternPrefix(kp, cand.keyPattern()) {
			continue
		}
		planned := cand.planned()
		ix, found = &planned, true
	}
	if !found {
		return nil, mongoerr.New(mongoerr.OperationFailed, "Couldn't find valid index containing key pattern")
	}
	pattern := bson.Raw(planner.IDKeyPattern)
	if ix != nil {
		pattern = ix.KeyPattern
	}
	min, err := extendRangeBound(pattern, min)
	if err != nil {
		return nil, err
	}
	max, err = extendRangeBound(pattern, max)
	if err != nil {
		return nil, err
	}
	lo := planner.KeyBound(ix, nil, min, false)
	hi := planner.KeyBound(ix, nil, max, false)
	return planner.KeyRange(ix, nil, lo, hi, planner.Query{}), nil
}

// normalizeShardKey is a sharded collection's dataSize bound (min or max,
// named what) in the order of its shard key: it must name the key's
// fields, each once, with values a shard key may hold (no array, regex or
// undefined), as ShardKeyPattern::isShardKey checks.
func normalizeShardKey(key, bound bson.Raw, what string) (bson.Raw, error) {
	if rawdoc.Len(bound) == 0 {
		return bound, nil
	}
	fail := mongoerr.New(mongoerr.BadValue, "%s value %s does not have shard key", what, values.ShellDoc(bound))
	if rawdoc.Len(bound) != rawdoc.Len(key) {
		return nil, fail
	}
	start, out := bsoncore.AppendDocumentStart(nil)
	it := rawdoc.Iterate(key)
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		v, err := bound.LookupErr(string(k))
		if err != nil || v.Type == bson.TypeArray || v.Type == bson.TypeRegex || v.Type == bson.TypeUndefined {
			return nil, fail
		}
		out = bsoncore.AppendValueElement(out, string(k), bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out, nil
}

// inferKeyPattern is the ascending key pattern of min's fields
// (Helpers::inferKeyPattern).
func inferKeyPattern(min bson.Raw) bson.Raw {
	start, kp := bsoncore.AppendDocumentStart(nil)
	it := rawdoc.Iterate(min)
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		kp = bsoncore.AppendInt32Element(kp, string(k), 1)
	}
	kp, _ = bsoncore.AppendDocumentEnd(kp, start)
	return kp
}

// extendRangeBound is bound with the fields of pattern it lacks added, as
// MinKey (MaxKey on a descending field): bound must name pattern's first
// fields in order (16649, 16634), as MongoDB's massert checks.
func extendRangeBound(pattern, bound bson.Raw) (bson.Raw, error) {
	start, out := bsoncore.AppendDocumentStart(nil)
	bi, pi := rawdoc.Iterate(bound), rawdoc.Iterate(pattern)
	for {
		k, v, ok := bi.Next()
		if !ok {
			break
		}
		p, _, ok := pi.Next()
		if !ok {
			return nil, mongoerr.New(mongoerr.BoundFieldNotInKeyPattern, "keyPattern must contain all fields in bound")
		}
		if string(k) != string(p) {
			return nil, mongoerr.New(mongoerr.BoundFieldNameMismatch, "field names of bound and keyPattern must match")
		}
		out = bsoncore.AppendValueElement(out, string(k), bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	}
	for {
		p, pv, ok := pi.Next()
		if !ok {
			break
		}
		// MongoDB reads the direction as numberInt (1 for a name such as
		// "hashed") and fills MinKey when it is positive.
		if n, isNum := values.Float64(pv); isNum && int64(n) <= 0 {
			out = bsoncore.AppendMaxKeyElement(out, string(p))
		} else {
			out = bsoncore.AppendMinKeyElement(out, string(p))
		}
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out, nil
}
