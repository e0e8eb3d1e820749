package driver_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestServerStatusSections: a section named with a false value is left
// out ({repl: 0}), one named with a true value stays, the header fields
// always come.
// https://www.mongodb.com/docs/v7.0/reference/command/serverStatus/#include-or-exclude-sections
func TestServerStatusSections(t *testing.T) {
	client := startReplSet(t)
	for _, tc := range []struct {
		name    string
		cmd     bson.D
		absent  []string
		present []string
	}{
		{"default", bson.D{{Key: "serverStatus", Value: 1}}, nil, []string{"host", "uptime", "repl", "metrics", "opcounters", "connections"}},
		{"repl and metrics off", bson.D{{Key: "serverStatus", Value: 1}, {Key: "repl", Value: 0}, {Key: "metrics", Value: 0}},
			[]string{"repl", "metrics"}, []string{"host", "localTime", "opcounters", "connections"}},
		{"false and null", bson.D{{Key: "serverStatus", Value: 1}, {Key: "opcounters", Value: false}, {Key: "network", Value: nil}},
			[]string{"opcounters", "network"}, []string{"metrics", "repl"}},
		{"named on", bson.D{{Key: "serverStatus", Value: 1}, {Key: "repl", Value: 1}, {Key: "mem", Value: bson.D{}}}, nil, []string{"repl", "mem"}},
		{"header not a section", bson.D{{Key: "serverStatus", Value: 1}, {Key: "host", Value: 0}}, nil, []string{"host"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply := replyOf(t, client, "admin", tc.cmd)
			for _, k := range tc.absent {
				if _, err := reply.LookupErr(k); err == nil {
					t.Errorf("%s present", k)
				}
			}
			for _, k := range tc.present {
				if _, err := reply.LookupErr(k); err != nil {
					t.Errorf("%s absent", k)
				}
			}
		})
	}
}

// TestPrettyHostName: serverStatus's host, hostInfo's system.hostname and
// dbHash's host are MongoDB's prettyHostName, the machine's host name with
// the port after it when the server is not on 27017 (the test server's
// port is random).
func TestPrettyHostName(t *testing.T) {
	client, in := startServer(t)
	hostname, _ := os.Hostname()
	_, port, _ := net.SplitHostPort(in.Addr())
	want := hostname + ":" + port
	if got := replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}).Lookup("host").StringValue(); got != want {
		t.Errorf("serverStatus host %q, want %q", got, want)
	}
	if got := replyOf(t, client, "admin", bson.D{{Key: "hostInfo", Value: 1}}).Lookup("system", "hostname").StringValue(); got != want {
		t.Errorf("hostInfo system.hostname %q, want %q", got, want)
	}
	if got := replyOf(t, client, "test", bson.D{{Key: "dbHash", Value: 1}}).Lookup("host").StringValue(); got != want {
		t.Errorf("dbHash host %q, want %q", got, want)
	}
}

