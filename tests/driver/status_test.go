package driver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// replyOf runs cmd against db and returns the raw reply.
func replyOf(t *testing.T, client *mongo.Client, db string, cmd bson.D) bson.Raw {
	t.Helper()
	raw, err := client.Database(db).RunCommand(context.Background(), cmd).Raw()
	var we mongo.WriteException
	if err != nil && !(errors.As(err, &we) && len(raw) > 0) {
		t.Fatalf("%v: %v", cmd, err)
	}
	return raw
}

// lookupPath finds a dotted path in a reply.
func lookupPath(doc bson.Raw, path string) (bson.RawValue, error) {
	return doc.LookupErr(strings.Split(path, ".")...)
}

// keysOf lists the top-level field names of doc.
// canonicalJSON is v as canonical extended JSON, without spaces.
func canonicalJSON(t *testing.T, v bson.RawValue) string {
	t.Helper()
	doc, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
	if err != nil {
		t.Fatal(err)
	}
	js, err := bson.MarshalExtJSON(bson.Raw(doc), true, false)
	if err != nil {
		t.Fatal(err)
	}
	s := string(js)
	return s[len(`{"v":`) : len(s)-1]
}

func keysOf(t *testing.T, doc bson.Raw) []string {
	t.Helper()
	elems, err := doc.Elements()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range elems {
		out = append(out, e.Key())
	}
	return out
}

// seedStats fills test.stats with documents and two indexes.
func seedStats(t *testing.T, client *mongo.Client) {
	t.Helper()
	coll := client.Database(testDB).Collection("stats")
	docs := make([]any, 0, 100)
	for i := range 100 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i}, {Key: "pad", Value: strings.Repeat("x", 100)}})
	}
	if _, err := coll.InsertMany(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
}

// TestReplyFieldTypes checks the BSON type of reply fields against the
// type MongoDB 7.0 sends: counts MongoDB builds with appendNumber are int32
// below 2^30, typed replies (dbStats) use int64 and doubles, serverStatus
// uses int64 counters and a whole-second double uptime (mongostat decodes
// uptime into an int64).
func TestReplyFieldTypes(t *testing.T) {
	client, _ := startServer(t)
	seedStats(t, client)
	cases := []struct {
		db   string
		cmd  bson.D
		path string
		want bson.Type
	}{
		{"admin", bson.D{{Key: "hello", Value: 1}}, "connectionId", bson.TypeInt32},
		{"admin", bson.D{{Key: "hello", Value: 1}}, "maxWireVersion", bson.TypeInt32},
		{"admin", bson.D{{Key: "hello", Value: 1}}, "minWireVersion", bson.TypeInt32},
		{"admin", bson.D{{Key: "hello", Value: 1}}, "maxBsonObjectSize", bson.TypeInt32},
		{"admin", bson.D{{Key: "hello", Value: 1}}, "logicalSessionTimeoutMinutes", bson.TypeInt32},
		{"admin", bson.D{{Key: "buildInfo", Value: 1}}, "bits", bson.TypeInt32},
		{"admin", bson.D{{Key: "buildInfo", Value: 1}}, "versionArray.0", bson.TypeInt32},
		{"admin", bson.D{{Key: "buildInfo", Value: 1}}, "maxBsonObjectSize", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "size", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "count", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "avgObjSize", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "storageSize", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "nindexes", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "totalIndexSize", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "indexSizes._id_", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "indexSizes.a_1", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "totalSize", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "scaleFactor", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}}, "capped", bson.TypeBoolean},
		{testDB, bson.D{{Key: "collStats", Value: "nothere"}}, "count", bson.TypeInt32},
		{testDB, bson.D{{Key: "collStats", Value: "nothere"}}, "indexSizes", bson.TypeEmbeddedDocument},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "collections", bson.TypeInt64},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "objects", bson.TypeInt64},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "indexes", bson.TypeInt64},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "avgObjSize", bson.TypeDouble},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "dataSize", bson.TypeDouble},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "storageSize", bson.TypeDouble},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "indexSize", bson.TypeDouble},
		{testDB, bson.D{{Key: "dbStats", Value: 1}}, "scaleFactor", bson.TypeInt64},
		{testDB, bson.D{{Key: "validate", Value: "stats"}}, "nrecords", bson.TypeInt32},
		{testDB, bson.D{{Key: "validate", Value: "stats"}}, "nIndexes", bson.TypeInt32},
		{testDB, bson.D{{Key: "validate", Value: "stats"}}, "keysPerIndex.a_1", bson.TypeInt32},
		{testDB, bson.D{{Key: "validate", Value: "stats"}}, "uuid", bson.TypeBinary},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "uptime", bson.TypeDouble},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "uptimeMillis", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "uptimeEstimate", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "pid", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "localTime", bson.TypeDateTime},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "opcounters.insert", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "opcountersRepl.insert", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "connections.current", bson.TypeInt32},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "mem.resident", bson.TypeInt32},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "mem.virtual", bson.TypeInt32},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "mem.supported", bson.TypeBoolean},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "network.bytesIn", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "network.numRequests", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "globalLock.totalTime", bson.TypeInt64},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "globalLock.activeClients.readers", bson.TypeInt32},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "globalLock.currentQueue.total", bson.TypeInt32},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "asserts.user", bson.TypeInt32},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "catalogStats.collections", bson.TypeInt32},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "storageEngine.name", bson.TypeString},
		{"admin", bson.D{{Key: "serverStatus", Value: 1}}, "metrics.cursor.open.total", bson.TypeInt64},
		{"admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 1}}, "cursorTimeoutMillis", bson.TypeInt64},
		{"admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "transactionLifetimeLimitSeconds", Value: 1}}, "transactionLifetimeLimitSeconds", bson.TypeInt32},
		{"admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "internalQueryMaxBlockingSortMemoryUsageBytes", Value: 1}}, "internalQueryMaxBlockingSortMemoryUsageBytes", bson.TypeInt32},
		{"admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "allowDiskUseByDefault", Value: 1}}, "allowDiskUseByDefault", bson.TypeBoolean},
		{"admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "internalQueryMaxAllowedDensifyDocs", Value: 1}}, "internalQueryMaxAllowedDensifyDocs", bson.TypeInt32},
	}
	for _, tc := range cases {
		t.Run(tc.cmd[0].Key+"."+tc.path, func(t *testing.T) {
			v, err := lookupPath(replyOf(t, client, tc.db, tc.cmd), tc.path)
			if err != nil {
				t.Fatalf("no %s: %v", tc.path, err)
			}
			if v.Type != tc.want {
				t.Fatalf("%s is %s (%v), want %s", tc.path, v.Type, v, tc.want)
			}
		})
	}
}

// TestExplainEcho: an explain's command is the command explained with its
// $db, and serverInfo names the machine's host name and the port apart.
func TestExplainEcho(t *testing.T) {
	client, in := startServer(t)
	seedStats(t, client)
	reply := replyOf(t, client, testDB, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "stats"}}}, {Key: "verbosity", Value: "queryPlanner"}})
	if got := strings.Join(keysOf(t, reply.Lookup("command").Document()), " "); got != "find $db" {
		t.Errorf("command fields %q, want find $db", got)
	}
	info := reply.Lookup("serverInfo").Document()
	if got := strings.Join(keysOf(t, info), " "); got != "host port version gitVersion" {
		t.Errorf("serverInfo fields %q", got)
	}
	_, port, _ := net.SplitHostPort(in.Addr())
	if got := info.Lookup("port").Int32(); strconv.Itoa(int(got)) != port {
		t.Errorf("serverInfo port %d, want %s", got, port)
	}
	if host, _ := os.Hostname(); info.Lookup("host").StringValue() != host {
		t.Errorf("serverInfo host %s, want the host name %s", info.Lookup("host"), host)
	}
}

