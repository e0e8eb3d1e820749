package driver_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// snapshot maps "db.collection" to its documents in _id order.
type snapshot map[string][]bson.Raw

// takeSnapshot reads every user collection the server lists.
func takeSnapshot(t *testing.T, client *mongo.Client) snapshot {
	t.Helper()
	snap := snapshot{}
	dbs, err := client.ListDatabaseNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range dbs {
		if db == "admin" || db == "config" || db == "local" {
			continue
		}
		colls, err := client.Database(db).ListCollectionNames(t.Context(), bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range colls {
			snap[db+"."+c] = findAll(t, client.Database(db).Collection(c), bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		}
	}
	return snap
}

// TestRestartKeepsData proves an on-disk instance closed and started again
// on the same directory has every collection and document it had, renamed
// collections under their new names, and no dropped collection or database.
func TestRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: dir}

	first, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client := dial(t, first)
	db := client.Database("app")
	users := db.Collection("users")
	docs := make([]any, 300)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "name", Value: "user"}, {Key: "tags", Value: bson.A{i % 3, "t"}}}
	}
	if _, err := users.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := users.UpdateMany(t.Context(), bson.D{{Key: "tags", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "third", Value: true}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := users.DeleteMany(t.Context(), bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 250}}}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"old", "doomed"} {
		if _, err := db.Collection(name).InsertOne(t.Context(), bson.D{{Key: "_id", Value: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CreateCollection(t.Context(), "empty"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("gone").Collection("c").InsertOne(t.Context(), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("other").Collection("kept").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1.5}}); err != nil {
		t.Fatal(err)
	}
	err = client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "renameCollection", Value: "app.old"}, {Key: "to", Value: "app.renamed"}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("doomed").Drop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("gone").Drop(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := takeSnapshot(t, client)
	if err := client.Disconnect(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	second := startInstance(t, cfg)
	after := takeSnapshot(t, connect(t, second))

	wantColls := []string{"app.empty", "app.renamed", "app.users", "other.kept"}
	for _, snap := range []snapshot{before, after} {
		var names []string
		for name := range snap {
			names = append(names, name)
		}
		slices.Sort(names)
		if !slices.Equal(names, wantColls) {
			t.Fatalf("collections %v, want %v", names, wantColls)
		}
	}
	if n := len(after["app.users"]); n != 250 {
		t.Errorf("app.users holds %d documents after restart, want 250", n)
	}
	for name, want := range before {
		got := after[name]
		if !slicesEqualRaw(got, want) {
			t.Errorf("%s after restart: %d documents %v, want %d %v", name, len(got), got, len(want), want)
		}
	}
}

// TestVersionDocument: a server on a clean data directory stores the
// featureCompatibilityVersion document in admin.system.version, as
// MongoDB does, so listDatabases lists admin; a restart keeps that one
// document. The first user written adds the authSchema document
// (currentVersion 5), which mongodump and mongorestore read.
func TestVersionDocument(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	in, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if round == 1 {
			in = restart(t, in, cfg)
		}
		client := connect(t, in)
		dbs, err := client.ListDatabaseNames(t.Context(), bson.D{})
		if err != nil || !slices.Contains(dbs, "admin") {
			t.Fatalf("round %d: databases %v (%v), want admin among them", round, dbs, err)
		}
		docs := findAll(t, client.Database("admin").Collection("system.version"), bson.D{})
		want := `{"_id": "featureCompatibilityVersion","version": "7.0"}`
		if len(docs) != 1 || docs[0].String() != want {
			t.Fatalf("round %d: admin.system.version holds %v, want %s", round, docs, want)
		}
	}
	client := connect(t, in)
	for i := range 2 {
		if err := client.Database("test").RunCommand(t.Context(), bson.D{{Key: "createUser", Value: "u" + strconv.Itoa(i)}, {Key: "pwd", Value: "p"}, {Key: "roles", Value: bson.A{}}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	docs := findAll(t, client.Database("admin").Collection("system.version"), bson.D{{Key: "_id", Value: "authSchema"}})
	if want := `{"_id": "authSchema","currentVersion": {"$numberInt":"5"}}`; len(docs) != 1 || docs[0].String() != want {
		t.Fatalf("after createUser admin.system.version holds %v, want %s", docs, want)
	}
}

// TestStartupLog: each start adds a document to the capped
// local.startup_log, as mongod's logStartup does: _id the host name and the
// start's milliseconds, the host name, the start in whole seconds and as
// local ctime text, getCmdLineOpts' parsed options, the process id and
// buildInfo's reply (jstests/core/diagnostics/startup_log.js).
func TestStartupLog(t *testing.T) {
	cfg := instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir()}
	in, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if round == 1 {
			in = restart(t, in, cfg)
		}
		client := connect(t, in)
		stats := replyOf(t, client, "local", bson.D{{Key: "collStats", Value: "startup_log"}})
		capped, _ := stats.Lookup("capped").BooleanOK()
		maxSize, _ := stats.Lookup("maxSize").AsInt64OK()
		if count, _ := stats.Lookup("count").AsInt64OK(); !capped || maxSize != 10<<20 || count != int64(round+1) {
			t.Fatalf("round %d: collStats %s", round, stats)
		}
		cur, err := client.Database("local").Collection("startup_log").Find(t.Context(), bson.D{}, options.Find().SetSort(bson.D{{Key: "$natural", Value: -1}}).SetLimit(1))
		docs := cursorDocs(t, cur, err, "find", "startup_log")
		if len(docs) != 1 {
			t.Fatalf("round %d: %v", round, docs)
		}
		last := docs[0]
		if got := strings.Join(keysOf(t, last), " "); got != "_id hostname startTime startTimeLocal cmdLine pid buildinfo" {
			t.Errorf("fields %s", got)
		}
		status := replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}})
		host := last.Lookup("hostname").StringValue()
		id := last.Lookup("_id").StringValue()
		ms, err := strconv.ParseInt(strings.TrimPrefix(id, host+"-"), 10, 64)
		if err != nil || !strings.HasPrefix(status.Lookup("host").StringValue(), host) {
			t.Errorf("_id %q, hostname %q, serverStatus host %s", id, host, status.Lookup("host"))
		}
		if start := last.Lookup("startTime").Time(); start.UnixMilli() != ms/1000*1000 {
			t.Errorf("startTime %v, _id's milliseconds %d", start, ms)
		}
		if _, err := time.ParseInLocation("Mon Jan _2 15:04:05.000", last.Lookup("startTimeLocal").StringValue(), time.Local); err != nil {
			t.Errorf("startTimeLocal: %v", err)
		}
		if got, want := last.Lookup("cmdLine").Document().String(), replyOf(t, client, "admin", bson.D{{Key: "getCmdLineOpts", Value: 1}}).Lookup("parsed").Document().String(); got != want {
			t.Errorf("cmdLine %s, getCmdLineOpts %s", got, want)
		}
		if last.Lookup("pid").Int64() != status.Lookup("pid").Int64() {
			t.Errorf("pid %v, serverStatus %v", last.Lookup("pid"), status.Lookup("pid"))
		}
		info := replyOf(t, client, "admin", bson.D{{Key: "buildInfo", Value: 1}})
		elems, _ := info.Elements()
		var want bson.D
		for _, e := range elems {
			if k := e.Key(); k != "ok" && k != "$clusterTime" && k != "operationTime" {
				want = append(want, bson.E{Key: k, Value: e.Value()})
			}
		}
		if got := last.Lookup("buildinfo").Document().String(); got != mustRaw(t, want).String() {
			t.Errorf("buildinfo %s, buildInfo %s", got, mustRaw(t, want))
		}
	}
}
