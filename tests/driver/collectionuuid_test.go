package driver_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// uuidCase is one command given a collectionUUID, and what MongoDB 7.0
// answers (checkCollectionUUIDMismatch and its callers; the jstests
// collection_uuid_*.js): ok, or a code with, for CollectionUUIDMismatch, the
// reply's expectedCollection and actualCollection (nil: null), at the top
// level or, for a write command, in each of its writeErrors.
type uuidCase struct {
	name string
	// cmd builds the command from the UUIDs of the collections of
	// setUpUUIDs ("coll", "other", "system.buckets.ts", "elsewhere"
	// in another database) and a UUID no collection has ("none").
	cmd      func(u map[string]bson.Binary) bson.D
	db       string // testDB when empty
	code     int
	expected string
	actual   any
	errmsg   string
	// writeErrors is the number of writeErrors a write command answers.
	writeErrors int
	// after checks the collections afterwards (nothing created, renamed
	// or dropped by a failed command).
	after func(t *testing.T, db *mongo.Database)
}

var uuidCases = []uuidCase{
	{name: "find own", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: u["coll"]}}
	}},
	{name: "find another's", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 361, expected: "coll", actual: "other"},
	{name: "find none's", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: u["none"]}}
	}, code: 361, expected: "coll", actual: nil},
	{name: "find another database's", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: u["elsewhere"]}}
	}, code: 361, expected: "coll", actual: nil},
	{name: "find missing collection", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "missing"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "missing", actual: "coll"},
	{name: "find missing database", db: "uuidnodb", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "coll", actual: nil},
	{name: "find view", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "view"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "view", actual: "coll"},
	{name: "find time series by its buckets' uuid", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "ts"}, {Key: "collectionUUID", Value: u["system.buckets.ts"]}}
	}, code: 361, expected: "ts", actual: "system.buckets.ts"},
	{name: "find the oplog", db: "local", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "oplog.rs"}, {Key: "limit", Value: 1}, {Key: "collectionUUID", Value: u["oplog.rs"]}}
	}},
	{name: "find the oplog by another uuid", db: "local", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "oplog.rs"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "oplog.rs", actual: nil},
	{name: "find null", cmd: func(map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: nil}}
	}},
	{name: "find string", cmd: func(map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: "NotAUUID"}}
	}, code: 14},
	{name: "find general binary", cmd: func(map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: bson.Binary{Data: make([]byte, 16)}}}
	}, code: 14, errmsg: "BSON field 'FindCommandRequest.collectionUUID' is the wrong binData type 'general', expected type 'UUID'"},
	{name: "find short uuid", cmd: func(map[string]bson.Binary) bson.D {
		return bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: bson.Binary{Subtype: 4, Data: make([]byte, 8)}}}
	}, code: 207},
	{name: "explain find", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "coll"}, {Key: "collectionUUID", Value: u["other"]}}}}
	}, code: 361, expected: "coll", actual: "other"},
	{name: "aggregate own", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "aggregate", Value: "coll"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "collectionUUID", Value: u["coll"]}}
	}},
	{name: "aggregate view", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "aggregate", Value: "view"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "view", actual: "coll"},
	{name: "aggregate checks only its own collection", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "aggregate", Value: "coll"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$unionWith", Value: "other"}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "collectionUUID", Value: u["coll"]}}
	}},
	{name: "aggregate collectionless", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$documents", Value: bson.A{}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 4928901},
	{name: "aggregate collectionless reading a collection", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{
			bson.D{{Key: "$documents", Value: bson.A{bson.D{}}}},
			bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "coll"}, {Key: "pipeline", Value: bson.A{}}, {Key: "as", Value: "x"}}}},
		}}, {Key: "cursor", Value: bson.D{}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "$cmd.aggregate", actual: "coll"},
	{name: "aggregate change stream of a cluster", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{{Key: "allChangesForCluster", Value: true}}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 4928900},
	{name: "aggregate change stream", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "aggregate", Value: "coll"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$changeStream", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 4928900},
	{name: "insert own", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "insert", Value: "coll"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 10}}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, after: wantDocs("coll", 3)},
	{name: "insert ordered mismatch", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "insert", Value: "coll"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 10}}, bson.D{{Key: "_id", Value: 11}}}}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 361, expected: "coll", actual: "other", writeErrors: 1, after: wantDocs("coll", 2)},
	{name: "insert unordered mismatch", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "insert", Value: "coll"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 10}}, bson.D{{Key: "_id", Value: 11}}}}, {Key: "ordered", Value: false}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 361, expected: "coll", actual: "other", writeErrors: 2, after: wantDocs("coll", 2)},
	{name: "insert checks its documents first", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "insert", Value: "coll"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: bson.A{1}}}, bson.D{{Key: "_id", Value: 11}}}}, {Key: "ordered", Value: false}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 53, writeErrors: 2, after: wantDocs("coll", 2)},
	{name: "insert creates no collection", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "insert", Value: "fresh"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "fresh", actual: "coll", writeErrors: 1, after: wantNoCollection("fresh")},
	{name: "insert into a view", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "insert", Value: "view"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "view", actual: "coll", writeErrors: 1},
	{name: "insert into an invalid namespace", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "insert", Value: "a$b"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 73},
	{name: "explain update", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "explain", Value: bson.D{{Key: "update", Value: "coll"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}}}}, {Key: "collectionUUID", Value: u["other"]}}}}
	}, code: 361, expected: "coll", actual: "other"},
	{name: "update own", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "update", Value: "coll"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "multi", Value: true}}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}},
	{name: "update upsert creates no collection", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "update", Value: "fresh"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "fresh", actual: "coll", writeErrors: 1, after: wantNoCollection("fresh")},
	{name: "delete mismatch", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "delete", Value: "coll"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}, {Key: "collectionUUID", Value: u["none"]}}
	}, code: 361, expected: "coll", actual: nil, writeErrors: 1, after: wantDocs("coll", 2)},
	{name: "createIndexes own", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "createIndexes", Value: "coll"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "name", Value: "x_1"}}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}},
	{name: "createIndexes checks its specs first", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "createIndexes", Value: "coll"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "x", Value: "nope"}}}, {Key: "name", Value: "x_nope"}}}}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 67},
	{name: "createIndexes creates no collection", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "createIndexes", Value: "fresh"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "name", Value: "x_1"}}}}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "fresh", actual: "coll", after: wantNoCollection("fresh")},
	{name: "dropIndexes of a missing index", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "dropIndexes", Value: "coll"}, {Key: "index", Value: "nope"}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 361, expected: "coll", actual: "other"},
	{name: "collMod own", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "collMod", Value: "coll"}, {Key: "validationLevel", Value: "moderate"}, {Key: "collectionUUID", Value: u["coll"]}}
	}},
	{name: "collMod view", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "collMod", Value: "view"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "view", actual: "coll"},
	{name: "drop missing collection", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "drop", Value: "missing"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "missing", actual: "coll"},
	{name: "drop missing database", db: "uuidnodb", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "drop", Value: "coll"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "coll", actual: nil, errmsg: "Database does not exist"},
	{name: "drop view", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "drop", Value: "view"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "view", actual: "coll", after: wantCollection("view")},
	{name: "drop time series", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "drop", Value: "ts"}, {Key: "collectionUUID", Value: u["system.buckets.ts"]}}
	}, code: 72, after: wantCollection("ts")},
	{name: "drop time series by another uuid", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "drop", Value: "ts"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 361, expected: "system.buckets.ts", actual: "coll", after: wantCollection("ts")},
	{name: "drop own", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "drop", Value: "other"}, {Key: "collectionUUID", Value: u["other"]}}
	}, after: wantNoCollection("other")},
	{name: "rename mismatch", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "renameCollection", Value: testDB + ".coll"}, {Key: "to", Value: testDB + ".renamed"}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 361, expected: "coll", actual: "other", after: wantCollection("coll")},
	{name: "rename to itself", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "renameCollection", Value: testDB + ".coll"}, {Key: "to", Value: testDB + ".coll"}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 20},
	{name: "rename to an invalid name", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "renameCollection", Value: testDB + ".coll"}, {Key: "to", Value: testDB + ".system.x"}, {Key: "collectionUUID", Value: u["other"]}}
	}, code: 20},
	{name: "rename a missing collection to itself", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "renameCollection", Value: testDB + ".missing"}, {Key: "to", Value: testDB + ".missing"}}
	}, code: 20},
	{name: "rename between databases", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "renameCollection", Value: testDB + ".coll"}, {Key: "to", Value: "uuidnodb.renamed"}, {Key: "collectionUUID", Value: u["coll"]}}
	}, code: 72},
	{name: "rename over a target of another uuid", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "renameCollection", Value: testDB + ".coll"}, {Key: "to", Value: testDB + ".other"}, {Key: "dropTarget", Value: u["coll"]}}
	}, code: 361, expected: "other", actual: "coll", after: wantDocs("coll", 2)},
	{name: "rename with both uuids", db: "admin", cmd: func(u map[string]bson.Binary) bson.D {
		return bson.D{{Key: "renameCollection", Value: testDB + ".coll"}, {Key: "to", Value: testDB + ".other"}, {Key: "collectionUUID", Value: u["coll"]}, {Key: "dropTarget", Value: u["other"]}}
	}, after: wantDocs("other", 2)},
}