// TestReplyFieldOrder checks replies whose field order MongoDB fixes.
func TestReplyFieldOrder(t *testing.T) {
	client, _ := startServer(t)
	seedStats(t, client)
	cases := []struct {
		db   string
		cmd  bson.D
		want string
	}{
		{"admin", bson.D{{Key: "buildInfo", Value: 1}},
			"version gitVersion modules allocator javascriptEngine sysInfo versionArray openssl buildEnvironment bits debug maxBsonObjectSize storageEngines ok"},
		{testDB, bson.D{{Key: "collStats", Value: "stats"}},
			"ns size count avgObjSize numOrphanDocs storageSize freeStorageSize capped nindexes indexDetails indexBuilds totalIndexSize indexSizes totalSize scaleFactor ok"},
		// A missing collection answers ok with zeros.
		{testDB, bson.D{{Key: "collStats", Value: "nothere"}},
			"ns size count numOrphanDocs storageSize totalSize nindexes totalIndexSize indexDetails indexSizes scaleFactor ok"},
		{"nodb", bson.D{{Key: "dbStats", Value: 1}},
			"db collections views objects avgObjSize dataSize storageSize indexes indexSize totalSize scaleFactor ok"},
		// 7.0's typed reply: the free storage figures after totalSize
		{testDB, bson.D{{Key: "dbStats", Value: 1}, {Key: "freeStorage", Value: 1}},
			"db collections views objects avgObjSize dataSize storageSize indexes indexSize totalSize freeStorageSize indexFreeStorageSize totalFreeStorageSize scaleFactor ok"},
		{testDB, bson.D{{Key: "dataSize", Value: testDB + ".stats"}}, "size numObjects millis estimate ok"},
		// UpdateCommandReply serializes WriteCommandReplyBase (n,
		// writeErrors) first, then upserted, then nModified.
		{testDB, bson.D{{Key: "update", Value: "ord"}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}},
		}}}, "n upserted nModified ok"},
		{testDB, bson.D{{Key: "update", Value: "ord"}, {Key: "ordered", Value: false}, {Key: "updates", Value: bson.A{
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 2}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}},
			bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 2}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "_id", Value: 1}}}}}},
		}}}, "n writeErrors upserted nModified ok"},
		{testDB, bson.D{{Key: "validate", Value: "stats"}},
			"ns uuid nInvalidDocuments nNonCompliantDocuments nrecords nIndexes keysPerIndex indexDetails valid repaired warnings errors extraIndexEntries missingIndexEntries corruptRecords ok"},
	}
	for _, tc := range cases {
		t.Run(tc.cmd[0].Key, func(t *testing.T) {
			got := strings.Join(keysOf(t, replyOf(t, client, tc.db, tc.cmd)), " ")
			if tc.cmd[0].Key == "update" {
				// The reply of a replica set member may carry
				// electionId, opTime and $clusterTime too.
				var kept []string
				for _, k := range strings.Fields(got) {
					if k != "electionId" && k != "opTime" && k != "$clusterTime" && k != "operationTime" {
						kept = append(kept, k)
					}
				}
				got = strings.Join(kept, " ")
			}
			if got != tc.want {
				t.Fatalf("fields\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestStatsScale checks scale: sizes are divided (integer division) and a
// scale that is not a number, or below 1 once truncated, fails with
// MongoDB's codes (collStats: 51024 from its IDL validator; dbStats:
// BadValue). https://www.mongodb.com/docs/v7.0/reference/command/collStats/
func TestStatsScale(t *testing.T) {
	client, _ := startServer(t)
	seedStats(t, client)
	base := replyOf(t, client, testDB, bson.D{{Key: "collStats", Value: "stats"}})
	size := base.Lookup("size").AsInt64()
	if size < 100*100 {
		t.Fatalf("size %d for 100 documents of 100+ bytes", size)
	}
	dbBase := replyOf(t, client, testDB, bson.D{{Key: "dbStats", Value: 1}})
	dataSize := int64(dbBase.Lookup("dataSize").Double())
	cases := []struct {
		cmd       string
		scale     any
		wantScale int64
		code      int
	}{
		{"collStats", 1, 1, 0},
		{"collStats", 1024, 1024, 0},
		{"collStats", int64(7), 7, 0},
		{"collStats", 2.9, 2, 0},
		{"collStats", 0, 0, 51024},
		{"collStats", -1, 0, 51024},
		{"collStats", 0.5, 0, 51024},
		{"collStats", "1", 0, 14},
		{"dbStats", 1, 1, 0},
		{"dbStats", 1000, 1000, 0},
		{"dbStats", 3.7, 3, 0},
		{"dbStats", 0, 0, 2},
		{"dbStats", -5, 0, 2},
		{"dbStats", "x", 0, 14},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			cmd := bson.D{{Key: tc.cmd, Value: "stats"}, {Key: "scale", Value: tc.scale}}
			if tc.cmd == "dbStats" {
				cmd[0].Value = 1
			}
			raw, err := client.Database(testDB).RunCommand(context.Background(), cmd).Raw()
			if tc.code != 0 {
				requireCode(t, err, tc.code, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := raw.Lookup("scaleFactor").AsInt64(); got != tc.wantScale {
				t.Errorf("scaleFactor %d, want %d", got, tc.wantScale)
			}
			if tc.cmd == "collStats" {
				if got := raw.Lookup("size").AsInt64(); got != size/tc.wantScale {
					t.Errorf("size %d at scale %d, want %d", got, tc.wantScale, size/tc.wantScale)
				}
			} else if got := int64(raw.Lookup("dataSize").Double()); got != dataSize/tc.wantScale {
				t.Errorf("dataSize %d at scale %d, want %d", got, tc.wantScale, dataSize/tc.wantScale)
			}
		})
	}
}

// TestStatsMissingNamespace checks that collStats of a missing collection
// and dbStats of a missing database answer ok with zeros, as MongoDB 7.0
// does, and that the aliases MongoDB registers work.
func TestStatsMissingNamespace(t *testing.T) {
	client, _ := startServer(t)
	for _, cmd := range []bson.D{
		{{Key: "collStats", Value: "none"}},
		{{Key: "collstats", Value: "none"}},
		{{Key: "dbStats", Value: 1}},
		{{Key: "dbstats", Value: 1}},
	} {
		raw := replyOf(t, client, "nodb", cmd)
		for _, f := range []string{"count", "objects", "size", "dataSize", "storageSize", "totalSize"} {
			if v, err := raw.LookupErr(f); err == nil && v.AsFloat64() != 0 {
				t.Errorf("%v: %s = %v", cmd, f, v)
			}
		}
	}
}

// TestServerStatusCounters checks that serverStatus figures move with the
// work done: network bytes and requests, opcounters, asserts, open
// cursors, catalog counts.
func TestServerStatusCounters(t *testing.T) {
	client, _ := startServer(t)
	status := func() bson.Raw { return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}) }
	num := func(doc bson.Raw, path string) int64 {
		v, err := lookupPath(doc, path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v.AsInt64()
	}
	before := status()
	coll := client.Database(testDB).Collection("ss")
	if _, err := coll.InsertMany(context.Background(), []any{bson.D{{Key: "x", Value: 1}}, bson.D{{Key: "x", Value: 2}}, bson.D{{Key: "x", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	cur, err := coll.Find(context.Background(), bson.D{}, options.Find().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close(context.Background())
	_ = client.Database(testDB).RunCommand(context.Background(), bson.D{{Key: "nosuchcommand", Value: 1}}).Err()
	after := status()
	for _, tc := range []struct {
		path string
		min  int64
	}{
		{"network.bytesIn", 100},
		{"network.bytesOut", 100},
		{"network.numRequests", 3},
		{"opcounters.insert", 3},
		{"opcounters.query", 1},
		{"asserts.user", 1},
		{"metrics.cursor.open.total", 1},
		{"catalogStats.collections", 1},
	} {
		if d := num(after, tc.path) - num(before, tc.path); d < tc.min {
			t.Errorf("%s grew by %d, want at least %d", tc.path, d, tc.min)
		}
	}
	if up := after.Lookup("uptime").Double(); up != float64(int64(up)) {
		t.Errorf("uptime %v is not whole seconds", up)
	}
	if after.Lookup("mem", "supported").Boolean() && num(after, "mem.resident") <= 0 {
		t.Errorf("mem.resident %d", num(after, "mem.resident"))
	}
}

// TestOpcountersInsertAttempted: opcounters.insert counts the documents an
// insert tried: all of an unordered batch, and of an ordered batch those up
// to the first failure, which stops it (jstests/core/diagnostics/opcounters_write_cmd.js).
func TestOpcountersInsertAttempted(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("opcounters")
	inserts := func() int64 {
		return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}).Lookup("opcounters", "insert").Int64()
	}
	dups := []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}
	for _, tc := range []struct {
		name    string
		ordered bool
		want    int64
	}{{"ordered", true, 2}, {"unordered", false, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := coll.Drop(context.Background()); err != nil {
				t.Fatal(err)
			}
			before := inserts()
			if _, err := coll.InsertMany(context.Background(), dups, options.InsertMany().SetOrdered(tc.ordered)); err == nil {
				t.Fatal("duplicate _id inserted")
			}
			if got := inserts() - before; got != tc.want {
				t.Errorf("opcounters.insert grew by %d, want %d", got, tc.want)
			}
		})
	}
}

// TestOpcountersCommand: opcounters.command counts the commands but find,
// aggregate, getMore and the write commands, which count under their own
// kinds; count and distinct are commands, not queries (MongoDB's
// shouldAffectCommandCounter and shouldAffectQueryCounter).
func TestOpcountersCommand(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	if _, err := db.Collection("opc").InsertMany(context.Background(), []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	counters := func() bson.Raw {
		return replyOf(t, client, "admin", bson.D{{Key: "serverStatus", Value: 1}}).Lookup("opcounters").Document()
	}
	for _, tc := range []struct {
		cmd            bson.D
		command, query int64
	}{
		{bson.D{{Key: "find", Value: "opc"}, {Key: "batchSize", Value: 1}}, 0, 1},
		{bson.D{{Key: "aggregate", Value: "opc"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}, 0, 1},
		{bson.D{{Key: "insert", Value: "opc"}, {Key: "documents", Value: bson.A{bson.D{}}}}, 0, 0},
		{bson.D{{Key: "update", Value: "opc"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}}}}}}, 0, 0},
		{bson.D{{Key: "delete", Value: "opc"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 9}}}, {Key: "limit", Value: 1}}}}}, 0, 0},
		{bson.D{{Key: "getMore", Value: int64(12345)}, {Key: "collection", Value: "opc"}}, 0, 0},
		{bson.D{{Key: "count", Value: "opc"}}, 1, 0},
		{bson.D{{Key: "distinct", Value: "opc"}, {Key: "key", Value: "_id"}}, 1, 0},
		{bson.D{{Key: "ping", Value: 1}}, 1, 0},
	} {
		// a monitor's heartbeat may add a command meanwhile: up to three
		// tries, of which one must count exactly
		var command, query int64
		for range 3 {
			before := counters()
			_, _ = runCmd(client, testDB, tc.cmd)
			after := counters() // its serverStatus counts one command
			command = after.Lookup("command").Int64() - before.Lookup("command").Int64() - 1
			query = after.Lookup("query").Int64() - before.Lookup("query").Int64()
			if command == tc.command && query == tc.query {
				break
			}
		}
		if command != tc.command || query != tc.query {
			t.Errorf("%s: command +%d, query +%d; want +%d, +%d", tc.cmd[0].Key, command, query, tc.command, tc.query)
		}
	}
}

