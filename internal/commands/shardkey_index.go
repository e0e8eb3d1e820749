package commands

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// ensureShardKeyIndex applies MongoDB's shard key index rules to db.coll:
// every unique index must have the shard key as a prefix of its fields
// (the _id index aside); an index whose key starts with the shard key, not
// sparse, not partial, without a collation (the exact key, unique, when
// unique is asked for) and not multikey serves it; without one the
// collection must be empty (or missing), and the index is created.
func (s *Service) ensureShardKeyIndex(r *Request, db, coll string, sk shardKey, unique bool) error {
	ns := db + "." + coll
	c := s.Engine.Collection(db, coll)
	requireUnique := unique && r.args.bool("enforceUniquenessCheck")
	if c != nil {
		useful, err := usefulShardKeyIndex(c, ns, sk, requireUnique)
		if err != nil || useful {
			return err
		}
		n, err := s.Engine.Count(db, coll, engine.FindOptions{Limit: 1, Ctx: r.Ctx})
		if err != nil {
			return err
		}
		if n > 0 {
			return mongoerr.New(mongoerr.InvalidOptions, "Please create an index that starts with the proposed shard key before sharding the collection. %s", unusableReasons(c))
		}
	}
	if !r.args.bool("implicitlyCreateIndex") {
		return mongoerr.New(mongoerr.ShardKeyIndexRequired, "Must have an index compatible with the proposed shard key")
	}
	if isIDKey(sk.doc) {
		// The _id index serves it; only the collection is missing.
		if c == nil {
			return s.Engine.CreateCollection(db, coll, engine.CollectionOptions{})
		}
		return nil
	}
	_, err := s.Engine.CreateIndexes(db, coll, []engine.IndexSpec{{
		Name: engine.DefaultIndexName(sk.doc), Key: sk.doc, Unique: unique, ExpireAfter: -1,
	}}, nil)
	return err
}

// usefulShardKeyIndex reports whether an index of c serves the shard key,
// failing when a unique index conflicts with it.
func usefulShardKeyIndex(c *engine.Collection, ns string, sk shardKey, requireUnique bool) (bool, error) {
	idKey := marshal(bson.D{{Key: "_id", Value: int32(1)}})
	type candidate struct {
		key                      bson.Raw
		unique, usable, multikey bool
	}
	cands := []candidate{{key: idKey, usable: true}}
	for _, ix := range c.Indexes() {
		cands = append(cands, candidate{
			key: ix.Spec.Lookup("key").Document(), unique: ix.Unique, multikey: ix.Multikey(), usable: ix.ServesShardKey(),
		})
	}
	for _, cd := range cands {
		if cd.unique && !uniqueIndexCompatible(sk.doc, cd.key) {
			return false, mongoerr.New(mongoerr.InvalidOptions, "can't shard collection '%s' with unique index on %s and proposed shard key %s. Uniqueness can't be maintained unless shard key is a prefix",
				ns, shellKey(cd.key), shellKey(sk.doc))
		}
	}
	useful, singleKey := false, false
	for _, cd := range cands {
		if cd.usable && engine.KeyPatternPrefix(sk.doc, cd.key) {
			useful = true
			singleKey = singleKey || !cd.multikey
		}
	}
	if useful && requireUnique {
		var exact *candidate
		for i := range cands {
			if engine.SameKeyPattern(cands[i].key, sk.doc) {
				exact = &cands[i]
				break
			}
		}
		if exact == nil {
			return false, nil
		}
		if !exact.unique && !isIDKey(exact.key) {
			return false, mongoerr.New(mongoerr.InvalidOptions, "can't shard collection %s, %s index not unique, and unique index explicitly specified", ns, shellKey(sk.doc))
		}
	}
	if useful && !singleKey {
		return false, mongoerr.New(mongoerr.InvalidOptions, "couldn't find valid index for shard key")
	}
	return useful, nil
}

// unusableReasons says why c's indexes cannot serve a shard key, as
// MongoDB appends it to its refusal: sparse, partial or with a collation.
func unusableReasons(c *engine.Collection) string {
	var out string
	for _, ix := range c.Indexes() {
		var reasons string
		if ix.Sparse {
			reasons += " Index key is sparse."
		}
		if _, ok := ix.Spec.Lookup("partialFilterExpression").DocumentOK(); ok {
			reasons += " Index key is partial."
		}
		if _, ok := ix.Spec.Lookup("collation").DocumentOK(); ok {
			reasons += " Index has a non-simple collation."
		}
		if reasons != "" {
			out = " Index " + ix.Name + " cannot be used for sharding because [" + reasons + " ]"
		}
	}
	return out
}

// uniqueIndexCompatible: the shard key's fields are the first fields of
// a unique index's key, or the index is on _id first.
func uniqueIndexCompatible(shardKey, index bson.Raw) bool {
	ie, _ := index.Elements()
	if len(ie) > 0 && ie[0].Key() == "_id" {
		return true
	}
	se, _ := shardKey.Elements()
	if len(se) > len(ie) {
		return false
	}
	for i := range se {
		if se[i].Key() != ie[i].Key() {
			return false
		}
	}
	return true
}

func isIDKey(key bson.Raw) bool {
	e, _ := key.Elements()
	return len(e) == 1 && e[0].Key() == "_id" && e[0].Value().Type != bson.TypeString
}

// shellKey renders a document as MongoDB's BSONObj::toString does in
// messages: { a: 1, b: "hashed" }.
func shellKey(d bson.Raw) string {
	elems, _ := d.Elements()
	if len(elems) == 0 {
		return "{}"
	}
	var b strings.Builder
	b.WriteString("{ ")
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Key() + ": " + values.Shell(e.Value()))
	}
	b.WriteString(" }")
	return b.String()
}
