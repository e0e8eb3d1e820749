package commands

import (
	"bytes"
	"context"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// Sharding as a router (mongos) answers it, on a cluster of one shard
// ("folio"): shardCollection has the engine store the collection in shard
// key order (engine.ShardCollection), and its chunks are the store's
// ranges over its documents (engine.ShardChunks: TiKV's regions; one
// chunk, [MinKey, MaxKey), on Pebble). The metadata lives where MongoDB
// keeps it, in real collections of the config database (config.version,
// config.databases, config.collections, config.chunks, config.shards),
// written by these commands and by the jobs frontend's SyncShardChunks,
// read with find like any collection; it survives restarts as they do.

// shardName is the one shard's id.
const shardName = "folio"

// The config database and its sharding collections.
const (
	configDB        = "config"
	configDatabases = "databases"
	configColls     = "collections"
	configChunks    = "chunks"
	configShards    = "shards"
	configVersion   = "version"
)

func init() {
	registerAdmin(enableShardingCmd, enableShardingSpec, "enableSharding", "enablesharding")
	registerAdmin(shardCollectionCmd, shardCollectionSpec, "shardCollection", "shardcollection")
	registerAdmin(listShardsCmd, &argSpec{path: "listShards"}, "listShards", "listshards")
}

// enableShardingSpec declares enableSharding's fields (MongoDB 7.0's
// cluster command; since 6.0 the database needs it no more, shardCollection
// registers the database itself).
// https://www.mongodb.com/docs/v7.0/reference/command/enableSharding/
var enableShardingSpec = &argSpec{path: "enableSharding", fields: []argField{
	arg("primaryShard", tString),
}}

// shardCollectionSpec declares shardCollection's fields.
// https://www.mongodb.com/docs/v7.0/reference/command/shardCollection/
var shardCollectionSpec = &argSpec{path: "shardCollection", fields: []argField{
	required("key", tDoc),
	arg("unique", tBool),
	arg("numInitialChunks", tLong),
	arg("presplitHashedZones", tBool),
	arg("collation", tDoc),
	withDefault("implicitlyCreateIndex", tBool, 1),
	withDefault("enforceUniquenessCheck", tBool, 1),
	refuse("timeseries", tDoc, "sharding a time series collection"),
	collectionUUIDField,
}}

// enableShardingCmd registers the database in config.databases with shard
// "folio" as its primary; registering it again changes nothing.
func enableShardingCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.first()
	db, ok := v.StringValueOK()
	if !ok {
		return nil, wrongType("enableSharding", "enableSharding", v, "string")
	}
	if err := engine.ValidateDBName(db); err != nil {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "invalid db name specified: %s", db)
	}
	if p := r.args.str("primaryShard"); p != "" && p != shardName {
		return nil, mongoerr.New(mongoerr.ShardNotFound, "Shard %s not found", p)
	}
	return nil, s.registerShardedDB(db)
}

// registerShardedDB makes sure config.databases and config.shards
// describe db and the one shard. admin and local cannot be sharded;
// config is always there, held by the config server.
func (s *Service) registerShardedDB(db string) error {
	switch db {
	case "admin", "local":
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot enable sharding on the %s database", db)
	case configDB:
		return nil
	}
	if err := s.putShardDoc(); err != nil {
		return err
	}
	if v, err := s.findConfigDoc(configVersion, int32(1)); err != nil {
		return err
	} else if v == nil {
		// The cluster's identity, made once.
		if err := s.insertNewConfigDoc(configVersion, bson.D{{Key: "_id", Value: int32(1)}, {Key: "clusterId", Value: bson.NewObjectID()}}); err != nil {
			return err
		}
	}
	old, err := s.findConfigDoc(configDatabases, db)
	if err != nil || old != nil {
		return err
	}
	now := s.Clock.Tick().Timestamp()
	return s.insertNewConfigDoc(configDatabases, bson.D{
		{Key: "_id", Value: db},
		{Key: "primary", Value: shardName},
		{Key: "version", Value: bson.D{
			{Key: "uuid", Value: newUserID()},
			{Key: "timestamp", Value: now},
			{Key: "lastMod", Value: int32(1)},
		}},
	})
}

// shardDoc is the one shard as config.shards and listShards describe it:
// the replica set's name and its member, as a router knows a shard.
func (s *Service) shardDoc() bson.D {
	host := s.Host
	if s.ReplSetName != "" {
		host = s.ReplSetName + "/" + s.Host
	}
	return bson.D{
		{Key: "_id", Value: shardName},
		{Key: "host", Value: host},
		{Key: "state", Value: int32(1)},
		{Key: "topologyTime", Value: bson.Timestamp{T: 1, I: 0}},
	}
}