// TestAutomationServiceDescriptor: the parameter takes a string of at most
// 64 bytes (TypeMismatch, Overflow), which hello then names; empty, it is
// left out of hello, getParameter and setParameter's "was"
// (jstests/core/administrative/automation_setparameter.js).
func TestAutomationServiceDescriptor(t *testing.T) {
	client, _ := startServer(t)
	admin := client.Database("admin")
	set := func(v any) (bson.Raw, error) {
		return admin.RunCommand(context.Background(), bson.D{{Key: "setParameter", Value: 1}, {Key: "automationServiceDescriptor", Value: v}}).Raw()
	}
	hello := func() bson.RawValue {
		return replyOf(t, client, "admin", bson.D{{Key: "hello", Value: 1}}).Lookup("automationServiceDescriptor")
	}
	_, err := set(0)
	requireError(t, err, 14, "TypeMismatch", "Value for parameter automationServiceDescriptor must be of type 'string'")
	_, err = set(strings.Repeat("12345678", 8) + "X")
	requireError(t, err, 15, "Overflow", "Value for parameter automationServiceDescriptor must be no more than 64 bytes")
	if v := hello(); v.Type != 0 {
		t.Errorf("hello names %v before it is set", v)
	}
	if _, err := admin.RunCommand(context.Background(), bson.D{{Key: "getParameter", Value: 1}, {Key: "automationServiceDescriptor", Value: 1}}).Raw(); serverCode(err) != 72 {
		t.Errorf("getParameter of the empty descriptor: %v, want InvalidOptions", err)
	}
	reply, err := set("some_service")
	if err != nil || reply.Lookup("was").Type != 0 {
		t.Fatalf("set: %v %v", reply, err)
	}
	if v, _ := hello().StringValueOK(); v != "some_service" {
		t.Errorf("hello names %q", v)
	}
	if v, _ := replyOf(t, client, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "automationServiceDescriptor", Value: 1}}).Lookup("automationServiceDescriptor").StringValueOK(); v != "some_service" {
		t.Errorf("getParameter %q", v)
	}
	if reply, err = set(""); err != nil || reply.Lookup("was").StringValue() != "some_service" {
		t.Fatalf("clear: %v %v", reply, err)
	}
	if v := hello(); v.Type != 0 {
		t.Errorf("hello names %v once cleared", v)
	}
}