// wantDocs checks that name holds n documents.
func wantDocs(name string, n int64) func(*testing.T, *mongo.Database) {
	return func(t *testing.T, db *mongo.Database) {
		if got, err := db.Collection(name).CountDocuments(context.Background(), bson.D{}); err != nil || got != n {
			t.Errorf("%s holds %d documents (%v), want %d", name, got, err, n)
		}
	}
}

// wantCollection and wantNoCollection check whether name exists.
func wantCollection(name string) func(*testing.T, *mongo.Database) {
	return func(t *testing.T, db *mongo.Database) {
		if names, _ := db.ListCollectionNames(context.Background(), bson.D{}); !slices.Contains(names, name) {
			t.Errorf("%s is gone: %v", name, names)
		}
	}
}

func wantNoCollection(name string) func(*testing.T, *mongo.Database) {
	return func(t *testing.T, db *mongo.Database) {
		if names, _ := db.ListCollectionNames(context.Background(), bson.D{}); slices.Contains(names, name) {
			t.Errorf("%s was created: %v", name, names)
		}
	}
}

// setUpUUIDs makes coll (2 documents), other (1), the view view on coll,
// the time series collection ts and uuidelsewhere.elsewhere, and returns
// their UUIDs by name, with "none" a UUID none has.
func setUpUUIDs(t *testing.T, client *mongo.Client) map[string]bson.Binary {
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		db.Collection("coll").Drop(ctx),
		db.CreateCollection(ctx, "ts", options.CreateCollection().SetTimeSeriesOptions(options.TimeSeries().SetTimeField("t"))),
		db.CreateView(ctx, "view", "coll", bson.A{}),
		client.Database("uuidelsewhere").CreateCollection(ctx, "elsewhere"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	seed(t, db.Collection("coll"), []bson.Raw{mustRaw(t, bson.D{{Key: "_id", Value: 1}}), mustRaw(t, bson.D{{Key: "_id", Value: 2}})})
	seed(t, db.Collection("other"), []bson.Raw{mustRaw(t, bson.D{{Key: "_id", Value: 1}})})
	u := map[string]bson.Binary{"none": {Subtype: 4, Data: []byte("0123456789abcdef")}}
	for _, d := range []*mongo.Database{db, client.Database("uuidelsewhere"), client.Database("local")} {
		specs, err := d.ListCollectionSpecifications(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range specs {
			if s.UUID != nil {
				u[s.Name] = *s.UUID
			}
		}
	}
	// The buckets collection is not listed; its UUID is in the catalog.
	var res struct {
		Cursor struct {
			FirstBatch []struct {
				Name string `bson:"name"`
				Info struct {
					UUID bson.Binary `bson:"uuid"`
				} `bson:"info"`
			} `bson:"firstBatch"`
		} `bson:"cursor"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: bson.D{{Key: "name", Value: "system.buckets.ts"}}}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cursor.FirstBatch {
		u[c.Name] = c.Info.UUID
	}
	for _, name := range []string{"coll", "other", "elsewhere", "system.buckets.ts", "oplog.rs"} {
		if len(u[name].Data) != 16 {
			t.Fatalf("no UUID for %s: %v", name, u)
		}
	}
	return u
}

// TestCollectionUUID runs uuidCases, each on fresh collections.
func TestCollectionUUID(t *testing.T) {
	client, _ := startServer(t)
	for _, tc := range uuidCases {
		t.Run(tc.name, func(t *testing.T) {
			u := setUpUUIDs(t, client)
			name := tc.db
			if name == "" {
				name = testDB
			}
			reply := commandReply(t, client.Database(name), tc.cmd(u))
			got := reply
			if werrs, ok := reply.Lookup("writeErrors").ArrayOK(); ok {
				vals, _ := werrs.Values()
				if len(vals) != tc.writeErrors {
					t.Errorf("%d writeErrors, want %d: %v", len(vals), tc.writeErrors, reply)
				}
				if n := reply.Lookup("n").Int32(); n != 0 {
					t.Errorf("n %d, want 0", n)
				}
				got = vals[0].Document()
			} else if tc.writeErrors > 0 {
				t.Errorf("no writeErrors: %v", reply)
			}
			code, _ := got.Lookup("code").Int32OK()
			if int(code) != tc.code {
				t.Fatalf("code %d, want %d: %v", code, tc.code, reply)
			}
			if tc.errmsg != "" {
				if msg, _ := got.Lookup("errmsg").StringValueOK(); msg != tc.errmsg {
					t.Errorf("errmsg %q, want %q", msg, tc.errmsg)
				}
			}
			if tc.code == 361 {
				if name == "admin" { // renameCollection's namespaces
					name = testDB
				}
				checkUUIDMismatch(t, got, name, tc)
			}
			if tc.after != nil {
				tc.after(t, client.Database(testDB))
			}
		})
	}
}

// commandReply runs cmd and returns its reply, failed or not.
func commandReply(t *testing.T, db *mongo.Database, cmd bson.D) bson.Raw {
	t.Helper()
	reply, err := db.RunCommand(context.Background(), cmd).Raw()
	var ce mongo.CommandError
	var we mongo.WriteException
	switch {
	case errors.As(err, &ce):
		return ce.Raw
	case errors.As(err, &we):
		return we.Raw
	case err != nil:
		t.Fatal(err)
	}
	return reply
}

// checkUUIDMismatch checks a CollectionUUIDMismatch's extra fields and
// their order (CollectionUUIDMismatchInfo::serialize), after errmsg.
func checkUUIDMismatch(t *testing.T, got bson.Raw, db string, tc uuidCase) {
	t.Helper()
	elems, _ := got.Elements()
	var keys []string
	for _, e := range elems {
		keys = append(keys, e.Key())
	}
	i := slices.Index(keys, "db")
	if i < 0 || !slices.Equal(keys[i:min(i+4, len(keys))], []string{"db", "collectionUUID", "expectedCollection", "actualCollection"}) || !slices.Contains(keys[:i], "errmsg") {
		t.Errorf("fields %v", keys)
	}
	if s, _ := got.Lookup("db").StringValueOK(); s != db {
		t.Errorf("db %q, want %q", s, db)
	}
	if s, _ := got.Lookup("expectedCollection").StringValueOK(); s != tc.expected {
		t.Errorf("expectedCollection %q, want %q", s, tc.expected)
	}
	actual := got.Lookup("actualCollection")
	switch want := tc.actual.(type) {
	case nil:
		if actual.Type != bson.TypeNull {
			t.Errorf("actualCollection %v, want null", actual)
		}
	case string:
		if s, _ := actual.StringValueOK(); s != want {
			t.Errorf("actualCollection %v, want %q", actual, want)
		}
	}
	if st, data, ok := got.Lookup("collectionUUID").BinaryOK(); !ok || st != 4 || len(data) != 16 {
		t.Errorf("collectionUUID %v", got.Lookup("collectionUUID"))
	}
}

// TestCollectionUUIDRetriedWrite: a retried statement that ran is answered
// from its session's record before the collection is looked at, so a
// rename since does not fail it; one that did not run fails with the
// mismatch.
func TestCollectionUUIDRetriedWrite(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	db := client.Database(testDB)
	u := setUpUUIDs(t, client)
	insert := func(ids ...int) bson.D {
		var docs bson.A
		for _, id := range ids {
			docs = append(docs, bson.D{{Key: "_id", Value: id}})
		}
		return inSession(bson.D{{Key: "insert", Value: "coll"}, {Key: "documents", Value: docs}, {Key: "collectionUUID", Value: u["coll"]}}, lsidFor("uuidretry-insert"), 1)
	}
	update := inSession(bson.D{{Key: "update", Value: "coll"}, {Key: "updates", Value: bson.A{
		bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}},
	}}, {Key: "collectionUUID", Value: u["coll"]}}, lsidFor("uuidretry-update"), 1)
	if n := mustRunRaw(t, db, insert(10)).Lookup("n").Int32(); n != 1 {
		t.Fatalf("insert: n %d", n)
	}
	if n := mustRunRaw(t, db, update).Lookup("nModified").Int32(); n != 1 {
		t.Fatalf("update: nModified %d", n)
	}
	ctx := context.Background()
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: testDB + ".coll"}, {Key: "to", Value: testDB + ".moved"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "coll"); err != nil {
		t.Fatal(err)
	}
	if reply := mustRunRaw(t, db, update); reply.Lookup("nModified").Int32() != 1 || reply.Lookup("writeErrors").Type != 0 {
		t.Errorf("retried update: %v", reply)
	}
	// Statement 0 ran; statement 1 did not, and fails.
	reply := commandReply(t, db, insert(10, 11))
	werr, _ := reply.Lookup("writeErrors", "0").DocumentOK()
	if reply.Lookup("n").Int32() != 1 || werr.Lookup("index").Int32() != 1 || werr.Lookup("code").Int32() != 361 || werr.Lookup("actualCollection").StringValue() != "moved" {
		t.Errorf("retried insert: %v", reply)
	}
}
