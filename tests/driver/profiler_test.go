package driver_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/logfile"
)

// profileEntries reads db's system.profile in insertion order, with the
// profiler off (so that the read itself is not recorded).
func profileEntries(t *testing.T, db *mongo.Database) []bson.Raw {
	t.Helper()
	ctx := context.Background()
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	cur, err := db.Collection("system.profile").Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	for cur.Next(ctx) {
		out = append(out, append(bson.Raw(nil), cur.Current...))
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProfilerEntries: at level 2 every operation on the database is
// recorded in its system.profile (a capped collection the profiler
// creates) in MongoDB's shape: a find and its getMore with their plan,
// keys and documents examined and documents returned, each update and
// delete statement with its counts, an insert, an aggregate, a failed
// command with its error.
func TestProfilerEntries(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("prof")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}, bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	was, err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if was.Lookup("was").Int32() != 0 {
		t.Errorf("profile answered %s", was)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: 4}}); err != nil {
		t.Fatal(err)
	}
	cur, err := c.Find(ctx, bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}}}}, options.Find().SetBatchSize(1).SetComment("paged"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for cur.Next(ctx) {
		n++
	}
	if err := cur.Err(); err != nil || n != 3 {
		t.Fatalf("find returned %d documents, %v", n, err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteMany(ctx, bson.D{{Key: "b", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{{Key: "_id", Value: 1}}}}}); err != nil {
		t.Fatal(err)
	}
	badErr := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "$bogus", Value: 1}}}}).Err()
	requireCode(t, badErr, 2, "BadValue")

	// Writes to system.profile and its drop while profiling are refused.
	_, err = db.Collection("system.profile").InsertOne(ctx, bson.D{})
	if testAuth() {
		// As in MongoDB, root holds no insert privilege on system.profile.
		requireCode(t, err, 13, "Unauthorized")
	} else {
		requireCode(t, err, 73, "InvalidNamespace")
	}
	requireCode(t, db.Collection("system.profile").Drop(ctx), 20, "IllegalOperation")

	entries := profileEntries(t, db)
	byOp := map[string][]bson.Raw{}
	for _, e := range entries {
		byOp[e.Lookup("op").StringValue()] = append(byOp[e.Lookup("op").StringValue()], e)
		for _, f := range []string{"ns", "command", "millis", "ts", "client", "allUsers", "user"} {
			if _, err := e.LookupErr(f); err != nil {
				t.Errorf("entry without %s: %s", f, e)
			}
		}
		if got := e.Lookup("client").StringValue(); got != "127.0.0.1" {
			t.Errorf("client %q, want the client's address without its port", got)
		}
	}
	one := func(op string) bson.Raw {
		t.Helper()
		if len(byOp[op]) == 0 {
			t.Fatalf("no %s entry in %d entries", op, len(entries))
		}
		return byOp[op][0]
	}
	ins := one("insert")
	if ins.Lookup("ns").StringValue() != "prof.c" || ins.Lookup("ninserted").AsInt64() != 1 {
		t.Errorf("insert entry %s", ins)
	}
	q := one("query")
	if q.Lookup("command", "comment").StringValue() != "paged" || q.Lookup("nreturned").AsInt64() != 1 ||
		q.Lookup("cursorid").AsInt64() == 0 || q.Lookup("planSummary").StringValue() != "IXSCAN { a: 1 }" {
		t.Errorf("find entry %s", q)
	}
	keys, docs := q.Lookup("keysExamined").AsInt64(), q.Lookup("docsExamined").AsInt64()
	var returned int64 = q.Lookup("nreturned").AsInt64()
	exhausted := false
	for _, g := range byOp["getmore"] {
		if g.Lookup("originatingCommand", "comment").StringValue() != "paged" || g.Lookup("planSummary").StringValue() != "IXSCAN { a: 1 }" {
			t.Errorf("getMore entry %s", g)
		}
		keys += g.Lookup("keysExamined").AsInt64()
		docs += g.Lookup("docsExamined").AsInt64()
		returned += g.Lookup("nreturned").AsInt64()
		exhausted = exhausted || g.Lookup("cursorExhausted").Equal(bson.RawValue{Type: bson.TypeBoolean, Value: []byte{1}})
	}
	if keys != 3 || docs != 3 || returned != 3 || !exhausted {
		t.Errorf("find and getMores examined %d keys and %d documents, returned %d, exhausted %v; want 3, 3, 3, true", keys, docs, returned, exhausted)
	}
	u := one("update")
	if u.Lookup("command", "q", "a").AsInt64() != 2 || u.Lookup("nMatched").AsInt64() != 1 || u.Lookup("nModified").AsInt64() != 1 ||
		u.Lookup("keysExamined").AsInt64() != 1 || u.Lookup("planSummary").StringValue() != "IXSCAN { a: 1 }" {
		t.Errorf("update entry %s", u)
	}
	d := one("remove")
	if d.Lookup("ndeleted").AsInt64() != 1 || d.Lookup("docsExamined").AsInt64() != 4 || d.Lookup("planSummary").StringValue() != "COLLSCAN" {
		t.Errorf("remove entry %s", d)
	}
	var agg, failed bson.Raw
	for _, e := range byOp["command"] {
		if _, err := e.LookupErr("command", "aggregate"); err == nil {
			agg = e
		}
	}
	for _, e := range byOp["query"] {
		if v, err := e.LookupErr("errCode"); err == nil && v.AsInt64() == 2 {
			failed = e
		}
	}
	if agg == nil || agg.Lookup("nreturned").AsInt64() != 1 || agg.Lookup("planSummary").StringValue() != "IDHACK" || agg.Lookup("cursorExhausted").Boolean() != true {
		t.Errorf("aggregate entry %s", agg)
	}
	if failed == nil || failed.Lookup("ok").Double() != 0 || failed.Lookup("errName").StringValue() != "BadValue" {
		t.Errorf("failed find entry %s", failed)
	}
	// The profiler's collection is capped at MongoDB's 1 MB.
	stats, err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: "system.profile"}}).Raw()
	if err != nil || !stats.Lookup("capped").Boolean() || stats.Lookup("maxSize").AsInt64() != 1<<20 {
		t.Errorf("collStats of system.profile: %s %v", stats, err)
	}
	if err := db.Collection("system.profile").Drop(ctx); err != nil {
		t.Errorf("drop with profiling off: %v", err)
	}
}