// TestGetSetParameter checks getParameter's forms and setParameter's
// validation, errors and "was" reply.
// https://www.mongodb.com/docs/v7.0/reference/command/getParameter/
func TestGetSetParameter(t *testing.T) {
	client, _ := startServer(t)
	admin := client.Database("admin")
	get := func(cmd bson.D) (bson.Raw, error) {
		return admin.RunCommand(context.Background(), cmd).Raw()
	}
	t.Run("named", func(t *testing.T) {
		raw, err := get(bson.D{{Key: "getParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 1}, {Key: "nosuch", Value: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(keysOf(t, raw), " "); got != "cursorTimeoutMillis ok" {
			t.Errorf("fields %s", got)
		}
		if v := raw.Lookup("cursorTimeoutMillis").Int64(); v != 600000 {
			t.Errorf("cursorTimeoutMillis %d", v)
		}
	})
	for _, form := range []any{"*", bson.D{{Key: "allParameters", Value: true}}} {
		raw, err := get(bson.D{{Key: "getParameter", Value: form}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.LookupErr("transactionLifetimeLimitSeconds"); err != nil {
			t.Errorf("getParameter %v lacks transactionLifetimeLimitSeconds: %s", form, raw)
		}
		if _, err := raw.LookupErr("featureCompatibilityVersion", "version"); err != nil {
			t.Errorf("getParameter %v lacks featureCompatibilityVersion: %s", form, raw)
		}
	}
	t.Run("showDetails", func(t *testing.T) {
		raw, err := get(bson.D{{Key: "getParameter", Value: bson.D{{Key: "showDetails", Value: true}}}, {Key: "cursorTimeoutMillis", Value: 1}, {Key: "maxBSONDepth", Value: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if v := raw.Lookup("cursorTimeoutMillis", "value").Int64(); v != 600000 {
			t.Errorf("value %d", v)
		}
		if !raw.Lookup("cursorTimeoutMillis", "settableAtRuntime").Boolean() || raw.Lookup("maxBSONDepth", "settableAtRuntime").Boolean() {
			t.Errorf("settableAtRuntime: %s", raw)
		}
		if _, err := raw.LookupErr("maxBSONDepth", "settableAtStartup"); err != nil {
			t.Errorf("no settableAtStartup: %s", raw)
		}
	})
	// Each parameter's details say how it can really be set: at runtime
	// by setParameter, at startup by a flag or the configuration file's
	// setParameter section (which takes every runtime parameter).
	// MongoDB 7.0 reports quiet settable both ways and
	// authenticationMechanisms at startup only.
	for _, tc := range []struct {
		name             string
		value            string // the value as extended JSON
		runtime, startup bool
	}{
		{"quiet", `false`, true, true},
		{"authenticationMechanisms", `["MONGODB-X509","SCRAM-SHA-1","SCRAM-SHA-256"]`, false, true},
		{"cursorTimeoutMillis", `{"$numberLong":"600000"}`, true, true},
		{"enableTestCommands", `false`, false, true},
		{"maxBSONDepth", `{"$numberInt":"200"}`, false, false},
		{"featureCompatibilityVersion", `{"version":"7.0"}`, false, false},
	} {
		t.Run("showDetails "+tc.name, func(t *testing.T) {
			for _, cmd := range []bson.D{
				{{Key: "getParameter", Value: bson.D{{Key: "showDetails", Value: true}}}, {Key: tc.name, Value: 1}},
				{{Key: "getParameter", Value: bson.D{{Key: "showDetails", Value: true}, {Key: "allParameters", Value: true}}}},
			} {
				raw, err := get(cmd)
				if err != nil {
					t.Fatal(err)
				}
				want := `{"value":` + tc.value + `,"settableAtRuntime":` + strconv.FormatBool(tc.runtime) + `,"settableAtStartup":` + strconv.FormatBool(tc.startup) + `}`
				if got := canonicalJSON(t, raw.Lookup(tc.name)); got != want {
					t.Errorf("%v: %s, want %s", cmd, got, want)
				}
			}
		})
	}
	errCases := []struct {
		name string
		db   string
		cmd  bson.D
		code int
	}{
		{"get nothing known", "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "nosuch", Value: 1}}, 72},
		{"get outside admin", testDB, bson.D{{Key: "getParameter", Value: "*"}}, 13},
		{"set unknown", "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "nosuch", Value: 1}}, 72},
		{"set startup only", "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "maxBSONDepth", Value: 10}}, 20},
		{"set authenticationMechanisms", "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "authenticationMechanisms", Value: "SCRAM-SHA-1"}}, 20},
		{"set nothing", "admin", bson.D{{Key: "setParameter", Value: 1}}, 72},
		{"set wrong type", "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: "1000"}}, 2},
		{"set below minimum", "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "transactionLifetimeLimitSeconds", Value: 0}}, 2},
		{"set outside admin", testDB, bson.D{{Key: "setParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 1000}}, 13},
		// The parameters are set in the order of their names: the bad
		// transactionLifetimeLimitSeconds fails the command after
		// cursorTimeoutMillis was set (CmdSet's std::map).
		{"set one bad of two", "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "transactionLifetimeLimitSeconds", Value: -1}, {Key: "cursorTimeoutMillis", Value: 5}}, 2},
		// checked by name before any is set
		{"set unknown after a bad value", "admin", bson.D{{Key: "setParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: "x"}, {Key: "nosuch", Value: 1}}, 72},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			err := client.Database(tc.db).RunCommand(context.Background(), tc.cmd).Err()
			requireCode(t, err, tc.code, "")
		})
	}
	// a name given twice is refused with both values, before anything is set
	requireError(t, client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "setParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 7}, {Key: "cursorTimeoutMillis", Value: "x"}}).Err(),
		72, "InvalidOptions", `attempted to set parameter [cursorTimeoutMillis] twice in the same setParameter command, once to value: [7], and once to value: ["x"]`)
	// "was" is the old value of the parameter first by name, here the 5
	// the failed command above set
	raw, err := get(bson.D{{Key: "setParameter", Value: 1}, {Key: "transactionLifetimeLimitSeconds", Value: 30}, {Key: "cursorTimeoutMillis", Value: 1234.0}})
	if err != nil {
		t.Fatal(err)
	}
	if was := raw.Lookup("was"); was.Type != bson.TypeInt64 || was.Int64() != 5 {
		t.Errorf("was %v", was)
	}
	raw, err = get(bson.D{{Key: "getParameter", Value: 1}, {Key: "cursorTimeoutMillis", Value: 1}, {Key: "transactionLifetimeLimitSeconds", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if raw.Lookup("cursorTimeoutMillis").Int64() != 1234 || raw.Lookup("transactionLifetimeLimitSeconds").Int32() != 30 {
		t.Errorf("after setParameter: %s", raw)
	}
}

// TestSetParameterTakesEffect checks that the parameters Folio can change
// change what it does: the find sort memory limit and the cursor idle
// timeout.
func TestSetParameterTakesEffect(t *testing.T) {
	client, in := startServer(t)
	seedStats(t, client)
	admin := client.Database("admin")
	coll := client.Database(testDB).Collection("stats")
	set := func(name string, v any) {
		t.Helper()
		if err := admin.RunCommand(context.Background(), bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: v}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The sort limit bounds every blocking sort, find's and aggregate's
	// $sort (pushed down to the scan or not) and the one $setWindowFields
	// desugars to, and only sorts: $group has its own limit. (Without disk
	// use: with it, sorts spill.)
	padOrder := bson.D{{Key: "pad", Value: 1}}
	aggregate := func(stages ...bson.D) func() error {
		return func() error {
			cur, err := coll.Aggregate(context.Background(), stages, options.Aggregate().SetAllowDiskUse(false))
			if err == nil {
				err = cur.All(context.Background(), &[]bson.Raw{})
			}
			return err
		}
	}
	for _, tc := range []struct {
		name   string
		run    func() error
		sorted bool
	}{
		{"find sort", func() error {
			_, err := coll.Find(context.Background(), bson.D{}, options.Find().SetSort(padOrder).SetAllowDiskUse(false))
			return err
		}, true},
		{"aggregate leading $sort", aggregate(bson.D{{Key: "$sort", Value: padOrder}}), true},
		{"aggregate $sort after $project", aggregate(bson.D{{Key: "$project", Value: bson.D{{Key: "pad", Value: 1}}}}, bson.D{{Key: "$sort", Value: padOrder}}), true},
		{"aggregate $group", aggregate(bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$pad"}}}}), false},
		{"aggregate $setWindowFields sortBy", aggregate(bson.D{{Key: "$setWindowFields", Value: bson.D{{Key: "sortBy", Value: padOrder},
			{Key: "output", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$documentNumber", Value: bson.D{}}}}}}}}}), true},
	} {
		set("internalQueryMaxBlockingSortMemoryUsageBytes", 1000)
		if err := tc.run(); tc.sorted {
			requireCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
			// the context of the command's executor
			want := "PlanExecutor error during aggregation :: caused by :: Sort exceeded memory limit"
			if tc.name == "find sort" {
				want = "Executor error during find command :: caused by :: Sort exceeded memory limit"
			}
			var ce mongo.CommandError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, want) {
				t.Errorf("%s: %v, want a message starting %q", tc.name, err, want)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		set("internalQueryMaxBlockingSortMemoryUsageBytes", 100<<20)
		if err := tc.run(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	// Past the limit a sort spills unless disk use is refused, by the
	// command or by allowDiskUseByDefault (true since MongoDB 6.0):
	// https://www.mongodb.com/docs/manual/reference/parameters/#mongodb-parameter-param.allowDiskUseByDefault
	byPad := options.Find().SetSort(bson.D{{Key: "pad", Value: 1}})
	countSorted := func(o *options.FindOptionsBuilder) (int, error) {
		cur, err := coll.Find(context.Background(), bson.D{}, o)
		if err != nil {
			return 0, err
		}
		var docs []bson.Raw
		err = cur.All(context.Background(), &docs)
		return len(docs), err
	}
	all, err := countSorted(byPad)
	if err != nil {
		t.Fatal(err)
	}
	set("internalQueryMaxBlockingSortMemoryUsageBytes", 1000)
	if n, err := countSorted(byPad); err != nil || n != all {
		t.Fatalf("sort past the limit with allowDiskUseByDefault: %d documents of %d, %v", n, all, err)
	}
	_, err = countSorted(options.Find().SetSort(bson.D{{Key: "pad", Value: 1}}).SetAllowDiskUse(false))
	requireCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	set("allowDiskUseByDefault", false)
	_, err = countSorted(byPad)
	requireCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	if n, err := countSorted(options.Find().SetSort(bson.D{{Key: "pad", Value: 1}}).SetAllowDiskUse(true)); err != nil || n != all {
		t.Fatalf("sort with allowDiskUse: true: %d documents of %d, %v", n, all, err)
	}
	set("allowDiskUseByDefault", true)
	set("internalQueryMaxBlockingSortMemoryUsageBytes", 100<<20)
	if n, err := countSorted(byPad); err != nil || n != all {
		t.Fatal(n, err)
	}

	// The budget all blocking stages share binds below each one's limit:
	// a sort it cannot hold spills, or fails without disk use, and eight
	// at once all complete by spilling.
	var was struct {
		Was int64 `bson:"was"`
	}
	if err := admin.RunCommand(context.Background(), bson.D{{Key: "setParameter", Value: 1}, {Key: "folioBlockingStagesMemoryBudgetBytes", Value: 10000}}).Decode(&was); err != nil {
		t.Fatal(err)
	}
	defer set("folioBlockingStagesMemoryBudgetBytes", was.Was)
	_, err = countSorted(options.Find().SetSort(bson.D{{Key: "pad", Value: 1}}).SetAllowDiskUse(false))
	requireCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if n, err := countSorted(byPad); err != nil || n != all {
				errs[i] = fmt.Errorf("%d documents of %d, %v", n, all, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("sort within a 10000-byte budget: %v", err)
		}
	}

	// The idle timeout applies to cursors outside sessions (drivers attach
	// an implicit session to every command, so this one is opened on a raw
	// connection); see TestCursorIdleTimeout.
	set("cursorTimeoutMillis", 100)
	raw := rawDial(t, in)
	reply := rawCommand(t, raw, 1, bson.D{{Key: "find", Value: "stats"}, {Key: "batchSize", Value: 1}, {Key: "$db", Value: testDB}})
	id := reply.Lookup("cursor", "id").Int64()
	if id == 0 {
		t.Fatalf("no cursor: %s", reply)
	}
	time.Sleep(2500 * time.Millisecond)
	reply = rawCommand(t, raw, 2, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "stats"}, {Key: "$db", Value: testDB}})
	if code, _ := reply.Lookup("code").Int32OK(); code != 43 {
		t.Fatalf("getMore after the timeout: %s, want CursorNotFound (43)", reply)
	}
}

// TestTop checks that top counts the operations on each collection by
// kind and lock, as mongotop reads them.
func TestTop(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("top")
	if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(context.Background(), bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	// Refused namespaces are not recorded: a NUL or invalid UTF-8 in a
	// collection name would make top's reply, which has a field per
	// namespace, unencodable for every client.
	for _, name := range []string{"a\x00b", ".a", ""} {
		if err := client.Database(testDB).RunCommand(t.Context(), bson.D{{Key: "find", Value: name}}).Err(); err == nil {
			t.Fatalf("find on %q succeeded", name)
		}
	}
	_ = client.Database(testDB).RunCommand(t.Context(), bson.D{{Key: "find", Value: "bad\xff"}}).Err()
	raw := replyOf(t, client, "admin", bson.D{{Key: "top", Value: 1}})
	elems, err := raw.Lookup("totals").Document().Elements()
	if err != nil || len(elems) < 2 {
		t.Fatalf("top totals %v (%v)", raw, err)
	}
	for _, el := range elems {
		if !utf8.ValidString(el.Key()) {
			t.Errorf("top lists the namespace %q", el.Key())
		}
	}
	for _, tc := range []struct {
		path string
		min  int64
	}{
		{"totals.test.top.total.count", 2},
		{"totals.test.top.insert.count", 1},
		{"totals.test.top.queries.count", 1},
		{"totals.test.top.writeLock.count", 1},
		{"totals.test.top.readLock.count", 1},
	} {
		v, err := raw.LookupErr("totals", "test.top", strings.Split(tc.path, ".")[3], "count")
		if err != nil {
			t.Fatalf("%s: %v in %s", tc.path, err, raw)
		}
		if v.Type != bson.TypeInt32 || int64(v.Int32()) < tc.min {
			t.Errorf("%s = %v (%s), want an int32 of at least %d", tc.path, v, v.Type, tc.min)
		}
	}
	if err := client.Database(testDB).RunCommand(context.Background(), bson.D{{Key: "top", Value: 1}}).Err(); serverCode(err) != 13 {
		t.Errorf("top outside admin: %v", err)
	}

	// A collection's figures go with it: dropped, or renamed away (its
	// new name gets its own), as MongoDB's Top forgets them.
	db := client.Database(testDB)
	for _, name := range []string{"gone", "moved"} {
		if _, err := db.Collection(name).InsertOne(t.Context(), bson.D{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Collection("gone").Drop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "renameCollection", Value: testDB + ".moved"}, {Key: "to", Value: testDB + ".moved2"}}).Err(); err != nil {
		t.Fatal(err)
	}
	raw = replyOf(t, client, "admin", bson.D{{Key: "top", Value: 1}})
	for _, ns := range []string{"test.gone", "test.moved"} {
		if _, err := raw.LookupErr("totals", ns); err == nil {
			t.Errorf("top still lists %s after it left: %s", ns, raw)
		}
	}
	if _, err := raw.LookupErr("totals", "test.top"); err != nil {
		t.Errorf("top lost test.top: %s", raw)
	}
}

// TestTopDDL checks what top keeps around DDL, as MongoDB's Top does: a
// create that fails leaves no entry while one that succeeds makes one
// (create_collection_fail_cleanup.js); a database's drop forgets its
// collections' figures but skips no later operation on them, unlike a
// collection's drop; renameCollection files under its source namespace
// (the command's IDL namespace), not under admin.<source>.
func TestTopDDL(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database("topddl")
	for _, name := range []string{"a", "b", "c"} {
		if _, err := db.Collection(name).InsertOne(t.Context(), bson.D{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Drop(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if err := db.Collection(name).FindOne(t.Context(), bson.D{}).Err(); err != mongo.ErrNoDocuments {
			t.Fatalf("find on %s: %v", name, err)
		}
	}
	err := db.RunCommand(t.Context(), bson.D{{Key: "create", Value: "badcoll"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "invalid"}}}}).Err()
	requireCode(t, err, 2, "BadValue")
	if err := db.RunCommand(t.Context(), bson.D{{Key: "create", Value: "goodcoll"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "en_US"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	raw := replyOf(t, client, "admin", bson.D{{Key: "top", Value: 1}})
	if _, err := raw.LookupErr("totals", "topddl.goodcoll"); err != nil {
		t.Errorf("top lacks topddl.goodcoll: %s", raw.Lookup("totals"))
	}
	for _, ns := range []string{"topddl.a", "topddl.b", "topddl.c"} {
		if n, err := raw.LookupErr("totals", ns, "queries", "count"); err != nil || n.Int32() != 1 {
			t.Errorf("%s's queries after the database's drop: %v (%v), want 1", ns, n, err)
		}
	}
	if _, err := raw.LookupErr("totals", "topddl.badcoll"); err == nil {
		t.Errorf("top lists topddl.badcoll: %s", raw.Lookup("totals"))
	}

	// The rename forgets its source's figures, its own operation being
	// the one top then skips; the next query on the source name counts.
	if err := client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "renameCollection", Value: "topddl.goodcoll"}, {Key: "to", Value: "topddl.renamed"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.Collection("goodcoll").FindOne(t.Context(), bson.D{}).Err(); err != mongo.ErrNoDocuments {
		t.Fatalf("find on the renamed source: %v", err)
	}
	raw = replyOf(t, client, "admin", bson.D{{Key: "top", Value: 1}})
	if _, err := raw.LookupErr("totals", "admin.topddl.goodcoll"); err == nil {
		t.Errorf("top lists admin.topddl.goodcoll: %s", raw.Lookup("totals"))
	}
	if n, err := raw.LookupErr("totals", "topddl.goodcoll", "total", "count"); err != nil || n.Int32() != 1 {
		t.Errorf("topddl.goodcoll after its rename: %v (%v), want 1 operation", n, err)
	}
}

// TestDBStatsOnDisk checks dbStats' filesystem figures on a persistent
// instance (an in-memory one has none, as MongoDB's ephemeral engines) and
// the zeros it reports for a database that does not exist.
func TestDBStatsOnDisk(t *testing.T) {
	cfg := defaultConfig()
	cfg.InMemory = false
	cfg.DBPath = t.TempDir()
	client := connect(t, startInstance(t, cfg))
	seedStats(t, client)
	raw := replyOf(t, client, testDB, bson.D{{Key: "dbStats", Value: 1}})
	total, used := raw.Lookup("fsTotalSize"), raw.Lookup("fsUsedSize")
	if total.Type != bson.TypeDouble || used.Type != bson.TypeDouble || total.Double() <= 0 || used.Double() <= 0 || used.Double() > total.Double() {
		t.Errorf("fsTotalSize %v, fsUsedSize %v", total, used)
	}
	scaled := replyOf(t, client, testDB, bson.D{{Key: "dbStats", Value: 1}, {Key: "scale", Value: 1 << 20}})
	if got, want := scaled.Lookup("fsTotalSize").Double(), float64(int64(total.Double())>>20); got != want {
		t.Errorf("fsTotalSize at scale 1 MiB: %v, want %v", got, want)
	}
	none := replyOf(t, client, "nodb", bson.D{{Key: "dbStats", Value: 1}})
	if none.Lookup("fsTotalSize").Double() != 0 || none.Lookup("collections").Int64() != 0 {
		t.Errorf("missing database: %s", none)
	}
}

// TestCollStatsStage checks that $collStats' storageStats carries
// collStats' fields at the scale asked for, and its count section the
// document count. https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/collStats/
func TestCollStatsStage(t *testing.T) {
	client, _ := startServer(t)
	seedStats(t, client)
	coll := client.Database(testDB).Collection("stats")
	cur, err := coll.Aggregate(context.Background(), bson.A{bson.D{{Key: "$collStats", Value: bson.D{
		{Key: "storageStats", Value: bson.D{{Key: "scale", Value: 10}}}, {Key: "count", Value: bson.D{}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(context.Background(), &out); err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}
	direct := replyOf(t, client, testDB, bson.D{{Key: "collStats", Value: "stats"}, {Key: "scale", Value: 10}})
	for _, f := range []string{"size", "count", "nindexes", "scaleFactor"} {
		if got, want := out[0].Lookup("storageStats", f), direct.Lookup(f); !got.Equal(want) {
			t.Errorf("storageStats.%s %v, collStats %v", f, got, want)
		}
	}
	if c := out[0].Lookup("count"); c.Type != bson.TypeInt32 || c.Int32() != 100 {
		t.Errorf("count %v", c)
	}
	_, err = coll.Aggregate(context.Background(), bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{{Key: "scale", Value: 0}}}}}}})
	requireCode(t, err, 51024, "")
}

// TestCollStatsLatency: $collStats' latencyStats counts the operations on
// the collection by MongoDB's classes (reads, writes, commands,
// transactions), with their total latency and, when asked, the non-empty
// buckets of MongoDB's histogram, whose counts add up to the operations.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/collStats/#latencystats-document
func TestCollStatsLatency(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("latency")
	latency := func(histograms bool) bson.Raw {
		t.Helper()
		out := collStatsOf(t, coll, bson.D{{Key: "latencyStats", Value: bson.D{{Key: "histograms", Value: histograms}}}})
		els, _ := out.Elements()
		if len(els) != 4 || els[0].Key() != "ns" || els[3].Key() != "latencyStats" {
			t.Fatalf("fields %v", out)
		}
		return out.Lookup("latencyStats").Document()
	}
	if got := latency(false).String(); got != `{"reads": {"latency": {"$numberLong":"0"},"ops": {"$numberLong":"0"}},"writes": {"latency": {"$numberLong":"0"},"ops": {"$numberLong":"0"}},`+
		`"commands": {"latency": {"$numberLong":"0"},"ops": {"$numberLong":"0"}},"transactions": {"latency": {"$numberLong":"0"},"ops": {"$numberLong":"0"}}}` {
		t.Errorf("before any operation: %s", got)
	}
	for i := range 3 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := coll.FindOne(ctx, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.CountDocuments(ctx, bson.D{}); err != nil { // an aggregate
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	// explain and dataSize (its full namespace sent to another database)
	// are commands on the collection they name
	if _, err := runCmd(client, testDB, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "latency"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(client, "admin", bson.D{{Key: "dataSize", Value: testDB + ".latency"}}); err != nil {
		t.Fatal(err)
	}
	// $out writes: the aggregate counts among the writes
	if _, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$out", Value: "latency_out"}}}); err != nil {
		t.Fatal(err)
	}
	// the latencyStats aggregates before this one are reads too
	l := latency(true)
	for class, want := range map[string]int64{"reads": 4, "writes": 5, "commands": 3, "transactions": 0} {
		h := l.Lookup(class).Document()
		if ops := h.Lookup("ops").Int64(); ops != want {
			t.Errorf("%s: %d ops, want %d (%s)", class, ops, want, h)
		}
		var sum int64
		buckets, _ := h.Lookup("histogram").Array().Values()
		for _, b := range buckets {
			sum += b.Document().Lookup("count").Int64()
		}
		if sum != want || h.Lookup("latency").Int64() < 0 {
			t.Errorf("%s: histogram counts %d, want %d (%s)", class, sum, want, h)
		}
	}
	_, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "latencyStats", Value: bson.D{{Key: "histograms", Value: 1}}}}}}})
	requireCode(t, err, 14, "TypeMismatch")

	// on a view, $collStats runs on the view's namespace, unresolved: its
	// latencyStats, while a view has no storage or count (166)
	if err := client.Database(testDB).CreateView(ctx, "latency_view", "latency", mongo.Pipeline{}); err != nil {
		t.Fatal(err)
	}
	view := client.Database(testDB).Collection("latency_view")
	cur, err := view.Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "latencyStats", Value: bson.D{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(ctx, &out); err != nil || len(out) != 1 || out[0].Lookup("ns").StringValue() != testDB+".latency_view" {
		t.Fatalf("latencyStats of a view: %v %v", out, err)
	}
	for _, stage := range []bson.D{{{Key: "count", Value: bson.D{}}}, {{Key: "storageStats", Value: bson.D{}}}} {
		_, err = view.Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: stage}}})
		requireCode(t, err, 166, "CommandNotSupportedOnView")
	}
	_, err = runCmd(client, testDB, bson.D{{Key: "collStats", Value: "latency_view"}})
	requireCode(t, err, 166, "CommandNotSupportedOnView")
	// dbStats counts the view
	if v := replyOf(t, client, testDB, bson.D{{Key: "dbStats", Value: 1}}).Lookup("views"); v.Int64() != 1 {
		t.Errorf("dbStats views %v", v)
	}
}

// collStatsOf is the one document of {$collStats: spec} on coll.
func collStatsOf(t *testing.T, coll *mongo.Collection, spec bson.D) bson.Raw {
	t.Helper()
	ctx := context.Background()
	cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: spec}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []bson.Raw
	if err := cur.All(ctx, &out); err != nil || len(out) != 1 {
		t.Fatalf("%v %v", out, err)
	}
	return out[0]
}

// TestCollStatsQueryExecStats: $collStats' queryExecStats counts the
// queries that read the collection by a collection scan (finds, counts,
// aggregations, distincts, updates and deletes without an index to use),
// and separately those that were not tailable; an _id lookup and an index
// scan are none, nor is $collStats itself. The section comes last, after
// count.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/collStats/#queryexecstats-document
func TestCollStatsQueryExecStats(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.CreateCollection(ctx, "scans", options.CreateCollection().SetCapped(true).SetSizeInBytes(1<<20)); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("scans")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}, bson.D{{Key: "_id", Value: 2}, {Key: "a", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	scans := func() (total, nonTailable int64) {
		t.Helper()
		out := collStatsOf(t, coll, bson.D{{Key: "count", Value: bson.D{}}, {Key: "queryExecStats", Value: bson.D{}}})
		els, _ := out.Elements()
		if last := els[len(els)-1].Key(); last != "queryExecStats" || els[len(els)-2].Key() != "count" {
			t.Fatalf("fields %v", out)
		}
		cs := out.Lookup("queryExecStats", "collectionScans").Document()
		return cs.Lookup("total").Int64(), cs.Lookup("nonTailable").Int64()
	}
	for range 2 {
		if total, non := scans(); total != 0 || non != 0 {
			t.Errorf("before any query: %d, %d", total, non)
		}
	}
	steps := []struct {
		name string
		run  func() error
		scan bool
	}{
		{"find by _id", func() error { return coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Err() }, false},
		{"find by an index", func() error { return coll.FindOne(ctx, bson.D{{Key: "a", Value: 2}}).Err() }, false},
		// MongoDB reads its record count; Folio counts by a scan, and
		// reports it.
		{"count of everything", func() error { _, err := coll.EstimatedDocumentCount(ctx); return err }, true},
		{"find", func() error { return coll.FindOne(ctx, bson.D{{Key: "b", Value: nil}}).Err() }, true},
		{"countDocuments", func() error { _, err := coll.CountDocuments(ctx, bson.D{{Key: "b", Value: 1}}); return err }, true},
		{"distinct", func() error { return coll.Distinct(ctx, "b", bson.D{}).Err() }, true},
		{"update", func() error {
			_, err := coll.UpdateMany(ctx, bson.D{{Key: "b", Value: nil}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: 3}}}})
			return err
		}, true},
		{"delete", func() error { _, err := coll.DeleteMany(ctx, bson.D{{Key: "b", Value: 7}}); return err }, true},
	}
	var want int64
	for _, st := range steps {
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.scan {
			want++
		}
		if total, non := scans(); total != want || non != want {
			t.Errorf("after %s: %d, %d; want %d", st.name, total, non, want)
		}
	}
	// A tailable cursor counts among the scans, not the non-tailable ones.
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetCursorType(options.Tailable))
	if err != nil {
		t.Fatal(err)
	}
	cur.Close(ctx)
	if total, non := scans(); total != want+1 || non != want {
		t.Errorf("after a tailable find: %d, %d; want %d, %d", total, non, want+1, want)
	}
	// The oplog has no index: every find of it is a scan.
	oplog := client.Database("local").Collection("oplog.rs")
	oplogScans := func() int64 {
		t.Helper()
		return collStatsOf(t, oplog, bson.D{{Key: "queryExecStats", Value: bson.D{}}}).Lookup("queryExecStats", "collectionScans", "total").Int64()
	}
	before := oplogScans()
	if err := oplog.FindOne(ctx, bson.D{}).Err(); err != nil {
		t.Fatal(err)
	}
	if got := oplogScans(); got != before+1 {
		t.Errorf("oplog scans %d after a find, %d before", got, before)
	}
	_, err = db.Collection("noscans").Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "queryExecStats", Value: bson.D{}}}}}})
	requireCode(t, err, 26, "NamespaceNotFound")
	_, err = coll.Aggregate(ctx, bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "queryExecStats", Value: 1}}}}})
	requireCode(t, err, 14, "TypeMismatch")
}

// TestLogLevelAndTTLParameters: logLevel 1 lets debug lines into the log
// (getLog shows them) and 0 stops them again; ttlMonitorSleepSecs makes
// the TTL monitor run that often, and ttlMonitorEnabled: false stops it
// deleting.
func TestLogLevelAndTTLParameters(t *testing.T) {
	cfg := defaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	in := startInstance(t, cfg)
	client := connect(t, in)
	ctx := context.Background()
	admin := client.Database("admin")
	set := func(name string, v any) bson.Raw {
		t.Helper()
		raw, err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: v}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	debugLines := func() int {
		t.Helper()
		raw, err := admin.RunCommand(ctx, bson.D{{Key: "getLog", Value: "global"}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		lines, _ := raw.Lookup("log").Array().Values()
		n := 0
		for _, l := range lines {
			if strings.Contains(l.StringValue(), `"level":"DEBUG"`) {
				n++
			}
		}
		return n
	}
	// A connection's end is logged at debug level.
	churn := func() {
		t.Helper()
		c := dial(t, in)
		if err := c.Disconnect(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	churn()
	if n := debugLines(); n != 0 {
		t.Fatalf("%d debug lines at logLevel 0", n)
	}
	if was := set("logLevel", 1).Lookup("was"); was.Int32() != 0 {
		t.Errorf("logLevel was %v", was)
	}
	churn()
	after := debugLines()
	if after == 0 {
		t.Fatal("no debug line at logLevel 1")
	}
	set("logLevel", 0)
	churn()
	if n := debugLines(); n != after {
		t.Errorf("debug lines went from %d to %d at logLevel 0", after, n)
	}
	// a level above 5 stands for 5, the most verbose (logv2's
	// LogSeverity::Debug); a negative one, or one that is no int, is refused
	// naming the element (LogLevelServerParameter::set)
	set("logLevel", 6)
	if v := replyOf(t, client, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "logLevel", Value: 1}}).Lookup("logLevel"); v.Int32() != 5 {
		t.Errorf("logLevel %v after 6, want 5", v)
	}
	set("logLevel", 0)
	for _, tc := range []struct {
		v   any
		msg string
	}{
		{-1, "Invalid value for logLevel: logLevel: -1"},
		{"2", `Invalid value for logLevel: logLevel: "2"`},
		{math.NaN(), "Invalid value for logLevel: logLevel: nan.0"},
		{int64(1) << 31, "Invalid value for logLevel: logLevel: 2147483648"},
		{nil, "Invalid value for logLevel: logLevel: null"},
	} {
		requireError(t, admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: tc.v}}).Err(), 2, "BadValue", tc.msg)
	}
	// logComponentVerbosity takes a BSON object (set_param1.js)
	requireError(t, admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "logComponentVerbosity", Value: "not an object"}}).Err(),
		14, "TypeMismatch", `log component verbosity is not a BSON object: logComponentVerbosity: "not an object"`)
	// logComponentVerbosity (mongosh's db.setLogLevel) is the same
	// verbosity; Folio's log has no components to set apart
	set("logComponentVerbosity", bson.D{{Key: "verbosity", Value: 1}})
	churn()
	if n := debugLines(); n == after {
		t.Errorf("no new debug line at logComponentVerbosity 1")
	}
	if v := replyOf(t, client, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "logComponentVerbosity", Value: 1}}).Lookup("logComponentVerbosity"); v.String() != `{"verbosity": {"$numberInt":"1"}}` {
		t.Errorf("logComponentVerbosity %v", v)
	}
	set("logComponentVerbosity", bson.D{{Key: "verbosity", Value: 0}})
	if v := replyOf(t, client, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "logLevel", Value: 1}}).Lookup("logLevel"); v.Int32() != 0 {
		t.Errorf("logLevel %v after logComponentVerbosity 0", v)
	}
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "logComponentVerbosity", Value: bson.D{{Key: "query", Value: bson.D{{Key: "verbosity", Value: 1}}}}}}).Err(), 238, "NotImplemented")
	// a negative verbosity clears the default component's to 0, where
	// logLevel refuses one; NaN is no integer (set_param1.js)
	set("logComponentVerbosity", bson.D{{Key: "verbosity", Value: 2}})
	set("logComponentVerbosity", bson.D{{Key: "verbosity", Value: -1}})
	if v := replyOf(t, client, "admin", bson.D{{Key: "getParameter", Value: 1}, {Key: "logLevel", Value: 1}}).Lookup("logLevel"); v.Int32() != 0 {
		t.Errorf("logLevel %v after logComponentVerbosity -1", v)
	}
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: -1}}).Err(), 2, "BadValue")
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "logLevel", Value: math.NaN()}}).Err(), 2, "BadValue")
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "logComponentVerbosity", Value: bson.D{{Key: "verbosity", Value: math.NaN()}}}}).Err(), 2, "BadValue")
	requireCode(t, admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "logComponentVerbosity", Value: bson.D{{Key: "verbosity", Value: math.Inf(-1)}}}}).Err(), 2, "BadValue")

	coll := client.Database(testDB).Collection("ttl_param")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "at", Value: 1}}, Options: options.Index().SetExpireAfterSeconds(0)}); err != nil {
		t.Fatal(err)
	}
	old := bson.D{{Key: "at", Value: time.Now().Add(-time.Hour)}}
	gone := func(within time.Duration) bool {
		for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if n, err := coll.CountDocuments(ctx, bson.D{}); err == nil && n == 0 {
				return true
			}
		}
		return false
	}
	set("ttlMonitorEnabled", false)
	if was := set("ttlMonitorSleepSecs", 1).Lookup("was"); was.Int32() != 60 {
		t.Errorf("ttlMonitorSleepSecs was %v", was)
	}
	if _, err := coll.InsertOne(ctx, old); err != nil {
		t.Fatal(err)
	}
	// The monitor passes every second now, deleting nothing while
	// disabled.
	if gone(2500 * time.Millisecond) {
		t.Fatal("the monitor deleted while disabled")
	}
	set("ttlMonitorEnabled", true)
	if !gone(10 * time.Second) {
		t.Error("the expired document stayed with ttlMonitorSleepSecs 1")
	}
}