// putShardDoc writes the shard's config.shards entry, replacing it when the
// server's address has changed since.
func (s *Service) putShardDoc() error {
	_, err := s.Engine.Update(configDB, configShards, engine.UpdateSpec{
		Filter:       marshal(bson.D{{Key: "_id", Value: shardName}}),
		Update:       marshal(s.shardDoc()),
		Upsert:       true,
		WriteOptions: engine.WriteOptions{Journal: true},
	})
	return err
}

func listShardsCmd(s *Service, r *Request) (bson.Raw, error) {
	return marshal(bson.D{{Key: "shards", Value: bson.A{s.shardDoc()}}}), nil
}

// shardKey is a validated shard key pattern.
type shardKey struct {
	doc    bson.Raw
	hashed bool
}

// parseShardKey applies MongoDB's shard key pattern rules: at least one
// field, no empty path parts, each field 1 (ascending) or "hashed", at most
// one hashed field.
func parseShardKey(key bson.Raw) (shardKey, error) {
	sk := shardKey{doc: key}
	elems, _ := key.Elements()
	if len(elems) == 0 {
		return sk, mongoerr.New(mongoerr.BadValue, "Shard key is empty")
	}
	for _, el := range elems {
		path := el.Key()
		if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
			return sk, mongoerr.New(mongoerr.BadValue, "Field %s contains empty parts", path)
		}
		v := el.Value()
		if h, ok := v.StringValueOK(); ok && h == "hashed" && !sk.hashed {
			sk.hashed = true
			continue
		}
		if n, ok := safeInt32(v); ok && values.IsNumber(v.Type) && n == 1 {
			continue
		}
		return sk, mongoerr.New(mongoerr.BadValue, "Shard key %s can contain at most one 'hashed' field, and/or multiple numerical fields set to a value of 1. Failed to parse field %s",
			shellKey(key), path)
	}
	return sk, nil
}

// shardCollectionCmd shards db.coll: checks the key, creates the
// collection and the key's index when needed (as MongoDB's shard key index
// rules allow), then records the collection and its one chunk.
func shardCollectionCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.first()
	ns, ok := v.StringValueOK()
	if !ok {
		return nil, wrongType("shardCollection", "shardCollection", v, "string")
	}
	db, coll, ok := strings.Cut(ns, ".")
	if !ok || db == "" || coll == "" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s'", ns)
	}
	if err := engine.ValidateDBName(db); err != nil {
		return nil, err
	}
	if strings.HasPrefix(coll, "system.") || db == "admin" || db == "local" || db == configDB {
		return nil, mongoerr.New(mongoerr.IllegalOperation, "can't shard system namespaces")
	}
	if err := engine.ValidateCollName(db, coll); err != nil {
		return nil, err
	}
	sk, err := parseShardKey(r.args.doc("key"))
	if err != nil {
		return nil, err
	}
	unique := r.args.bool("unique")
	if sk.hashed && unique {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "Hashed shard keys cannot be declared unique. It's possible to ensure uniqueness on the hashed field by declaring an additional (non-hashed) unique index on the field.")
	}
	if col := r.args.doc("collation"); col != nil && !simpleCollation(col) {
		return nil, mongoerr.New(mongoerr.BadValue, "The collation for shardCollection must be {locale: 'simple'}, but found: %s", shellKey(col))
	}
	numChunks, err := r.args.long("numInitialChunks")
	if err != nil {
		return nil, err
	}
	s.sharding.Lock()
	defer s.sharding.Unlock()
	if err := s.checkCollectionUUID(r, &r.args, db, coll); err != nil {
		return nil, err
	}
	if old, err := s.findConfigDoc(configColls, ns); err != nil || old != nil {
		if err != nil {
			return nil, err
		}
		return s.alreadySharded(ns, sk.doc, unique)
	}
	if c := s.Engine.Collection(db, coll); c != nil && c.Options.Capped {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "can't shard a capped collection")
	}
	// The initial split, checked before anything is created: one
	// chunk, as one shard holds it all.
	if numChunks != 0 && !sk.hashed {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "numInitialChunks is only supported when the collection is empty and has a hashed field in the shard key pattern")
	}
	if r.args.bool("presplitHashedZones") {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "presplitHashedZones is true but no zones are defined for %s", ns)
	}
	if numChunks > 1 {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the option 'numInitialChunks' of shardCollection (splitting a collection into several chunks)")
	}
	if err := s.registerShardedDB(db); err != nil {
		return nil, err
	}
	if err := s.ensureShardKeyIndex(r, db, coll, sk, unique); err != nil {
		return nil, err
	}
	if err := s.Engine.ShardCollection(r.Ctx, db, coll, sk.doc); err != nil {
		return nil, err
	}
	c := s.Engine.Collection(db, coll)
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "Collection %s was dropped while being sharded", ns)
	}
	if err := s.recordSharded(r.Ctx, c, ns, sk.doc, unique); mongoerr.Is(err, mongoerr.DuplicateKey) {
		// A concurrent shardCollection recorded it first.
		return s.alreadySharded(ns, sk.doc, unique)
	} else if err != nil {
		return nil, err
	}
	return collectionSharded(ns), nil
}