// TestProfilerLevelOneAndFilter: at level 1 only operations of slowms or
// more are recorded; a filter replaces slowms (profile answers it, and a
// note), and "unset" removes it.
func TestProfilerLevelOneAndFilter(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("prof1")
	c := db.Collection("c")
	run := func(cmd bson.D) bson.Raw {
		t.Helper()
		r, err := db.RunCommand(ctx, cmd).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	run(bson.D{{Key: "profile", Value: 1}, {Key: "slowms", Value: 1000000}})
	if _, err := c.InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if got := len(profileEntries(t, db)); got != 0 {
		t.Errorf("level 1 with a high slowms recorded %d operations", got)
	}
	r := run(bson.D{{Key: "profile", Value: 1}, {Key: "filter", Value: bson.D{{Key: "op", Value: "query"}}}})
	if r.Lookup("note").StringValue() == "" || r.Lookup("was").Int32() != 0 || r.Lookup("slowms").Int32() != 1000000 {
		t.Errorf("profile answered %s", r)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "x", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOne(ctx, bson.D{{Key: "x", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	r = run(bson.D{{Key: "profile", Value: -1}})
	if f, err := r.LookupErr("filter", "op"); err != nil || f.StringValue() != "query" || r.Lookup("was").Int32() != 1 {
		t.Errorf("profile -1 answered %s", r)
	}
	entries := profileEntries(t, db)
	if len(entries) != 1 || entries[0].Lookup("op").StringValue() != "query" {
		t.Errorf("with filter {op: 'query'}: %v", entries)
	}
	run(bson.D{{Key: "profile", Value: 1}, {Key: "filter", Value: "unset"}, {Key: "slowms", Value: 0}})
	if _, err := c.InsertOne(ctx, bson.D{{Key: "x", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	entries = profileEntries(t, db)
	if last := entries[len(entries)-1]; last.Lookup("op").StringValue() != "insert" {
		t.Errorf("after unset with slowms 0, last entry %s", last)
	}
	run(bson.D{{Key: "profile", Value: 0}, {Key: "slowms", Value: 100}})
}

// TestStartupProfilingParametersAndLogRotate: a server started with a
// profiling level profiles every database the profile command did not
// set; its startup parameters are set; logRotate renames the log file
// aside and goes on in a new one; startup parameters Folio lacks stop the
// start.
func TestStartupProfilingParametersAndLogRotate(t *testing.T) {
	dir := t.TempDir()
	lf, err := logfile.Open(filepath.Join(dir, "folio.log"), false, logfile.Rename)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	cfg := defaultConfig()
	cfg.ProfileLevel = 2
	cfg.Parameters = bson.D{{Key: "cursorTimeoutMillis", Value: int32(4321)}}
	cfg.Logger = slog.New(slog.NewJSONHandler(lf, nil))
	cfg.RotateLog = lf.Rotate
	client := connect(t, startInstance(t, cfg))
	ctx := context.Background()
	if _, err := client.Database("x").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("y").RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("y").Collection("c").InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	if n := len(profileEntries(t, client.Database("y"))); n != 0 {
		t.Errorf("database y, set to level 0, has %d profile entries", n)
	}
	if es := profileEntries(t, client.Database("x")); len(es) == 0 || es[0].Lookup("op").StringValue() != "insert" {
		t.Errorf("database x at the default level 2: %v", es)
	}
	admin := client.Database("admin")
	raw, err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 1}}).Raw()
	if err != nil || raw.Lookup("cursorTimeoutMillis").AsInt64() != 4321 {
		t.Errorf("cursorTimeoutMillis from the startup parameters: %s %v", raw, err)
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "logRotate", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "logRotate", Value: "server"}}).Err(); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 3 {
		t.Errorf("after two rotations the log directory holds %d files, %v", len(ents), err)
	}
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "logRotate", Value: "audit"}}).Err(), 238, "NotImplemented")
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "logRotate", Value: "nosuch"}}).Err(), 4, "NoSuchKey")

	bad := defaultConfig()
	bad.Parameters = bson.D{{Key: "noSuchParameter", Value: 1}}
	if in, err := instance.Start(bad); err == nil {
		_ = in.Close(ctx)
		t.Error("started with an unknown startup parameter")
	}
}