// TestQuietParameter: quiet is MongoDB's quiet logging, settable at
// runtime (setParameter) and at startup (Config.Quiet, which -quiet and
// systemLog.quiet set, or the configuration file's setParameter): while
// it holds, no connection accepted or ended is logged, as mongod logs
// none (ServiceEntryPointImpl::startSession, onClientDisconnect).
func TestQuietParameter(t *testing.T) {
	var logBuf lockedBuffer
	cfg := defaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.LogLevel = slog.LevelDebug // where Folio logs connections
	in := startInstance(t, cfg)
	admin := connect(t, in).Database("admin")
	connectOnce := func() {
		t.Helper()
		c := dial(t, in)
		if err := c.Ping(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Disconnect(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	count := func(what string) int { return strings.Count(logBuf.String(), what) }
	waitFor := func(what string, n int) {
		t.Helper()
		for range 200 {
			if count(what) >= n {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("%d %q lines, want %d:\n%s", count(what), what, n, logBuf.String())
	}
	connectOnce()
	waitFor("Connection ended", 1)
	raw, err := admin.RunCommand(context.Background(), bson.D{{Key: "setParameter", Value: 1}, {Key: "quiet", Value: true}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if was := raw.Lookup("was"); was.Type != bson.TypeBoolean || was.Boolean() {
		t.Errorf("was %v, want false", was)
	}
	accepted, ended := count("Connection accepted"), count("Connection ended")
	connectOnce()
	time.Sleep(100 * time.Millisecond)
	if count("Connection accepted") != accepted || count("Connection ended") != ended {
		t.Errorf("connections logged while quiet:\n%s", logBuf.String())
	}
	raw, err = admin.RunCommand(context.Background(), bson.D{{Key: "getParameter", Value: 1}, {Key: "quiet", Value: 1}}).Raw()
	if err != nil || !raw.Lookup("quiet").Boolean() {
		t.Fatalf("getParameter quiet: %s %v", raw, err)
	}
	if _, err := admin.RunCommand(context.Background(), bson.D{{Key: "setParameter", Value: 1}, {Key: "quiet", Value: 0}}).Raw(); err != nil {
		t.Fatal(err)
	}
	connectOnce()
	waitFor("Connection ended", ended+1)

	// at startup: the flag's field (reported by getCmdLineOpts as
	// mongod's --quiet), or a setParameter of the configuration file
	for _, c := range []instance.Config{{Quiet: true}, {Parameters: bson.D{{Key: "quiet", Value: true}}}} {
		c.Addr, c.InMemory = "127.0.0.1:0", true
		cl := connect(t, startInstance(t, c))
		raw, err := cl.Database("admin").RunCommand(context.Background(), bson.D{{Key: "getParameter", Value: 1}, {Key: "quiet", Value: 1}}).Raw()
		if err != nil || !raw.Lookup("quiet").Boolean() {
			t.Errorf("%+v: getParameter quiet: %s %v", c, raw, err)
		}
		opts, err := cl.Database("admin").RunCommand(context.Background(), bson.D{{Key: "getCmdLineOpts", Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := opts.Lookup("parsed", "systemLog").String(), `{"quiet": true}`; c.Quiet && got != want {
			t.Errorf("getCmdLineOpts parsed.systemLog %s, want %s", got, want)
		}
	}
}