// alreadySharded answers shardCollection of a sharded collection: with
// the same key and uniqueness it succeeds and changes nothing, with others
// it is refused.
func (s *Service) alreadySharded(ns string, key bson.Raw, unique bool) (bson.Raw, error) {
	old, err := s.findConfigDoc(configColls, ns)
	if err != nil {
		return nil, err
	}
	if old != nil && engine.SameKeyPattern(old.Lookup("key").Document(), key) && old.Lookup("unique").Boolean() == unique {
		return collectionSharded(ns), nil
	}
	return nil, mongoerr.New(mongoerr.AlreadyInitialized, "sharding already enabled for collection %s", ns)
}

func collectionSharded(ns string) bson.Raw {
	return marshal(bson.D{{Key: "collectionsharded", Value: ns}})
}

// simpleCollation reports whether a collation is {locale: "simple"}, the
// only one a shard key takes.
func simpleCollation(col bson.Raw) bool {
	elems, _ := col.Elements()
	if len(elems) != 1 || elems[0].Key() != "locale" {
		return false
	}
	l, ok := elems[0].Value().StringValueOK()
	return ok && l == "simple"
}

// recordSharded writes the collection's config.collections entry and its
// chunks.
func (s *Service) recordSharded(ctx context.Context, c *engine.Collection, ns string, key bson.Raw, unique bool) error {
	now := s.Clock.Tick().Timestamp()
	uuid := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}
	err := s.insertConfigDoc(configColls, bson.D{
		{Key: "_id", Value: ns},
		{Key: "lastmodEpoch", Value: bson.NewObjectID()},
		{Key: "lastmod", Value: bson.NewDateTimeFromTime(time.Now())},
		{Key: "timestamp", Value: now},
		{Key: "uuid", Value: uuid},
		{Key: "key", Value: key},
		{Key: "unique", Value: unique},
		{Key: "noBalance", Value: false},
	})
	if err != nil {
		return err
	}
	return s.syncChunks(ctx, c)
}

// syncChunks makes config.chunks describe c's chunks as the store holds
// them now (Engine.ShardChunks: on TiKV, one chunk per region of its
// documents), replacing the chunks recorded before in one transaction
// when they differ.
func (s *Service) syncChunks(ctx context.Context, c *engine.Collection) error {
	key, ok := c.Sharded()
	if !ok {
		return nil
	}
	points, err := s.Engine.ShardChunks(ctx, c)
	if err != nil {
		return err
	}
	elems, _ := key.Elements()
	lo, hi := make(bson.D, len(elems)), make(bson.D, len(elems))
	for i, el := range elems {
		lo[i] = bson.E{Key: el.Key(), Value: bson.MinKey{}}
		hi[i] = bson.E{Key: el.Key(), Value: bson.MaxKey{}}
	}
	bounds := append(append([]bson.D{lo}, points...), hi)
	uuid := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}
	byUUID := marshal(bson.D{{Key: "uuid", Value: uuid}})
	cur, err := s.Engine.Find(configDB, configChunks, engine.FindOptions{Filter: byUUID, Sort: marshal(bson.D{{Key: "min", Value: 1}})})
	if err != nil {
		return err
	}
	same := true
	n := 0
	for {
		d, err := cur.Next()
		if err != nil {
			cur.Close()
			return err
		}
		if d == nil {
			break
		}
		if n+1 >= len(bounds) || !bytes.Equal(d.Lookup("min").Value, marshal(bounds[n])) || !bytes.Equal(d.Lookup("max").Value, marshal(bounds[n+1])) {
			same = false
		}
		n++
	}
	cur.Close()
	if same && n == len(bounds)-1 {
		return nil
	}
	now := s.Clock.Tick().Timestamp()
	chunks := make([]bson.Raw, len(bounds)-1)
	for i := range chunks {
		chunks[i] = marshal(bson.D{
			{Key: "_id", Value: bson.NewObjectID()},
			{Key: "uuid", Value: uuid},
			{Key: "min", Value: bounds[i]},
			{Key: "max", Value: bounds[i+1]},
			{Key: "shard", Value: shardName},
			{Key: "lastmod", Value: bson.Timestamp{T: 1, I: uint32(i)}},
			{Key: "onCurrentShardSince", Value: now},
			{Key: "history", Value: bson.A{bson.D{{Key: "validAfter", Value: now}, {Key: "shard", Value: shardName}}}},
		})
	}
	txn, err := s.Engine.Begin()
	if err != nil {
		return err
	}
	defer txn.Abort()
	opts := engine.WriteOptions{Txn: txn}
	if _, err := s.Engine.Delete(configDB, configChunks, byUUID, 0, bson.RawValue{}, opts); err != nil {
		return err
	}
	if _, werrs, err := s.Engine.Insert(configDB, configChunks, chunks, true, opts); err != nil {
		return err
	} else if len(werrs) > 0 {
		return werrs[0].Err
	}
	return txn.Commit()
}