// TestProfilerFindAndModifyAndFailedInsert: a findAndModify's entry holds
// its counts, ndeleted of a remove, else nMatched, nModified and nUpserted,
// and an insert failing as a whole (a write conflict in a transaction)
// shows ninserted: 0, as MongoDB's profiler
// (jstests/core/txns/transactions_profiling.js).
func TestProfilerFindAndModifyAndFailedInsert(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database("proffam")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}
	if err := c.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, set).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, set).Err(); err != nil { // no change
		t.Fatal(err)
	}
	if err := c.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 3}}, set, options.FindOneAndUpdate().SetUpsert(true)).Err(); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatal(err)
	}
	if err := c.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	err = mongo.WithSession(ctx, sess, func(sc context.Context) error {
		if err := sess.StartTransaction(); err != nil {
			return err
		}
		if err := c.FindOne(sc, bson.D{{Key: "_id", Value: 1}}).Err(); err != nil {
			return err
		}
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "conflict"}}); err != nil {
			return err
		}
		_, err := c.InsertOne(sc, bson.D{{Key: "_id", Value: "conflict"}})
		requireCode(t, err, 112, "WriteConflict")
		return sess.AbortTransaction(sc)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range profileEntries(t, db) {
		if _, err := e.LookupErr("command", "findAndModify"); err == nil {
			s := ""
			for _, f := range []string{"nMatched", "nModified", "nUpserted", "ndeleted"} {
				if v, err := e.LookupErr(f); err == nil {
					s += f + ":" + strconv.FormatInt(v.AsInt64(), 10) + " "
				}
			}
			got = append(got, s)
		}
		if v, err := e.LookupErr("errCode"); err == nil && v.AsInt64() == 112 && e.Lookup("op").StringValue() == "insert" {
			if n, err := e.LookupErr("ninserted"); err != nil || n.AsInt64() != 0 {
				t.Errorf("failed insert entry without ninserted: 0: %s", e)
			}
			got = append(got, "failed insert")
		}
	}
	want := []string{"nMatched:1 nModified:1 nUpserted:0 ", "nMatched:1 nModified:0 nUpserted:0 ", "nMatched:0 nModified:0 nUpserted:1 ", "ndeleted:1 ", "failed insert"}
	if !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}

// TestProfilerIDWritesExamined: a find, an update or a delete naming one
// _id examines its document, and the _id index key that finds it, when it
// is there, and neither when it is not, as MongoDB's IDHACK (and IXSCAN of
// the _id index) count them: keysExamined and docsExamined 1 and 0
// (profile_update.js upserts by _id: docsExamined 0); a clustered
// collection has no _id index key to examine.
func TestProfilerIDWritesExamined(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("profid")
	c := db.Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	clustered := db.Collection("cl")
	if err := db.CreateCollection(ctx, "cl", options.CreateCollection().SetClusteredIndex(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}})); err != nil {
		t.Fatal(err)
	}
	if _, err := clustered.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "b", Value: 1}}}}
	for _, stmt := range []struct {
		filter bson.D
		upsert bool
	}{
		{bson.D{{Key: "_id", Value: 1}}, false},
		{bson.D{{Key: "_id", Value: 2}}, false},
		{bson.D{{Key: "_id", Value: 3}}, true},
		{bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: 4}}, true},
		{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 5}}, false},
	} {
		if _, err := c.UpdateOne(ctx, stmt.filter, inc, options.UpdateOne().SetUpsert(stmt.upsert)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []int{1, 2} {
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Err(); err != nil && err != mongo.ErrNoDocuments {
			t.Fatal(err)
		}
		if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := clustered.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, inc); err != nil {
		t.Fatal(err)
	}
	if err := clustered.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range profileEntries(t, db) {
		if op := e.Lookup("op").StringValue(); op == "update" || op == "remove" || op == "query" {
			got = append(got, fmt.Sprintf("%s %s keys %d docs %d", e.Lookup("ns").StringValue(), op, e.Lookup("keysExamined").AsInt64(), e.Lookup("docsExamined").AsInt64()))
		}
	}
	want := []string{
		// found, absent, upserted, upserted, found but not matching
		"profid.c update keys 1 docs 1", "profid.c update keys 0 docs 0", "profid.c update keys 0 docs 0", "profid.c update keys 0 docs 0", "profid.c update keys 1 docs 1",
		// found and deleted, absent
		"profid.c query keys 1 docs 1", "profid.c remove keys 1 docs 1", "profid.c query keys 0 docs 0", "profid.c remove keys 0 docs 0",
		"profid.cl update keys 0 docs 1", "profid.cl query keys 0 docs 1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries\n%q\nwant\n%q", got, want)
	}
}

