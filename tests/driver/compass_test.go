package driver_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestCompassCommands runs what MongoDB Compass sends when it connects
// and opens a collection's documents, schema, explain and indexes tabs,
// and checks the fields it reads from each reply.
func TestCompassCommands(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database("compass")
	coll := db.Collection("c")
	for i := range 20 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 3}, {Key: "s", Value: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "a", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	agg := func(stage bson.D) bson.D {
		return bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{stage}}, {Key: "cursor", Value: bson.D{}}}
	}
	for _, tc := range []struct {
		name  string
		db    string
		cmd   bson.D
		paths [][]string // fields Compass reads
	}{
		{"hello", "admin", bson.D{{Key: "hello", Value: 1}}, [][]string{{"maxWireVersion"}, {"isWritablePrimary"}}},
		{"buildInfo", "admin", bson.D{{Key: "buildInfo", Value: 1}}, [][]string{{"version"}, {"versionArray"}, {"modules"}}},
		{"getCmdLineOpts", "admin", bson.D{{Key: "getCmdLineOpts", Value: 1}}, [][]string{{"argv"}, {"parsed"}}},
		{"hostInfo", "admin", bson.D{{Key: "hostInfo", Value: 1}}, [][]string{{"system", "hostname"}, {"system", "numCores"}, {"system", "memSizeMB"}, {"os", "type"}, {"os", "name"}, {"os", "version"}}},
		{"connectionStatus", "admin", bson.D{{Key: "connectionStatus", Value: 1}, {Key: "showPrivileges", Value: true}}, [][]string{{"authInfo", "authenticatedUsers"}}},
		{"listDatabases", "admin", bson.D{{Key: "listDatabases", Value: 1}, {Key: "authorizedDatabases", Value: true}, {Key: "nameOnly", Value: false}}, [][]string{{"databases", "0", "name"}, {"databases", "0", "sizeOnDisk"}, {"totalSize"}}},
		{"dbStats", "compass", bson.D{{Key: "dbStats", Value: 1}}, [][]string{{"collections"}, {"objects"}, {"dataSize"}, {"indexes"}}},
		{"listCollections", "compass", bson.D{{Key: "listCollections", Value: 1}, {Key: "authorizedCollections", Value: true}, {Key: "nameOnly", Value: true}}, [][]string{{"cursor", "firstBatch", "0", "name"}}},
		{"$collStats", "compass", agg(bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}, {Key: "count", Value: bson.D{}}}}}),
			[][]string{{"cursor", "firstBatch", "0", "storageStats", "count"}, {"cursor", "firstBatch", "0", "storageStats", "size"}, {"cursor", "firstBatch", "0", "storageStats", "avgObjSize"},
				{"cursor", "firstBatch", "0", "storageStats", "nindexes"}, {"cursor", "firstBatch", "0", "storageStats", "totalIndexSize"}, {"cursor", "firstBatch", "0", "count"}}},
		{"$indexStats", "compass", agg(bson.D{{Key: "$indexStats", Value: bson.D{}}}), [][]string{{"cursor", "firstBatch", "0", "name"}, {"cursor", "firstBatch", "0", "accesses", "ops"}, {"cursor", "firstBatch", "0", "accesses", "since"}}},
		{"$sample", "compass", agg(bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: 5}}}}), [][]string{{"cursor", "firstBatch", "4", "_id"}}},
		{"listIndexes", "compass", bson.D{{Key: "listIndexes", Value: "c"}}, [][]string{{"cursor", "firstBatch", "1", "key", "a"}}},
		{"explain", "compass", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: 1}}}}}, {Key: "verbosity", Value: "executionStats"}},
			[][]string{{"queryPlanner", "winningPlan", "inputStage", "stage"}, {"executionStats", "nReturned"}, {"executionStats", "totalKeysExamined"}, {"executionStats", "executionTimeMillis"}}},
		{"explain aggregate", "compass", bson.D{{Key: "explain", Value: agg(bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 1}}}})}, {Key: "verbosity", Value: "executionStats"}},
			[][]string{{"queryPlanner"}, {"executionStats", "nReturned"}}},
		{"serverStatus", "admin", bson.D{{Key: "serverStatus", Value: 1}}, [][]string{{"opcounters", "insert"}, {"connections", "current"}, {"network", "bytesIn"}, {"mem", "resident"}}},
		{"top", "admin", bson.D{{Key: "top", Value: 1}}, [][]string{{"totals", "compass.c", "queries", "count"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := client.Database(tc.db).RunCommand(ctx, tc.cmd).Raw()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.paths {
				if _, err := raw.LookupErr(p...); err != nil {
					t.Errorf("no %v in %s", p, raw)
				}
			}
		})
	}
	// $indexStats counts the find that used the index.
	indexStats := func() []bson.Raw {
		return aggregateAll(t, coll, mongo.Pipeline{{{Key: "$indexStats", Value: bson.D{}}}})
	}
	ops := map[string]int64{}
	for _, s := range indexStats() {
		ops[s.Lookup("name").StringValue()] = s.Lookup("accesses", "ops").AsInt64()
	}
	// a_1: the findOne (explains count none); _id_: nothing read by _id
	// yet.
	if ops["a_1"] < 1 || ops["_id_"] != 0 {
		t.Errorf("index accesses %v", ops)
	}
	if _, err := coll.Find(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range indexStats() {
		if s.Lookup("name").StringValue() == "_id_" && s.Lookup("accesses", "ops").AsInt64() != 1 {
			t.Errorf("_id_ after one find by _id: %s", s)
		}
	}
	// Hiding and unhiding an index resets its accesses and their start;
	// another index keeps its own.
	for _, hidden := range []bool{true, false} {
		before := time.Now()
		if err := db.RunCommand(ctx, bson.D{{Key: "collMod", Value: coll.Name()}, {Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "hidden", Value: hidden}}}}).Err(); err != nil {
			t.Fatal(err)
		}
		for _, s := range indexStats() {
			ops, since := s.Lookup("accesses", "ops").AsInt64(), s.Lookup("accesses", "since").Time()
			switch s.Lookup("name").StringValue() {
			case "a_1":
				if ops != 0 || since.Before(before.Truncate(time.Millisecond)) {
					t.Errorf("a_1 after collMod hidden %v: %s", hidden, s)
				}
			case "_id_":
				if ops != 1 {
					t.Errorf("_id_ after collMod of a_1: %s", s)
				}
			}
		}
		if _, err := coll.Find(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
}