// SyncShardChunks brings config.chunks up to date with the store's
// ranges for every sharded collection; the frontend holding the jobs
// lease runs it from time to time, as a balancer records splits, under
// the service's context, which shutdown interrupts.
func (s *Service) SyncShardChunks() error {
	if !s.Engine.RunsJobs() || !s.Writable() || s.Engine.Collection(configDB, configChunks) == nil {
		return nil
	}
	ctx := s.Context()
	for _, db := range s.Engine.Databases() {
		for _, c := range s.Engine.Collections(db) {
			if err := s.syncChunks(ctx, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// shardedChunks is how many chunks db.coll has: 0 when it is not
// sharded.
func shardedChunks(e *engine.Engine, c *engine.Collection) (int64, error) {
	uuid := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}
	return e.Count(configDB, configChunks, engine.FindOptions{Filter: marshal(bson.D{{Key: "uuid", Value: uuid}})})
}

// forgetSharded removes what config says of a dropped collection (its
// entry and its chunks), as dropping a sharded collection does; c is the
// collection as it was.
func (s *Service) forgetSharded(c *engine.Collection) error {
	if s.Engine.Collection(configDB, configColls) == nil {
		return nil
	}
	opts := engine.WriteOptions{Journal: true}
	if _, err := s.Engine.Delete(configDB, configColls, marshal(bson.D{{Key: "_id", Value: c.DB + "." + c.Name}}), 0, bson.RawValue{}, opts); err != nil {
		return err
	}
	uuid := bson.Binary{Subtype: bson.TypeBinaryUUID, Data: c.UUID[:]}
	_, err := s.Engine.Delete(configDB, configChunks, marshal(bson.D{{Key: "uuid", Value: uuid}}), 0, bson.RawValue{}, opts)
	return err
}

// renameSharded follows a rename in config: the replaced target (when
// there was one) is forgotten, the source's entry (when it was sharded)
// moves to its new name; its chunks follow its UUID, which a rename keeps.
func (s *Service) renameSharded(entry bson.Raw, to string, target *engine.Collection) error {
	if target != nil {
		if err := s.forgetSharded(target); err != nil {
			return err
		}
	}
	if entry == nil {
		return nil
	}
	var d bson.D
	if err := bson.Unmarshal(entry, &d); err != nil {
		return err
	}
	d[0].Value = to
	if _, err := s.Engine.Delete(configDB, configColls, marshal(bson.D{{Key: "_id", Value: entry.Lookup("_id")}}), 0, bson.RawValue{}, engine.WriteOptions{Journal: true}); err != nil {
		return err
	}
	return s.insertConfigDoc(configColls, d)
}

// forgetShardedDB removes a dropped database's config.databases entry.
func (s *Service) forgetShardedDB(db string) error {
	if db == configDB || s.Engine.Collection(configDB, configDatabases) == nil {
		return nil
	}
	_, err := s.Engine.Delete(configDB, configDatabases, marshal(bson.D{{Key: "_id", Value: db}}), 0, bson.RawValue{}, engine.WriteOptions{Journal: true})
	return err
}

// findConfigDoc reads config.coll's document with _id id; nil when none.
func (s *Service) findConfigDoc(coll string, id any) (bson.Raw, error) {
	cur, err := s.Engine.Find(configDB, coll, engine.FindOptions{Filter: marshal(bson.D{{Key: "_id", Value: id}}), Limit: 1})
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	d, err := cur.Next()
	if d == nil || err != nil {
		return nil, err
	}
	return append(bson.Raw(nil), d...), nil
}

// insertNewConfigDoc inserts doc unless a document with its _id exists,
// written meanwhile by a concurrent command.
func (s *Service) insertNewConfigDoc(coll string, doc bson.D) error {
	if err := s.insertConfigDoc(coll, doc); err != nil && !mongoerr.Is(err, mongoerr.DuplicateKey) {
		return err
	}
	return nil
}

func (s *Service) insertConfigDoc(coll string, doc bson.D) error {
	_, werrs, err := s.Engine.Insert(configDB, coll, []bson.Raw{marshal(doc)}, true, engine.WriteOptions{Journal: true})
	if err != nil {
		return err
	}
	if len(werrs) > 0 {
		return werrs[0].Err
	}
	return nil
}