// TestProfilerCountScanKeysExamined: a count whose keys decide its filter
// as one range (COUNT_SCAN) examines each key in the range and the read
// that finds none past it, as MongoDB's CountScan::doWork counts it: a
// count of 5 examines 6 keys (profile_count.js, "Count with indexed
// query"); a count stopped by its limit examines no further key. The
// explain's totalKeysExamined counts the same.
func TestProfilerCountScanKeysExamined(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("profcount")
	c := db.Collection("test")
	docs := make([]any, 10)
	for i := range docs {
		docs[i] = bson.D{{Key: "a", Value: i}}
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	gte5 := bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 5}}}}
	for _, cmd := range []bson.D{
		{{Key: "count", Value: "test"}, {Key: "query", Value: gte5}},
		{{Key: "count", Value: "test"}, {Key: "query", Value: gte5}, {Key: "limit", Value: 2}},
	} {
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, e := range profileEntries(t, db) {
		if e.Lookup("command", "count").Type != 0 {
			got = append(got, fmt.Sprintf("%s keys %d", e.Lookup("planSummary").StringValue(), e.Lookup("keysExamined").AsInt64()))
		}
	}
	if want := []string{"COUNT_SCAN { a: 1 } keys 6", "COUNT_SCAN { a: 1 } keys 2"}; !slices.Equal(got, want) {
		t.Errorf("count entries %q, want %q", got, want)
	}
	out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "count", Value: "test"}, {Key: "query", Value: gte5}}},
		{Key: "verbosity", Value: "executionStats"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if n := out.Lookup("executionStats", "totalKeysExamined"); n.AsInt64() != 6 {
		t.Errorf("explain's totalKeysExamined %v, want 6", n)
	}
}