// TestServerStatusDocumentMetrics: metrics.document counts the documents
// returned by queries, inserted, matched by updates and deleted, and
// metrics.cursor.open counts the open cursors exempt from the idle timeout
// and those pinned by a running getMore.
// https://www.mongodb.com/docs/v7.0/reference/command/serverStatus/#metrics
func TestServerStatusDocumentMetrics(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("docm")
	status := func() bson.Raw { return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}) }
	num := func(doc bson.Raw, path ...string) int64 { return doc.Lookup(path...).AsInt64() }
	before := status()
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}, bson.D{{Key: "x", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateMany(ctx, bson.D{{Key: "x", Value: bson.D{{Key: "$gte", Value: 2}}}}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "x", Value: 9}}, bson.D{{Key: "$set", Value: bson.D{{Key: "y", Value: 1}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOneAndDelete(ctx, bson.D{{Key: "x", Value: 9}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.DeleteOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	// x 2 and 3 remain: the find returns 2.
	docs := findAll(t, coll, bson.D{})
	after := status()
	for _, tc := range []struct {
		field string
		want  int64
	}{
		{"inserted", 4}, {"updated", 2}, {"deleted", 2}, {"returned", int64(len(docs))},
	} {
		if d := num(after, "metrics", "document", tc.field) - num(before, "metrics", "document", tc.field); d != tc.want {
			t.Errorf("metrics.document.%s grew by %d, want %d", tc.field, d, tc.want)
		}
	}

	// noTimeout: a cursor opened with noCursorTimeout.
	reply := replyOf(t, client, testDB, bson.D{{Key: "find", Value: "docm"}, {Key: "batchSize", Value: 1}, {Key: "noCursorTimeout", Value: true}})
	id := reply.Lookup("cursor", "id").Int64()
	if got := num(status(), "metrics", "cursor", "open", "noTimeout"); got != 1 {
		t.Errorf("metrics.cursor.open.noTimeout %d, want 1", got)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "killCursors", Value: "docm"}, {Key: "cursors", Value: bson.A{id}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := num(status(), "metrics", "cursor", "open", "noTimeout"); got != 0 {
		t.Errorf("metrics.cursor.open.noTimeout %d after killCursors, want 0", got)
	}

	// pinned: a tailable awaitData cursor whose getMore waits for documents.
	if err := db.CreateCollection(ctx, "docmcap", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("docmcap").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	// One session for the find and its getMore.
	sctx := sessionCtx(t, client)
	raw, err := db.RunCommand(sctx, bson.D{{Key: "find", Value: "docmcap"}, {Key: "tailable", Value: true}, {Key: "awaitData", Value: true}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	id = raw.Lookup("cursor", "id").Int64()
	done := make(chan error, 1)
	go func() {
		done <- db.RunCommand(sctx, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "docmcap"}, {Key: "maxTimeMS", Value: 2000}}).Err()
	}()
	pinned := int64(0)
	for deadline := time.Now().Add(2 * time.Second); pinned == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pinned = num(status(), "metrics", "cursor", "open", "pinned")
	}
	if pinned != 1 {
		t.Errorf("metrics.cursor.open.pinned %d while a getMore waits, want 1", pinned)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := num(status(), "metrics", "cursor", "open", "pinned"); got != 0 {
		t.Errorf("metrics.cursor.open.pinned %d after the getMore, want 0", got)
	}
}

// TestServerStatusCursorCounters: metrics.cursor counts the cursors
// opened (totalOpened), those closed after more than one batch
// (moreThanOneBatch) and those closed by lifespan, its fields in name
// order, as MongoDB's ClientCursor counters.
func TestServerStatusCursorCounters(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	numbered(t, client, "curm", 5)
	status := func() bson.Raw { return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}) }
	num := func(doc bson.Raw, path ...string) int64 {
		return doc.Lookup(append([]string{"metrics", "cursor"}, path...)...).AsInt64()
	}
	before := status()
	open := func() int64 {
		reply, err := runRaw(t, db, bson.D{{Key: "find", Value: "curm"}, {Key: "batchSize", Value: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return reply.Lookup("cursor", "id").Int64()
	}
	kill := func(id int64) {
		if _, err := runRaw(t, db, bson.D{{Key: "killCursors", Value: "curm"}, {Key: "cursors", Value: bson.A{id}}}); err != nil {
			t.Fatal(err)
		}
	}
	paged := open()
	if _, err := runRaw(t, db, bson.D{{Key: "getMore", Value: paged}, {Key: "collection", Value: "curm"}, {Key: "batchSize", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	kill(paged)
	kill(open())
	after := status()
	for _, tc := range []struct {
		path []string
		want int64
	}{
		{[]string{"totalOpened"}, 2},
		{[]string{"moreThanOneBatch"}, 1},
		{[]string{"lifespan", "lessThan1Second"}, 2},
		{[]string{"open", "total"}, 0},
	} {
		if d := num(after, tc.path...) - num(before, tc.path...); d != tc.want {
			t.Errorf("metrics.cursor.%s grew by %d, want %d", strings.Join(tc.path, "."), d, tc.want)
		}
	}
	var keys []string
	elems, _ := after.Lookup("metrics", "cursor").Document().Elements()
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	if got := strings.Join(keys, " "); got != "lifespan moreThanOneBatch open timedOut totalOpened" {
		t.Errorf("metrics.cursor fields %s", got)
	}
}

// TestServerStatusCommandMetrics: metrics.commands counts each command's
// runs and failures under its first name (aliases with it), the unknown
// ones under <UNKNOWN>, and, as jstests update_metrics.js and
// find_and_modify_metrics.js, the update statements and findAndModify
// commands with a pipeline or arrayFilters.
func TestServerStatusCommandMetrics(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	status := func() bson.Raw { return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}) }
	num := func(doc bson.Raw, path ...string) int64 {
		return doc.Lookup(append([]string{"metrics", "commands"}, path...)...).AsInt64()
	}
	run := func(cmd string) { _ = db.RunCommand(context.Background(), extJSON(t, []byte(cmd))).Err() }
	before := status()
	run(`{"insert": "cm", "documents": [{"_id": 1, "a": [1, 2]}]}`)
	run(`{"update": "cm", "updates": [{"q": {"_id": 1}, "u": [{"$set": {"b": 1}}]}, {"q": {"_id": 1}, "u": {"$set": {"a.$[x]": 0}}, "arrayFilters": [{"x": 1}]}, {"q": {"_id": 1}, "u": {"$set": {"c": 1}}}]}`)
	run(`{"findAndModify": "cm", "query": {"_id": 1}, "update": [{"$set": {"d": 1}}]}`)
	run(`{"findandmodify": "cm", "query": {"_id": 1}, "update": {"$set": {"a.$[x]": 5}}, "arrayFilters": [{"x": 2}]}`)
	run(`{"find": "cm", "filter": {"$bogus": 1}}`)
	run(`{"noSuchCommand": 1}`)
	after := status()
	for _, tc := range []struct {
		path []string
		want int64
	}{
		{[]string{"insert", "total"}, 1},
		{[]string{"update", "total"}, 1},
		{[]string{"update", "failed"}, 0},
		{[]string{"update", "pipeline"}, 1},
		{[]string{"update", "arrayFilters"}, 1},
		{[]string{"findAndModify", "total"}, 2},
		{[]string{"findAndModify", "pipeline"}, 1},
		{[]string{"findAndModify", "arrayFilters"}, 1},
		{[]string{"find", "total"}, 1},
		{[]string{"find", "failed"}, 1},
		{[]string{"<UNKNOWN>"}, 1},
	} {
		if d := num(after, tc.path...) - num(before, tc.path...); d != tc.want {
			t.Errorf("metrics.commands.%v grew by %d, want %d", tc.path, d, tc.want)
		}
	}
	if _, err := after.LookupErr("metrics", "commands", "findandmodify"); err == nil {
		t.Error("an alias has its own counters")
	}
}

// TestServerStatusAbortExpiredTransactionsPasses: metrics lists first
// abortExpiredTransactions.passes, a 64-bit count of the passes the
// expired-transaction reaper made, which grows while the server runs
// (jstests/core/txns/abort_expired_transaction.js waits on it).
func TestServerStatusAbortExpiredTransactionsPasses(t *testing.T) {
	client, _ := startServer(t)
	passes := func() int64 {
		metrics := replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}).Lookup("metrics").Document()
		if first, _ := metrics.IndexErr(0); first.Key() != "abortExpiredTransactions" {
			t.Fatalf("metrics begins with %q", first.Key())
		}
		v := metrics.Lookup("abortExpiredTransactions", "passes")
		if v.Type != bson.TypeInt64 {
			t.Fatalf("abortExpiredTransactions.passes: %s", v)
		}
		return v.Int64()
	}
	before := passes()
	for deadline := time.Now().Add(10 * time.Second); passes() == before; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no pass in 10s after %d", before)
		}
	}
}

// TestServerStatusQueryExecutor: metrics.queryExecutor adds up the index
// keys (scanned) and documents (scannedObjects) every operation examined,
// its getMores' included, and counts the collection scans of every
// collection (collectionScans: all, and those not tailable), as MongoDB's
// recordCurOpMetrics and CollectionIndexUsageTracker do. The $facet of a
// correlated $lookup is jstests/aggregation/sources/facet/facet_stats.js:
// 3 local documents and 3 foreign ones for each, 12 documents and no key;
// with an index on the foreign field its $expr compares with the let
// variable, each lookup reads one key and its document instead.
// https://www.mongodb.com/docs/v7.0/reference/command/serverStatus/#mongodb-serverstatus-serverstatus.metrics.queryExecutor
func TestServerStatusQueryExecutor(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	local, foreign := db.Collection("qelocal"), db.Collection("qeforeign")
	seed(t, local, []bson.Raw{mustRaw(t, bson.D{{Key: "_id", Value: 1}}), mustRaw(t, bson.D{{Key: "_id", Value: 2}}), mustRaw(t, bson.D{{Key: "_id", Value: 3}})})
	// qeforeign (the index scan's), qeforeignidx (with an index on k)
	// and qeforeignplain (without) hold the same three documents
	indexed, plain := db.Collection("qeforeignidx"), db.Collection("qeforeignplain")
	for _, c := range []*mongo.Collection{foreign, indexed, plain} {
		seed(t, c, []bson.Raw{
			mustRaw(t, bson.D{{Key: "_id", Value: 0}, {Key: "k", Value: 1}}),
			mustRaw(t, bson.D{{Key: "_id", Value: 1}, {Key: "k", Value: 2}}),
			mustRaw(t, bson.D{{Key: "_id", Value: 2}, {Key: "k", Value: 3}}),
		})
	}
	if err := db.CreateCollection(ctx, "qecapped", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("qecapped").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*mongo.Collection{foreign, indexed} {
		if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	facetLookup := func(from string) {
		lookup := bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: from}, {Key: "let", Value: bson.D{{Key: "id1", Value: "$_id"}}},
			{Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$$id1", "$k"}}}}}}}}},
			{Key: "as", Value: "joined"}}}}
		if got := aggregateAll(t, local, bson.A{bson.D{{Key: "$facet", Value: bson.D{{Key: "nested", Value: bson.A{lookup}}}}}}); len(got) != 1 {
			t.Fatalf("%d documents, want 1", len(got))
		}
	}
	type counts struct{ keys, docs, scans, nonTailable int64 }
	read := func() counts {
		m := replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}).Lookup("metrics", "queryExecutor").Document()
		return counts{m.Lookup("scanned").AsInt64(), m.Lookup("scannedObjects").AsInt64(),
			m.Lookup("collectionScans", "total").AsInt64(), m.Lookup("collectionScans", "nonTailable").AsInt64()}
	}
	for _, tc := range []struct {
		name string
		run  func()
		want counts
	}{
		{"facet of a correlated lookup", func() { facetLookup("qeforeignplain") }, counts{0, 12, 4, 4}},
		{"facet of a correlated lookup through an index", func() { facetLookup("qeforeignidx") }, counts{3, 6, 1, 1}},
		{"index scan", func() { findAll(t, foreign, bson.D{{Key: "k", Value: 2}}) }, counts{1, 1, 0, 0}},
		{"getMores", func() { findAll(t, local, bson.D{}, options.Find().SetBatchSize(1)) }, counts{0, 3, 1, 1}},
		{"tailable", func() {
			findAll(t, db.Collection("qecapped"), bson.D{}, options.Find().SetCursorType(options.Tailable))
		}, counts{0, 1, 1, 0}},
	} {
		before := read()
		tc.run()
		after := read()
		got := counts{after.keys - before.keys, after.docs - before.docs, after.scans - before.scans, after.nonTailable - before.nonTailable}
		if got != tc.want {
			t.Errorf("%s: scanned, scannedObjects, collectionScans total and nonTailable grew by %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
