package driver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// adminCmd runs cmd on the admin database.
func adminCmd(t *testing.T, client *mongo.Client, cmd bson.D) (bson.Raw, error) {
	t.Helper()
	return client.Database("admin").RunCommand(t.Context(), cmd).Raw()
}

// configDocs reads db.coll whole, in _id order.
func configDocs(t *testing.T, client *mongo.Client, db, coll string) []bson.Raw {
	t.Helper()
	cur, err := client.Database(db).Collection(coll).Find(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(t.Context(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShardCollection shards collections as a router does, on Folio's one
// shard: the reply, the shard key index, config.collections and
// config.chunks (one chunk, MinKey to MaxKey), collStats.
// https://www.mongodb.com/docs/v7.0/reference/command/shardCollection/
// https://www.mongodb.com/docs/v7.0/reference/config-database/
func TestShardCollection(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database("forum")
	// The seed's shard keys: comments by discussion and slug, buckets by
	// discussion and bucket number.
	if _, err := db.Collection("comments").InsertOne(ctx, bson.D{{Key: "discussion_id", Value: 1}, {Key: "full_slug", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("comments").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "discussion_id", Value: 1}, {Key: "full_slug", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := adminCmd(t, client, bson.D{{Key: "enableSharding", Value: "forum"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ns  string
		key bson.D
	}{
		{"forum.comments", bson.D{{Key: "discussion_id", Value: 1}, {Key: "full_slug", Value: 1}}},
		{"forum.comment_buckets", bson.D{{Key: "discussion_id", Value: 1}, {Key: "bucket", Value: 1}}},
	} {
		reply, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: c.ns}, {Key: "key", Value: c.key}})
		if err != nil {
			t.Fatalf("%s: %v", c.ns, err)
		}
		if got := reply.Lookup("collectionsharded").StringValue(); got != c.ns {
			t.Errorf("collectionsharded %q, want %q", got, c.ns)
		}
		// Sharding again with the same key succeeds.
		if _, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: c.ns}, {Key: "key", Value: c.key}}); err != nil {
			t.Errorf("%s again: %v", c.ns, err)
		}
	}
	// The missing collection was created with its shard key index.
	specs, err := db.Collection("comment_buckets").Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || specs[1].Name != "discussion_id_1_bucket_1" {
		t.Errorf("indexes %+v, want _id_ and discussion_id_1_bucket_1", specs)
	}

	colls := configDocs(t, client, "config", "collections")
	if len(colls) != 2 {
		t.Fatalf("config.collections %v, want 2 entries", colls)
	}
	info, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "comments"}})
	if err != nil || len(info) != 1 {
		t.Fatal(info, err)
	}
	entry := colls[1] // forum.comments sorts after forum.comment_buckets
	if id := entry.Lookup("_id").StringValue(); id != "forum.comments" {
		t.Fatalf("config.collections _id %q", id)
	}
	wantKeys := []string{"_id", "lastmodEpoch", "lastmod", "timestamp", "uuid", "key", "unique", "noBalance"}
	checkKeys(t, entry, wantKeys)
	if !sameBytes(entry.Lookup("key").Document(), mustRaw(t, bson.D{{Key: "discussion_id", Value: 1}, {Key: "full_slug", Value: 1}})) {
		t.Errorf("key %v", entry.Lookup("key"))
	}
	_, uuid := entry.Lookup("uuid").Binary()
	if string(uuid) != string(info[0].UUID.Data) {
		t.Errorf("uuid %x, want the collection's %x", uuid, info[0].UUID.Data)
	}

	var chunk bson.Raw
	if err := client.Database("config").Collection("chunks").FindOne(ctx, bson.D{{Key: "uuid", Value: entry.Lookup("uuid")}}).Decode(&chunk); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, chunk, []string{"_id", "uuid", "min", "max", "shard", "lastmod", "onCurrentShardSince", "history"})
	if !sameBytes(chunk.Lookup("min").Document(), mustRaw(t, bson.D{{Key: "discussion_id", Value: bson.MinKey{}}, {Key: "full_slug", Value: bson.MinKey{}}})) ||
		!sameBytes(chunk.Lookup("max").Document(), mustRaw(t, bson.D{{Key: "discussion_id", Value: bson.MaxKey{}}, {Key: "full_slug", Value: bson.MaxKey{}}})) {
		t.Errorf("chunk bounds %v %v", chunk.Lookup("min"), chunk.Lookup("max"))
	}
	if s := chunk.Lookup("shard").StringValue(); s != "folio" {
		t.Errorf("chunk shard %q", s)
	}

	// collStats: a sharded collection as a router reports it, sharded with
	// one chunk; an unsharded one as a replica set member does, without
	// either field.
	for _, c := range []struct {
		coll    string
		sharded bool
	}{{"comments", true}, {"plain", false}} {
		if _, err := db.Collection(c.coll).InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
			t.Fatal(err)
		}
		st, err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: c.coll}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		sharded, hasSharded := st.Lookup("sharded").BooleanOK()
		n, hasChunks := st.Lookup("nchunks").Int32OK()
		if c.sharded != (sharded && hasSharded && hasChunks && n == 1) || !c.sharded && (hasSharded || hasChunks) {
			t.Errorf("%s: sharded %v, nchunks %v (%d); want them only when sharded", c.coll, st.Lookup("sharded"), hasChunks, n)
		}
	}

	// $collStats, as a router answers it, names the shard of a sharded
	// collection's document.
	for _, c := range []struct{ coll, shard string }{{"comments", "folio"}, {"plain", ""}} {
		cur, err := db.Collection(c.coll).Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}}}}})
		if err != nil {
			t.Fatal(err)
		}
		var docs []bson.Raw
		if err := cur.All(ctx, &docs); err != nil || len(docs) != 1 {
			t.Fatal(docs, err)
		}
		got, _ := docs[0].Lookup("shard").StringValueOK()
		if got != c.shard {
			t.Errorf("$collStats of %s: shard %q, want %q", c.coll, got, c.shard)
		}
	}

	shards := configDocs(t, client, "config", "shards")
	if len(shards) != 1 || shards[0].Lookup("_id").StringValue() != "folio" {
		t.Errorf("config.shards %v", shards)
	}
	ls, err := adminCmd(t, client, bson.D{{Key: "listShards", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !sameBytes(ls.Lookup("shards", "0").Document(), shards[0]) {
		t.Errorf("listShards %v, config.shards %v", ls, shards)
	}
	dbs := configDocs(t, client, "config", "databases")
	if len(dbs) != 1 || dbs[0].Lookup("_id").StringValue() != "forum" || dbs[0].Lookup("primary").StringValue() != "folio" {
		t.Errorf("config.databases %v", dbs)
	}

	// Dropping a sharded collection forgets its metadata.
	if err := db.Collection("comments").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := client.Database("config").Collection("chunks").CountDocuments(ctx, bson.D{{Key: "uuid", Value: entry.Lookup("uuid")}}); n != 0 {
		t.Errorf("%d chunks left after drop", n)
	}
	if n, _ := client.Database("config").Collection("collections").CountDocuments(ctx, bson.D{{Key: "_id", Value: "forum.comments"}}); n != 0 {
		t.Errorf("config.collections entry left after drop")
	}
}

// TestRenameShardedCollection: a sharded collection keeps its key and
// chunks under its new name, within its database only.
// https://www.mongodb.com/docs/v7.0/reference/command/renameCollection/
func TestRenameShardedCollection(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	for _, ns := range []string{"r.a", "r.target"} {
		if _, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: ns}, {Key: "key", Value: bson.D{{Key: "k", Value: 1}}}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := adminCmd(t, client, bson.D{{Key: "renameCollection", Value: "r.a"}, {Key: "to", Value: "other.a"}})
	requireCode(t, err, 125, "CommandFailed")
	if _, err := adminCmd(t, client, bson.D{{Key: "renameCollection", Value: "r.a"}, {Key: "to", Value: "r.target"}, {Key: "dropTarget", Value: true}}); err != nil {
		t.Fatal(err)
	}
	colls := configDocs(t, client, "config", "collections")
	if len(colls) != 1 || colls[0].Lookup("_id").StringValue() != "r.target" {
		t.Fatalf("config.collections %v, want r.target alone", colls)
	}
	n, err := client.Database("config").Collection("chunks").CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Errorf("%d chunks (%v), want the renamed collection's one", n, err)
	}
	st, err := client.Database("r").RunCommand(ctx, bson.D{{Key: "collStats", Value: "target"}}).Raw()
	if err != nil || !st.Lookup("sharded").Boolean() {
		t.Errorf("collStats r.target %v %v", st, err)
	}
}

func checkKeys(t *testing.T, d bson.Raw, want []string) {
	t.Helper()
	elems, _ := d.Elements()
	var got []string
	for _, e := range elems {
		got = append(got, e.Key())
	}
	if len(got) != len(want) {
		t.Errorf("fields %v, want %v", got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fields %v, want %v", got, want)
			return
		}
	}
}

// TestShardCollectionErrors: each refusal with MongoDB's code.
// https://www.mongodb.com/docs/v7.0/reference/command/shardCollection/
// https://www.mongodb.com/docs/v7.0/core/sharding-shard-key/
func TestShardCollectionErrors(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database("s")
	// full: a document and no index on a; uniq: a unique index on b;
	// sparse: only a sparse index on a; multi: an index on a that has
	// indexed an array; capped.
	for _, c := range []string{"full", "uniq", "sparse", "multi"} {
		if _, err := db.Collection(c).InsertOne(ctx, bson.D{{Key: "a", Value: bson.A{1, 2}}, {Key: "b", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Collection("uniq").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "b", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("sparse").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}, Options: options.Index().SetSparse(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("multi").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: "s.done"}, {Key: "key", Value: bson.D{{Key: "a", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	key := func(kv ...any) bson.D {
		var d bson.D
		for i := 0; i < len(kv); i += 2 {
			d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
		}
		return d
	}
	cases := []struct {
		name string
		db   string
		cmd  bson.D
		code int
		msg  string
	}{
		{"not admin", "s", bson.D{{Key: "shardCollection", Value: "s.x"}, {Key: "key", Value: key("a", 1)}}, 13, "Unauthorized"},
		{"no key", "admin", bson.D{{Key: "shardCollection", Value: "s.x"}}, 40414, ""},
		{"not a namespace", "admin", bson.D{{Key: "shardCollection", Value: "x"}, {Key: "key", Value: key("a", 1)}}, 73, "InvalidNamespace"},
		{"empty key", "admin", bson.D{{Key: "shardCollection", Value: "s.x"}, {Key: "key", Value: bson.D{}}}, 2, "BadValue"},
		{"descending", "admin", bson.D{{Key: "shardCollection", Value: "s.x"}, {Key: "key", Value: key("a", -1)}}, 2, "BadValue"},
		{"two hashed", "admin", bson.D{{Key: "shardCollection", Value: "s.x"}, {Key: "key", Value: key("a", "hashed", "b", "hashed")}}, 2, "BadValue"},
		{"empty path part", "admin", bson.D{{Key: "shardCollection", Value: "s.x"}, {Key: "key", Value: key("a..b", 1)}}, 2, "BadValue"},
		{"unique hashed", "admin", bson.D{{Key: "shardCollection", Value: "s.x"}, {Key: "key", Value: key("a", "hashed")}, {Key: "unique", Value: true}}, 72, "InvalidOptions"},
		{"collation", "admin", bson.D{{Key: "shardCollection", Value: "s.x"}, {Key: "key", Value: key("a", 1)}, {Key: "collation", Value: key("locale", "fr")}}, 2, "BadValue"},
		{"config db", "admin", bson.D{{Key: "shardCollection", Value: "config.x"}, {Key: "key", Value: key("a", 1)}}, 20, "IllegalOperation"},
		{"admin db", "admin", bson.D{{Key: "shardCollection", Value: "admin.x"}, {Key: "key", Value: key("a", 1)}}, 20, "IllegalOperation"},
		{"no index, not empty", "admin", bson.D{{Key: "shardCollection", Value: "s.full"}, {Key: "key", Value: key("a", 1)}}, 72,
			"Please create an index that starts with the proposed shard key before sharding the collection"},
		{"only a sparse index", "admin", bson.D{{Key: "shardCollection", Value: "s.sparse"}, {Key: "key", Value: key("a", 1)}}, 72, "Index key is sparse."},
		{"multikey index", "admin", bson.D{{Key: "shardCollection", Value: "s.multi"}, {Key: "key", Value: key("a", 1)}}, 72, "couldn't find valid index for shard key"},
		{"unique index elsewhere", "admin", bson.D{{Key: "shardCollection", Value: "s.uniq"}, {Key: "key", Value: key("a", 1)}}, 72, "Uniqueness can't be maintained unless shard key is a prefix"},
		{"unique without unique index", "admin", bson.D{{Key: "shardCollection", Value: "s.multi"}, {Key: "key", Value: key("a", 1)}, {Key: "unique", Value: true}}, 72, "index not unique, and unique index explicitly specified"},
		{"capped", "admin", bson.D{{Key: "shardCollection", Value: "s.capped"}, {Key: "key", Value: key("a", 1)}}, 72, "can't shard a capped collection"},
		{"other key", "admin", bson.D{{Key: "shardCollection", Value: "s.done"}, {Key: "key", Value: key("b", 1)}}, 23, "AlreadyInitialized"},
		{"unique now", "admin", bson.D{{Key: "shardCollection", Value: "s.done"}, {Key: "key", Value: key("a", 1)}, {Key: "unique", Value: true}}, 23, "AlreadyInitialized"},
		{"numInitialChunks range key", "admin", bson.D{{Key: "shardCollection", Value: "s.y"}, {Key: "key", Value: key("a", 1)}, {Key: "numInitialChunks", Value: 2}}, 72, "numInitialChunks"},
		{"no implicit index", "admin", bson.D{{Key: "shardCollection", Value: "s.y"}, {Key: "key", Value: key("a", 1)}, {Key: "implicitlyCreateIndex", Value: false}}, 6373200, ""},
		{"timeseries", "admin", bson.D{{Key: "shardCollection", Value: "s.y"}, {Key: "key", Value: key("a", 1)}, {Key: "timeseries", Value: key("timeField", "t")}}, 238, "NotImplemented"},
		{"enableSharding not admin", "s", bson.D{{Key: "enableSharding", Value: "s"}}, 13, "Unauthorized"},
		{"enableSharding bad name", "admin", bson.D{{Key: "enableSharding", Value: "a.b"}}, 73, "InvalidNamespace"},
		{"enableSharding local", "admin", bson.D{{Key: "enableSharding", Value: "local"}}, 72, "InvalidOptions"},
		{"enableSharding other shard", "admin", bson.D{{Key: "enableSharding", Value: "s"}, {Key: "primaryShard", Value: "elsewhere"}}, 70, "ShardNotFound"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := client.Database(c.db).RunCommand(ctx, c.cmd).Err()
			requireCode(t, err, c.code, "")
			if c.msg != "" && !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v, want it to mention %q", err, c.msg)
			}
		})
	}
	// Nothing refused was recorded.
	if n, _ := client.Database("config").Collection("collections").CountDocuments(ctx, bson.D{}); n != 1 {
		t.Errorf("config.collections holds %d entries, want 1 (s.done)", n)
	}
}

// TestShardingSurvivesRestart: the sharding metadata is stored, not
// remembered.
func TestShardingSurvivesRestart(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, first)
	if _, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: "app.events"}, {Key: "key", Value: bson.D{{Key: "user", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	_ = client.Disconnect(context.Background())
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := startInstance(t, cfg)
	client = connect(t, second)
	st, err := client.Database("app").RunCommand(t.Context(), bson.D{{Key: "collStats", Value: "events"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Lookup("sharded").Boolean() {
		t.Errorf("collStats after restart: %v", st)
	}
	// Same key: accepted; another: refused, as before the restart.
	if _, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: "app.events"}, {Key: "key", Value: bson.D{{Key: "user", Value: 1}}}}); err != nil {
		t.Error(err)
	}
	_, err = adminCmd(t, client, bson.D{{Key: "shardCollection", Value: "app.events"}, {Key: "key", Value: bson.D{{Key: "other", Value: 1}}}})
	requireCode(t, err, 23, "AlreadyInitialized")
}

func sameBytes(a, b bson.Raw) bool { return string(a) == string(b) }

// TestShardCollectionConcurrent: racing shardCollection commands of one
// collection all succeed, and config records it once.
func TestShardCollectionConcurrent(t *testing.T) {
	client, _ := startServer(t)
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			errs <- client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "shardCollection", Value: "race.c"}, {Key: "key", Value: bson.D{{Key: "k", Value: 1}}}}).Err()
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for coll, want := range map[string]int{"collections": 1, "chunks": 1, "databases": 1, "version": 1, "shards": 1} {
		if got := len(configDocs(t, client, "config", coll)); got != want {
			t.Errorf("config.%s holds %d documents, want %d", coll, got, want)
		}
	}
}

// TestShardedChunksFollowRegions shards a collection holding documents
// and checks what config.chunks says of it: chunks that tile the key
// space from MinKey to MaxKey, each document in exactly one, as many as
// collStats' nchunks; one chunk on Pebble, and on the TiKV cluster (whose
// regions the test splits every few keys) one per region of the
// collection's documents, which lie in shard key order, so several.
// Reads by _id and by shard key range answer as before the sharding.
func TestShardedChunksFollowRegions(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	coll := client.Database("forum").Collection("big")
	const docs = 600
	var batch []any
	for i := range docs {
		batch = append(batch, bson.D{{Key: "_id", Value: i}, {Key: "g", Value: (i * 7) % 100}, {Key: "s", Value: strings.Repeat("x", i%13)}})
	}
	if _, err := coll.InsertMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "g", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: "forum.big"}, {Key: "key", Value: bson.D{{Key: "g", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	var entry bson.Raw
	if err := client.Database("config").Collection("collections").FindOne(ctx, bson.D{{Key: "_id", Value: "forum.big"}}).Decode(&entry); err != nil {
		t.Fatal(err)
	}
	chunksColl := client.Database("config").Collection("chunks")
	var chunks []bson.Raw
	read := func() {
		cur, err := chunksColl.Find(ctx, bson.D{{Key: "uuid", Value: entry.Lookup("uuid")}}, options.Find().SetSort(bson.D{{Key: "min", Value: 1}}))
		if err != nil {
			t.Fatal(err)
		}
		chunks = nil
		if err := cur.All(ctx, &chunks); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if testkv.TiKV() {
		// The regions split behind the copy; the chunks follow within a
		// few passes of the background job.
		for deadline := time.Now().Add(30 * time.Second); len(chunks) < 3 && time.Now().Before(deadline); read() {
			time.Sleep(200 * time.Millisecond)
		}
		if len(chunks) < 3 {
			t.Fatalf("%d chunks on a split cluster", len(chunks))
		}
	} else if len(chunks) != 1 {
		t.Fatalf("%d chunks on Pebble, want 1", len(chunks))
	}
	t.Logf("%d chunks", len(chunks))
	if !sameBytes(chunks[0].Lookup("min").Document(), mustRaw(t, bson.D{{Key: "g", Value: bson.MinKey{}}})) ||
		!sameBytes(chunks[len(chunks)-1].Lookup("max").Document(), mustRaw(t, bson.D{{Key: "g", Value: bson.MaxKey{}}})) {
		t.Fatalf("chunks do not span MinKey to MaxKey: %v", chunks)
	}
	total := int64(0)
	for i, c := range chunks {
		if i > 0 && !sameBytes(c.Lookup("min").Document(), chunks[i-1].Lookup("max").Document()) {
			t.Fatalf("chunk %d starts at %v, the one before ends at %v", i, c.Lookup("min"), chunks[i-1].Lookup("max"))
		}
		rng := bson.D{}
		if lo := c.Lookup("min", "g"); lo.Type != bson.TypeMinKey {
			rng = append(rng, bson.E{Key: "$gte", Value: lo})
		}
		if hi := c.Lookup("max", "g"); hi.Type != bson.TypeMaxKey {
			rng = append(rng, bson.E{Key: "$lt", Value: hi})
		}
		filter := bson.D{}
		if len(rng) > 0 {
			filter = bson.D{{Key: "g", Value: rng}}
		}
		n, err := coll.CountDocuments(ctx, filter)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != docs {
		t.Errorf("the chunks hold %d documents, the collection %d", total, docs)
	}
	st, err := client.Database("forum").RunCommand(ctx, bson.D{{Key: "collStats", Value: "big"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Lookup("nchunks").Int32(); int(n) != len(chunks) && testkv.TiKV() {
		// the background job may have recorded a later split meanwhile
		read()
		if int(n) != len(chunks) {
			t.Errorf("collStats nchunks %d, config.chunks %d", n, len(chunks))
		}
	} else if int(n) != len(chunks) {
		t.Errorf("collStats nchunks %d, config.chunks %d", n, len(chunks))
	}
	var doc bson.Raw
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 321}}).Decode(&doc); err != nil || doc.Lookup("g").Int32() != (321*7)%100 {
		t.Fatalf("find by _id: %v %v", doc, err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "g", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lt", Value: 20}}}}); err != nil || n != 60 {
		t.Fatalf("shard key range count %d (%v), want 60", n, err)
	}
	// _id stays unique across shard key values.
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}, {Key: "g", Value: 99}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("duplicate _id under another shard key: %v", err)
	}
	// A shard key value with an array is refused; changing one needs the
	// whole key in the filter (and a retryable write: see
	// TestShardedDocumentKey).
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: -1}, {Key: "g", Value: bson.A{1, 2}}}); serverCode(err) != 61 {
		t.Errorf("array shard key: %v, want ShardKeyNotFound", err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 5}}, bson.D{{Key: "$set", Value: bson.D{{Key: "g", Value: 1000}}}}); serverCode(err) != 31025 {
		t.Errorf("changing a shard key value without it in the filter: %v, want 31025", err)
	}
	res, err := client.Database("forum").RunCommand(ctx, bson.D{{Key: "validate", Value: "big"}}).Raw()
	if err != nil || !res.Lookup("valid").Boolean() {
		t.Fatalf("validate: %v %v", res, err)
	}
}

// TestShardedDocumentKey: the change events of a sharded collection name
// their document by its shard key and _id, as MongoDB's documentKey does
// (an update by the key the document had), and updateLookup finds the
// document by it; a retryable update changing the shard key value moves
// the document.
func TestShardedDocumentKey(t *testing.T) {
	client := startStreams(t)
	ctx := t.Context()
	coll := client.Database("forum").Collection("keyed")
	if _, err := adminCmd(t, client, bson.D{{Key: "shardCollection", Value: "forum.keyed"}, {Key: "key", Value: bson.D{{Key: "d.id", Value: 1}, {Key: "slug", Value: "hashed"}}}}); err != nil {
		t.Fatal(err)
	}
	cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetFullDocument(options.UpdateLookup))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "d", Value: bson.D{{Key: "id", Value: 3}}}, {Key: "slug", Value: "a/b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 7}}, bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	keyAt := func(id int) bson.Raw {
		return mustRaw(t, bson.D{{Key: "d.id", Value: id}, {Key: "slug", Value: "a/b"}, {Key: "_id", Value: 7}})
	}
	for i, step := range []struct {
		kind string
		key  bson.Raw
	}{{"insert", keyAt(3)}, {"update", keyAt(3)}, {"update", keyAt(3)}, {"delete", keyAt(4)}} {
		ev := nextEvent(t, cs)
		if got := ev.Lookup("operationType").StringValue(); got != step.kind {
			t.Fatalf("event %s, want %s", got, step.kind)
		}
		if key := ev.Lookup("documentKey").Document(); !sameBytes(key, step.key) {
			t.Errorf("%s: documentKey %v, want %v", step.kind, key, step.key)
		}
		// (the lookup of the second update, by the key the document had
		// before it moved, finds nothing, as on a router)
		if n, ok := ev.Lookup("fullDocument", "n").Int32OK(); i == 1 && (!ok || n != 1) {
			t.Errorf("update: fullDocument %v", ev.Lookup("fullDocument"))
		}
		if ev.Lookup("updateDescription", "updatedFields", "d.id").Type != 0 || ev.Lookup("updateDescription", "updatedFields", "d").Type != 0 {
			// The shard key update, a retryable write (the driver's
			// default) whose filter pins the whole key: the document
			// moves, and the next event names it by its new key.
			if _, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 7}}); err != nil {
				t.Fatal(err)
			}
		} else if step.kind == "update" {
			if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "d.id", Value: 3}, {Key: "slug", Value: "a/b"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "d.id", Value: 4}}}}); err != nil {
				t.Fatal(err)
			}
			var moved bson.Raw
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 7}}).Decode(&moved); err != nil || moved.Lookup("d", "id").Int32() != 4 {
				t.Fatalf("after the shard key update: %v %v", moved, err)
			}
		}
	}
}