// TestProfilerUpdateStatementCommand: an update statement's entry shows it
// as MongoDB re-serializes its parsed statement: fields in write_ops.idl's
// order, multi and upsert always there, an index name hint as {$hint:
// name} and an empty hint left out (profile_update.js: {q, u, multi:
// false, upsert: true}).
func TestProfilerUpdateStatementCommand(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("profupd")
	c := db.Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{0}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	inc := bson.D{{Key: "$inc", Value: bson.D{{Key: "b", Value: 1}}}}
	stmts := bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: "new"}, {Key: "a", Value: 4}}}, {Key: "u", Value: inc}, {Key: "upsert", Value: true}},
		bson.D{{Key: "collation", Value: bson.D{{Key: "locale", Value: "fr"}}}, {Key: "hint", Value: "a_1"}, {Key: "multi", Value: true},
			{Key: "arrayFilters", Value: bson.A{bson.D{{Key: "i", Value: 0}}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a.$[i]", Value: 1}}}}}, {Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}},
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: "$$v"}}}}}},
			{Key: "hint", Value: bson.D{}}, {Key: "c", Value: bson.D{{Key: "v", Value: 2}}}},
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: stmts}}).Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range profileEntries(t, db) {
		if e.Lookup("op").StringValue() == "update" {
			got = append(got, e.Lookup("command").String())
		}
	}
	want := []string{
		`{"q": {"_id": "new","a": {"$numberInt":"4"}},"u": {"$inc": {"b": {"$numberInt":"1"}}},"multi": false,"upsert": true}`,
		`{"q": {"_id": {"$numberInt":"1"}},"u": {"$set": {"a.$[i]": {"$numberInt":"1"}}},"arrayFilters": [{"i": {"$numberInt":"0"}}],"hint": {"$hint": "a_1"},"multi": true,"upsert": false,"collation": {"locale": "fr"}}`,
		`{"q": {"_id": {"$numberInt":"1"}},"u": [{"$set": {"x": "$$v"}}],"c": {"v": {"$numberInt":"2"}},"multi": false,"upsert": false}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("update entries' commands\n%q\nwant\n%q", got, want)
	}
}

// TestProfilerKeysInsertedDeleted: update and delete statements,
// findAndModify and inserts show the index keys their writes added and
// removed, as MongoDB's OpDebug does: a new or removed document's _id
// index key counts, a remove shows keysDeleted only, and a statement or
// insert that changed nothing shows neither (profile_update.js,
// profile_findandmodify.js, profile_insert.js).
func TestProfilerKeysInsertedDeleted(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("profkeys")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	set := func(f string, v any) bson.D { return bson.D{{Key: "$set", Value: bson.D{{Key: f, Value: v}}}} }
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, set("a", 10)); err != nil { // a's key moves
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, set("b", 1)); err != nil { // no key changes
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, set("b", 1)); err != nil { // no change
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 3}}, set("a", bson.A{1, 2}), options.UpdateOne().SetUpsert(true)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 2}}, set("a", 20)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	// a document without a still has a's (null) key
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 4}, {Key: "a", Value: 4}}, bson.D{{Key: "_id", Value: 5}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("insert of a taken _id: %v", err)
	}
	var got []string
	for _, e := range profileEntries(t, db) {
		op := e.Lookup("op").StringValue()
		if _, err := e.LookupErr("command", "findAndModify"); op != "update" && op != "remove" && op != "insert" && err != nil {
			continue
		}
		s := op
		for _, f := range []string{"keysInserted", "keysDeleted"} {
			if v, err := e.LookupErr(f); err == nil {
				s += " " + f + ":" + strconv.FormatInt(v.AsInt64(), 10)
			}
		}
		got = append(got, s)
	}
	want := []string{
		"update keysInserted:1 keysDeleted:1",
		"update keysInserted:0 keysDeleted:0",
		"update",
		"update keysInserted:3",
		"remove keysDeleted:3",
		"command keysInserted:1 keysDeleted:1",
		"command keysDeleted:2",
		"insert keysInserted:4",
		"insert",
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}

// TestProfilerAppNameAndTruncatedCommand: an entry names the client's
// application (its handshake's client.application.name) between client
// and allUsers, and none for a client that gave no name, as MongoDB's
// introspect.cpp profile() does; a command past 50 KB is shown as
// {$truncated: <its text, ending in "...">, comment: <its comment>}, as
// appendAsObjOrString abbreviates it (profile_find.js).
func TestProfilerAppNameAndTruncatedCommand(t *testing.T) {
	_, in := startServer(t)
	ctx := context.Background()
	named := connect(t, in, options.Client().SetAppName("prof app"))
	db := named.Database("profapp")
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	big := bson.D{}
	for i := range 501 {
		big = append(big, bson.E{Key: strconv.Itoa(i), Value: string(make([]byte, 150))})
	}
	if err := db.Collection("c").FindOne(ctx, big, options.FindOne().SetComment("profile_find")).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatal(err)
	}
	if err := connect(t, in).Database("profapp").Collection("c").FindOne(ctx, bson.D{{Key: "x", Value: 1}}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatal(err)
	}
	var queries []bson.Raw
	for _, e := range profileEntries(t, db) {
		if e.Lookup("op").StringValue() == "query" {
			queries = append(queries, e)
		}
	}
	if len(queries) != 2 {
		t.Fatalf("%d query entries, want 2", len(queries))
	}
	keys := func(e bson.Raw) []string {
		elems, _ := e.Elements()
		var k []string
		for _, el := range elems {
			k = append(k, el.Key())
		}
		return k
	}
	long, short := queries[0], queries[1]
	if k := keys(long); !slices.Equal(k[len(k)-5:], []string{"ts", "client", "appName", "allUsers", "user"}) || long.Lookup("appName").StringValue() != "prof app" {
		t.Errorf("entry of a named client: %v, appName %s", k, long.Lookup("appName"))
	}
	if _, err := short.LookupErr("appName"); err == nil {
		t.Errorf("entry of a client without an application name: %s", short)
	}
	cmd := long.Lookup("command").Document()
	text, ok := cmd.Lookup("$truncated").StringValueOK()
	if k := keys(cmd); !ok || !slices.Equal(k, []string{"$truncated", "comment"}) || len(text) != 50<<10 || text[len(text)-3:] != "..." ||
		cmd.Lookup("comment").StringValue() != "profile_find" {
		t.Errorf("truncated command %v, %d bytes of text", keys(cmd), len(text))
	}
}

// TestProfilerPlanChoice: an entry tells how its plan was chosen and run,
// each field only when true and right after docsExamined, as MongoDB's
// OpDebug::append shows its PlanSummaryStats (profile_find.js): a trial
// among candidate plans (fromMultiPlanner), the plan cache's active entry
// (fromPlanCache, on the third run of a shape), a cached plan that fell
// short and was replaced by a new trial (replanned, replanReason, with
// fromMultiPlanner), an in-memory sort (hasSortStage).
func TestProfilerPlanChoice(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("profplan")
	c := db.Collection("c")
	index := func(keys ...string) {
		t.Helper()
		for _, k := range keys {
			if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: k, Value: 1}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	var latest bson.Raw
	find := func(filter, sort bson.D) bson.Raw {
		t.Helper()
		opts := options.FindOne()
		if sort != nil {
			opts.SetSort(sort)
		}
		if err := c.FindOne(ctx, filter, opts).Err(); err != nil {
			t.Fatal(err)
		}
		entries := profileEntries(t, db)
		if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
			t.Fatal(err)
		}
		latest = entries[len(entries)-1]
		return latest
	}
	// the fields after docsExamined, up to the next one always there
	planFields := func(e bson.Raw) []string {
		elems, _ := e.Elements()
		var k []string
		after := false
		for _, el := range elems {
			switch key := el.Key(); {
			case key == "docsExamined":
				after = true
			case key == "cursorExhausted" || key == "nreturned":
				return k
			case after:
				k = append(k, key)
			}
		}
		return k
	}
	want := func(e bson.Raw, fields ...string) {
		t.Helper()
		if got := planFields(e); !slices.Equal(got, fields) {
			t.Errorf("fields after docsExamined %v, want %v: %s", got, fields, e)
		}
	}
	index("a")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "a", Value: i}, {Key: "b", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	want(find(bson.D{}, nil))
	ab := bson.D{{Key: "a", Value: 3}, {Key: "b", Value: 3}}
	want(find(ab, nil), "fromMultiPlanner")
	if ps := latest.Lookup("planSummary").StringValue(); ps != "IXSCAN { a: 1, b: 1 }" {
		t.Errorf("planSummary %q", ps)
	}
	want(find(ab, nil), "fromMultiPlanner") // the entry is made active
	want(find(ab, nil), "fromPlanCache")
	// {a: 1} and {a: 1, b: 1} are both candidates
	want(find(bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}}}}, bson.D{{Key: "b", Value: 1}}), "hasSortStage", "fromMultiPlanner")
	want(find(bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 0}}}}, bson.D{{Key: "a", Value: 1}}), "fromMultiPlanner")
	want(find(bson.D{{Key: "b", Value: 1}}, bson.D{{Key: "b", Value: -1}}), "hasSortStage")

	if err := c.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	index("a", "b")
	for i := range 20 {
		if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "a", Value: 5}, {Key: "b", Value: i}}, bson.D{{Key: "a", Value: i}, {Key: "b", Value: 10}}}); err != nil {
			t.Fatal(err)
		}
	}
	find(bson.D{{Key: "a", Value: 5}, {Key: "b", Value: 15}}, nil)
	find(bson.D{{Key: "a", Value: 5}, {Key: "b", Value: 15}}, nil)
	want(find(bson.D{{Key: "a", Value: 15}, {Key: "b", Value: 10}}, nil), "fromMultiPlanner", "replanned", "replanReason")
	reason := regexp.MustCompile(`^cached plan was less efficient than expected: expected trial execution to take [0-9]+ works but it took at least [0-9]+ works$`)
	if r := latest.Lookup("replanReason").StringValue(); !reason.MatchString(r) {
		t.Errorf("replanReason %q", r)
	}
}

// TestProfilerGetMoreCursorID: a getMore's entry names the cursor it asked
// for also when it exhausted the cursor (cursorExhausted) or failed, as
// MongoDB's getMore records its request's cursorid before it runs
// (profile_getmore.js: "cursorid should always be present on getMore");
// a find's entry names its cursor only when it left it open.
func TestProfilerGetMoreCursorID(t *testing.T) {
	client, _ := startServer(t)
	ctx := sessionCtx(t, client)
	db := client.Database("profgetmore")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "a", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	find, err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	id := find.Lookup("cursor", "id").Int64()
	if err := db.RunCommand(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}}).Err(); err != nil {
		t.Fatal(err)
	}
	err = db.RunCommand(ctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}}).Err()
	requireCode(t, err, 43, "CursorNotFound")
	var getMores []bson.Raw
	for _, e := range profileEntries(t, db) {
		switch e.Lookup("op").StringValue() {
		case "query":
			if got, ok := e.Lookup("cursorid").AsInt64OK(); !ok || got != id {
				t.Errorf("find entry's cursorid %d, want %d: %s", got, id, e)
			}
		case "getmore":
			getMores = append(getMores, e)
		}
	}
	if len(getMores) != 2 {
		t.Fatalf("%d getMore entries, want 2", len(getMores))
	}
	for i, e := range getMores {
		if got, ok := e.Lookup("cursorid").AsInt64OK(); !ok || got != id {
			t.Errorf("getMore %d's cursorid %d, want %d: %s", i, got, id, e)
		}
	}
	if !getMores[0].Lookup("cursorExhausted").Boolean() || getMores[1].Lookup("errCode").AsInt64() != 43 {
		t.Errorf("getMore entries %s, %s", getMores[0], getMores[1])
	}
}

// TestProfilerFailedStatementCounts: an update or delete statement that
// fails shows no counts (nMatched, nModified, nUpserted, ndeleted), as
// MongoDB records them only once the statement's executor has finished
// (profile_delete.js: a delete past its maxTimeMS has no ndeleted); one
// that succeeds shows them, zeros included.
func TestProfilerFailedStatementCounts(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("proffailed")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "u", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "u", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: 2}}}})
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("update: %v, want a duplicate key error", err)
	}
	divide := bson.D{{Key: "$expr", Value: bson.D{{Key: "$divide", Value: bson.A{1, 0}}}}}
	if _, err := c.DeleteMany(ctx, divide); err == nil {
		t.Fatal("a delete dividing by zero succeeded")
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	var writes []bson.Raw
	for _, e := range profileEntries(t, db) {
		if op := e.Lookup("op").StringValue(); op == "update" || op == "remove" {
			writes = append(writes, e)
		}
	}
	if len(writes) != 3 {
		t.Fatalf("%d update and remove entries, want 3", len(writes))
	}
	for _, e := range writes[:2] {
		for _, f := range []string{"nMatched", "nModified", "nUpserted", "ndeleted"} {
			if _, err := e.LookupErr(f); err == nil {
				t.Errorf("failed statement's entry has %s: %s", f, e)
			}
		}
		if _, err := e.LookupErr("errCode"); err != nil {
			t.Errorf("failed statement's entry without its error: %s", e)
		}
	}
	if n, ok := writes[2].Lookup("ndeleted").AsInt64OK(); !ok || n != 0 {
		t.Errorf("delete of nothing: %s", writes[2])
	}
}

// TestProfilerUncappedProfileCollection: profile at level 1 or 2 needs
// the database's system.profile capped: an uncapped one fails the command
// with NamespaceExists, "<db>.system.profile exists but isn't capped",
// and the level, slowms and sampleRate stay as they were, as MongoDB's
// createProfileCollection refuses it (profile1.js); without one, the
// command makes it, capped at 1 MB.
func TestProfilerUncappedProfileCollection(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("profuncapped")
	if err := db.CreateCollection(ctx, "system.profile"); err != nil {
		t.Fatal(err)
	}
	for _, level := range []int{1, 2} {
		err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: level}, {Key: "slowms", Value: 7}, {Key: "sampleRate", Value: 0.5}}).Err()
		requireCode(t, err, 48, "NamespaceExists")
		if ce, ok := errors.AsType[mongo.CommandError](err); !ok || ce.Message != "profuncapped.system.profile exists but isn't capped" {
			t.Errorf("profile %d: %v", level, err)
		}
	}
	got, err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: -1}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if got.Lookup("was").Int32() != 0 || got.Lookup("slowms").Int32() != 100 || got.Lookup("sampleRate").Double() != 1 {
		t.Errorf("settings after the failed profile commands: %s", got)
	}
	// level 0 needs no collection
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("system.profile").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	other := client.Database("profmade")
	if err := other.RunCommand(ctx, bson.D{{Key: "profile", Value: 1}, {Key: "slowms", Value: 100}}).Err(); err != nil {
		t.Fatal(err)
	}
	specs, err := other.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "system.profile"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || !specs[0].Options.Lookup("capped").Boolean() || specs[0].Options.Lookup("size").AsInt64() != 1<<20 {
		t.Errorf("system.profile after profile 1: %v", specs)
	}
	if err := other.RunCommand(ctx, bson.D{{Key: "profile", Value: 0}}).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestProfilerQueryHashes: an entry shows the queryHash and planCacheKey
// of its operation's first query, after nreturned, the values explain
// shows, as MongoDB's OpDebug records them (get_executor.cpp,
// PrepareExecutionHelper::prepare; profile_query_hash.js): a queryHash for
// any query planned on an existing collection, a failed one included; a
// planCacheKey only when the plan cache takes the query (not one on every
// document unsorted, nor hinted, nor tailable) and no IDHACK serves it. A
// getMore shows its cursor's (profile_getmore.js). None for a missing
// collection, a count of every document (the record store's count) or a
// write by _id, which MongoDB serves without a canonical query; an update
// writing through the positional $ has one.
func TestProfilerQueryHashes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("profhash")
	c := db.Collection("c")
	docs := []any{}
	for i := range 5 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}, {Key: "arr", Value: bson.A{1, 2}}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, k := range []bson.D{{{Key: "a", Value: 1}}, {{Key: "a", Value: 1}, {Key: "b", Value: 1}}} {
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: k}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CreateCollection(ctx, "capped", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
		t.Fatal(err)
	}
	run := func(cmd bson.D) {
		t.Helper()
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	explained := func(cmd bson.D) (queryHash, planCacheKey string) {
		t.Helper()
		ex, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		qp := ex.Lookup("queryPlanner")
		qh, _ := qp.Document().Lookup("queryHash").StringValueOK()
		key, _ := qp.Document().Lookup("planCacheKey").StringValueOK()
		return qh, key
	}
	update := func(comment string, stmt bson.D) bson.D {
		return bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{stmt}}, {Key: "comment", Value: comment}}
	}
	findA := bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 1}}}}}, {Key: "sort", Value: bson.D{{Key: "a", Value: -1}}}, {Key: "batchSize", Value: 2}}
	find, err := db.RunCommand(ctx, append(findA, bson.E{Key: "comment", Value: "paged"})).Raw()
	if err != nil {
		t.Fatal(err)
	}
	run(bson.D{{Key: "getMore", Value: find.Lookup("cursor", "id").Int64()}, {Key: "collection", Value: "c"}})
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 3}}}, {Key: "comment", Value: "byID"}})
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{}}, {Key: "comment", Value: "all"}})
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{}}, {Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "comment", Value: "allSorted"}})
	run(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "hint", Value: "a_1"}, {Key: "comment", Value: "hinted"}})
	err = db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "hint", Value: "nope"}, {Key: "comment", Value: "badHint"}}).Err()
	requireCode(t, err, 2, "BadValue")
	run(bson.D{{Key: "find", Value: "capped"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "tailable", Value: true}, {Key: "comment", Value: "tailable"}})
	run(bson.D{{Key: "find", Value: "missing"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "comment", Value: "missing"}})
	run(bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "comment", Value: "countAll"}})
	run(bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{{Key: "a", Value: 2}}}, {Key: "comment", Value: "countA"}})
	run(update("updateByID", bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}}))
	run(update("updateArr", bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}, {Key: "arr", Value: 2}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "arr.$", Value: 7}}}}}}))
	// with no array in its query to match, the positional $ fails
	err = db.RunCommand(ctx, update("updateByIDPositional", bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 2}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "arr.$", Value: 7}}}}}})).Err()
	requireCode(t, err, 2, "BadValue")
	updateA := bson.D{{Key: "q", Value: bson.D{{Key: "a", Value: 2}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 2}}}}}}
	run(update("updateA", updateA))
	run(bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 4}}}, {Key: "limit", Value: 1}}}}, {Key: "comment", Value: "deleteByID"}})

	// a statement's entry is named by its command's comment, in order
	statements := map[string][]string{"update": {"updateByID", "updateArr", "updateByIDPositional", "updateA"}, "remove": {"deleteByID"}}
	entries := map[string][]bson.Raw{}
	for _, e := range profileEntries(t, db) {
		op := e.Lookup("op").StringValue()
		comment, ok := e.Lookup("command", "comment").StringValueOK()
		switch {
		case len(statements[op]) > 0:
			comment, statements[op] = statements[op][0], statements[op][1:]
		case !ok:
			comment, _ = e.Lookup("originatingCommand", "comment").StringValueOK()
			comment += "/" + op
		}
		entries[comment] = append(entries[comment], e)
	}
	hashes := func(comment string) (queryHash, planCacheKey string) {
		t.Helper()
		if len(entries[comment]) == 0 {
			t.Fatalf("no entry for %q in %v", comment, entries)
		}
		e := entries[comment][len(entries[comment])-1]
		qh, _ := e.Lookup("queryHash").StringValueOK()
		key, _ := e.Lookup("planCacheKey").StringValueOK()
		return qh, key
	}
	hex := regexp.MustCompile(`^[0-9A-F]{8}$`)
	for _, tc := range []struct {
		comment   string
		wantHash  bool
		wantKey   bool
		explainOf bson.D // the command whose explain shows the same values
	}{
		{"paged", true, true, findA},
		{"paged/getmore", true, true, findA},
		{"byID", true, false, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 3}}}}},
		{"all", true, false, nil},
		{"allSorted", true, true, nil},
		{"hinted", true, false, nil},
		{"badHint", true, false, nil},
		{"tailable", true, false, nil},
		{"missing", false, false, nil},
		{"countAll", false, false, nil},
		{"countA", true, true, nil},
		{"updateByID", false, false, nil},
		{"updateArr", true, true, nil},
		{"updateByIDPositional", true, false, nil},
		{"updateA", true, true, update("", updateA)[:2]},
		{"deleteByID", false, false, nil},
	} {
		qh, key := hashes(tc.comment)
		if (qh != "") != tc.wantHash || (key != "") != tc.wantKey {
			t.Errorf("%s: queryHash %q, planCacheKey %q; want them shown: %v, %v", tc.comment, qh, key, tc.wantHash, tc.wantKey)
			continue
		}
		for _, h := range []string{qh, key} {
			if h != "" && !hex.MatchString(h) {
				t.Errorf("%s: hash %q is not 8 upper-case hex digits", tc.comment, h)
			}
		}
		if tc.explainOf != nil {
			eqh, ekey := explained(tc.explainOf)
			if eqh != qh || tc.wantKey && ekey != key {
				t.Errorf("%s: queryHash %q, planCacheKey %q; explain shows %q, %q", tc.comment, qh, key, eqh, ekey)
			}
		}
	}
	// after nreturned, before an error's ok
	order := func(e bson.Raw) []string {
		elems, _ := e.Elements()
		var keys []string
		for _, el := range elems {
			keys = append(keys, el.Key())
		}
		return keys
	}
	paged := order(entries["paged"][0])
	if i := slices.Index(paged, "queryHash"); i < 1 || paged[i-1] != "nreturned" || paged[i+1] != "planCacheKey" || paged[i+2] != "responseLength" {
		t.Errorf("find entry's fields %v", paged)
	}
	bad := order(entries["badHint"][0])
	if i := slices.Index(bad, "queryHash"); i < 0 || bad[i+1] != "ok" {
		t.Errorf("failed find entry's fields %v", bad)
	}
	// An explain on a missing collection shows neither (generatePlannerInfo).
	if qh, key := explained(bson.D{{Key: "find", Value: "missing"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}}); qh != "" || key != "" {
		t.Errorf("explain on a missing collection shows queryHash %q, planCacheKey %q", qh, key)
	}
}
