package driver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestCommandErrors proves malformed commands fail with MongoDB's error
// codes and code names.
func TestCommandErrors(t *testing.T) {
	tests := []struct {
		name     string
		db       string
		cmd      bson.D
		code     int
		codeName string
	}{
		{"unknown command", testDB, bson.D{{Key: "notACommand", Value: 1}}, 59, "CommandNotFound"},
		// maxTimeMS as a generic argument, and as aggregate and getMore
		// declare it (an IDL safeInt64, aggregate's at least 0)
		{"find maxTimeMS a string", testDB, bson.D{{Key: "find", Value: "c"}, {Key: "maxTimeMS", Value: "1"}}, 2, "BadValue"},
		{"aggregate maxTimeMS a string", testDB, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: "1"}}, 14, "TypeMismatch"},
		{"aggregate maxTimeMS negative", testDB, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: -1}}, 51024, "Location51024"},
		{"getMore maxTimeMS a document", testDB, bson.D{{Key: "getMore", Value: int64(1)}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: bson.D{}}}, 14, "TypeMismatch"},
		{"getMore maxTimeMS negative", testDB, bson.D{{Key: "getMore", Value: int64(1)}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: -1}}, 2, "BadValue"},
		{"find filter wrong type", testDB, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: int32(1)}}, 14, "TypeMismatch"},
		{"find sort wrong type", testDB, bson.D{{Key: "find", Value: "c"}, {Key: "sort", Value: "x"}}, 14, "TypeMismatch"},
		// exchange is a field of aggregate (aggregate_command.idl), not
		// an unknown one; Folio has no exchange producers
		{"aggregate exchange", testDB, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "exchange", Value: bson.D{{Key: "policy", Value: "broadcast"}, {Key: "consumers", Value: int32(10)}}}}, 238, "NotImplemented"},
		{"aggregate exchange wrong type", testDB, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "exchange", Value: 1}}, 14, "TypeMismatch"},
		// the namespace and the mongos-only fields as
		// aggregation_request_helper reads them (parseNs, validate)
		{"aggregate of a bool", testDB, bson.D{{Key: "aggregate", Value: true}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}, 14, "TypeMismatch"},
		{"aggregate of 2", testDB, bson.D{{Key: "aggregate", Value: 2}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}, 9, "FailedToParse"},
		{"aggregate needsMerge without fromMongos", testDB, bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "needsMerge", Value: false}}, 9, "FailedToParse"},
		{"find unknown field", testDB, bson.D{{Key: "find", Value: "c"}, {Key: "noSuchOption", Value: 1}}, 40415, "Location40415"},
		{"find empty collection name", testDB, bson.D{{Key: "find", Value: ""}}, 73, "InvalidNamespace"},
		{"insert empty collection name", testDB, bson.D{{Key: "insert", Value: ""}, {Key: "documents", Value: bson.A{bson.D{}}}}, 73, "InvalidNamespace"},
		{"insert collection name with $", testDB, bson.D{{Key: "insert", Value: "a$b"}, {Key: "documents", Value: bson.A{bson.D{}}}}, 73, "InvalidNamespace"},
		{"create collection name with $", testDB, bson.D{{Key: "create", Value: "a$b"}}, 73, "InvalidNamespace"},
		{"create empty collection name", testDB, bson.D{{Key: "create", Value: ""}}, 73, "InvalidNamespace"},
		{"database name with space", "a b", bson.D{{Key: "find", Value: "c"}}, 73, "InvalidNamespace"},
		{"database name with dot", "a.b", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}, 73, "InvalidNamespace"},
		{"database name with $", "a$b", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}, 73, "InvalidNamespace"},
		{"unknown read concern level", testDB, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "eventual"}}}}, 9, "FailedToParse"},
		{"update pipeline with an unknown stage", testDB, bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.A{bson.D{{Key: "$invalidOperator", Value: true}}}}}}}}, 40324, "Location40324"},
		{"dropDatabase of 0 drops nothing", testDB, bson.D{{Key: "dropDatabase", Value: 0}}, 5255100, "Location5255100"},
		{"dropDatabase of a string", testDB, bson.D{{Key: "dropDatabase", Value: "1"}}, 14, "TypeMismatch"},
		{"dropDatabase of admin, which holds the users", "admin", bson.D{{Key: "dropDatabase", Value: 1}}, 20, "IllegalOperation"},
		{"drop of a name with a NUL", testDB, bson.D{{Key: "drop", Value: "a\x00b"}}, 73, "InvalidNamespace"},
		{"drop of a name starting with a dot", testDB, bson.D{{Key: "drop", Value: ".a"}}, 73, "InvalidNamespace"},
		{"transaction that never started", testDB, bson.D{{Key: "find", Value: "c"}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}, 251, "NoSuchTransaction"},
	}
	client := connect(t, startInstance(t, replSetConfig()))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := client.Database(tt.db).RunCommand(t.Context(), tt.cmd).Err()
			requireCode(t, err, tt.code, tt.codeName)
		})
	}
	names, err := client.ListDatabaseNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"a b", "a.b", "a$b"} {
		if slices.Contains(names, bad) {
			t.Errorf("invalid database %q was created", bad)
		}
	}
}

// TestValidNamesWithDashes proves database and collection names with dashes
// are valid: documents are stored and found and the names are listed.
func TestValidNamesWithDashes(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database("stats-2011")
	coll := db.Collection("sites-nov")
	if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: "home"}, {Key: "hits", Value: int32(3)}}); err != nil {
		t.Fatal(err)
	}
	got, err := coll.FindOne(t.Context(), bson.D{{Key: "_id", Value: "home"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if hits, ok := got.Lookup("hits").Int32OK(); !ok || hits != 3 {
		t.Fatalf("found %v, want hits 3", got)
	}
	colls, err := db.ListCollectionNames(t.Context(), bson.D{})
	if err != nil || !slices.Equal(colls, []string{"sites-nov"}) {
		t.Fatalf("collections %v (%v), want [sites-nov]", colls, err)
	}
	dbs, err := client.ListDatabaseNames(t.Context(), bson.D{})
	if err != nil || !slices.Contains(dbs, "stats-2011") {
		t.Fatalf("databases %v (%v), want stats-2011 among them", dbs, err)
	}
}

// TestRenameCollectionErrors proves renameCollection refuses a missing
// source (26 NamespaceNotFound) and an existing target without dropTarget
// (48 NamespaceExists), leaving both collections untouched, and replaces
// the target with dropTarget.
func TestRenameCollectionErrors(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	for _, name := range []string{"src", "dst"} {
		if _, err := db.Collection(name).InsertOne(t.Context(), bson.D{{Key: "_id", Value: name}}); err != nil {
			t.Fatal(err)
		}
	}
	admin := client.Database("admin")
	rename := func(from, to string, extra ...bson.E) error {
		cmd := append(bson.D{{Key: "renameCollection", Value: testDB + "." + from}, {Key: "to", Value: testDB + "." + to}}, extra...)
		return admin.RunCommand(t.Context(), cmd).Err()
	}

	requireCode(t, rename("missing", "new"), 26, "NamespaceNotFound")
	requireCode(t, rename("src", "dst"), 48, "NamespaceExists")
	requireStoredIDs(t, db.Collection("src"), "src")
	requireStoredIDs(t, db.Collection("dst"), "dst")

	if err := rename("src", "dst", bson.E{Key: "dropTarget", Value: true}); err != nil {
		t.Fatal(err)
	}
	requireStoredIDs(t, db.Collection("dst"), "src")
	colls, err := db.ListCollectionNames(t.Context(), bson.D{})
	if err != nil || !slices.Equal(colls, []string{"dst"}) {
		t.Fatalf("collections %v (%v), want [dst]", colls, err)
	}

	// A view is not renamed, and not renamed over, even with dropTarget
	// (a collection beside a view of the same name would shadow it).
	if err := db.RunCommand(t.Context(), bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "dst"}, {Key: "pipeline", Value: bson.A{}}}).Err(); err != nil {
		t.Fatal(err)
	}
	requireCode(t, rename("v", "w"), 166, "CommandNotSupportedOnView")
	requireCode(t, rename("dst", "v"), 48, "NamespaceExists")
	requireCode(t, rename("dst", "v", bson.E{Key: "dropTarget", Value: true}), 48, "NamespaceExists")
	colls, err = db.ListCollectionNames(t.Context(), bson.D{{Key: "type", Value: "collection"}})
	if slices.Sort(colls); err != nil || !slices.Equal(colls, []string{"dst", "system.views"}) {
		t.Fatalf("collections %v (%v), want [dst system.views]", colls, err)
	}

	// Neither a database's views nor the oplog move, and nothing takes
	// their names.
	renameNS := func(from, to string) error {
		return admin.RunCommand(t.Context(), bson.D{{Key: "renameCollection", Value: from}, {Key: "to", Value: to}}).Err()
	}
	for _, tc := range [][2]string{
		{testDB + ".dst", testDB + ".system.views"},
		{testDB + ".system.views", testDB + ".views2"},
		{testDB + ".dst", "local.oplog.rs"},
		{testDB + ".dst", "local.oplog.foo"},
		{"local.oplog.rs", "local.oplog2"},
	} {
		if testAuth() && tc[0] == testDB+".system.views" {
			// root may not read a database's views: refused before
			// the rename looks at its names, as MongoDB's
			requireCode(t, renameNS(tc[0], tc[1]), 13, "Unauthorized")
			continue
		}
		requireCode(t, renameNS(tc[0], tc[1]), 20, "IllegalOperation")
	}
	requireStoredIDs(t, db.Collection("dst"), "src")
	if err := db.RunCommand(t.Context(), bson.D{{Key: "find", Value: "v"}}).Err(); err != nil {
		t.Fatalf("the view after refused renames: %v", err)
	}
}

// TestCreateExistingCollection proves create succeeds again with the same
// options but fails with 48 NamespaceExists when the options differ.
func TestCreateExistingCollection(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	create := bson.D{{Key: "create", Value: "c"}}
	if err := db.RunCommand(t.Context(), create).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(t.Context(), create).Err(); err != nil {
		t.Fatalf("create again with the same options: %v", err)
	}
	err := db.RunCommand(t.Context(), append(create, bson.E{Key: "validationLevel", Value: "moderate"})).Err()
	requireCode(t, err, 48, "NamespaceExists")
}

// requireStoredIDs fails unless coll holds exactly the documents with the
// given string _ids.
func requireStoredIDs(t *testing.T, coll *mongo.Collection, want ...string) {
	t.Helper()
	var got []string
	for _, d := range findAll(t, coll, bson.D{}) {
		got = append(got, d.Lookup("_id").StringValue())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds _ids %v, want %v", coll.Name(), got, want)
	}
}

// TestErrorResponses proves two error replies the unified CRUD spec tests
// check: an _id holding a '$'-prefixed field is refused with
// DollarPrefixedFieldName and nothing is stored, and $merge's
// whenMatched: fail reports the DuplicateKey with its keyPattern and
// keyValue.
func TestErrorResponses(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database(testDB)
	coll := db.Collection("errresp")

	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$a", Value: 1}}}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 {
		t.Fatalf("insert: %v, want one write error", err)
	}
	const msg = "_id fields may not contain '$'-prefixed fields: $a is not valid for storage."
	if got := we.WriteErrors[0]; got.Code != 52 || got.Message != msg {
		t.Fatalf("write error %d %q, want 52 %q", got.Code, got.Message, msg)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Fatalf("%d documents stored (%v), want none", n, err)
	}

	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(2)}, {Key: "x", Value: int32(0)}}); err != nil {
		t.Fatal(err)
	}
	_, err = db.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$documents", Value: bson.A{bson.D{{Key: "_id", Value: int32(2)}, {Key: "x", Value: int32(1)}}}}},
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: "errresp"}, {Key: "whenMatched", Value: "fail"}}}},
	})
	requireCode(t, err, 11000, "DuplicateKey")
	var ce mongo.CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("aggregate: %v, want a command error", err)
	}
	// run_aggregate's context for an error of the executor; the key is of
	// the on fields (_id), so $merge's context says the document matched
	const prefix = "PlanExecutor error during aggregation :: caused by :: $merge with whenMatched: fail found an existing document with the same values for the 'on' fields :: caused by :: E11000 duplicate key error collection: " + testDB + ".errresp index: _id_ dup key: { _id: 2 }"
	if ce.Message != prefix {
		t.Errorf("message %q, want %q", ce.Message, prefix)
	}
	for field, want := range map[string]bson.D{"keyPattern": {{Key: "_id", Value: int32(1)}}, "keyValue": {{Key: "_id", Value: int32(2)}}} {
		got, ok := ce.Raw.Lookup(field).DocumentOK()
		if !ok || !bytes.Equal(got, mustRaw(t, want)) {
			t.Errorf("%s %v, want %v (reply %v)", field, got, want, ce.Raw)
		}
	}
	var left bson.M
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: int32(2)}}).Decode(&left); err != nil || left["x"] != int32(0) {
		t.Errorf("target %v (%v), want x: 0 kept", left, err)
	}

	// A key of another unique index than the on fields' keeps the general
	// context (mode_fail_insert.js).
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: int32(1)}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	_, err = db.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$documents", Value: bson.A{bson.D{{Key: "_id", Value: int32(2)}, {Key: "x", Value: int32(5)}}}}},
		{{Key: "$merge", Value: bson.D{{Key: "into", Value: "errresp"}, {Key: "on", Value: "x"}, {Key: "whenMatched", Value: "fail"}}}},
	})
	requireCode(t, err, 11000, "DuplicateKey")
	const other = "PlanExecutor error during aggregation :: caused by :: $merge failed due to a DuplicateKey error :: caused by :: E11000 duplicate key error collection: " + testDB + ".errresp index: _id_ dup key: { _id: 2 }"
	if !errors.As(err, &ce) || ce.Message != other {
		t.Errorf("message %v, want %q", err, other)
	}
}

// TestDuplicateKeyUnderCollation: a unique index with a collation stores
// collation keys, which are not UTF-8; its duplicate key error shows them
// in hex, as MongoDB does (keyValue lowercase hex, hexEncoded saying which,
// the message "0x"-prefixed), with the index's collation, so that drivers
// can decode the reply.
func TestDuplicateKeyUnderCollation(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	coll := client.Database(testDB).Collection("dupcoll")
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "v", Value: 1}, {Key: "n", Value: 1}},
		Options: options.Index().SetUnique(true).SetCollation(&options.Collation{Locale: "en", Strength: 2})}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "v", Value: "hello"}, {Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(ctx, bson.D{{Key: "v", Value: "HELLO"}, {Key: "n", Value: 1}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("insert of a case variant: %v, want a DuplicateKey write error", err)
	}
	e := we.WriteErrors[0]
	kv := e.Raw.Lookup("keyValue").Document()
	v, ok := kv.Lookup("v").StringValueOK()
	if !ok || !utf8.ValidString(v) || strings.Trim(v, "0123456789abcdef") != "" {
		t.Errorf("keyValue %v: v is not lowercase hex", kv)
	}
	if n := kv.Lookup("n"); n.Type != bson.TypeInt32 || n.Int32() != 1 {
		t.Errorf("keyValue %v: n is not the int 1", kv)
	}
	if hex := e.Raw.Lookup("hexEncoded").String(); hex != "[true,false]" && hex != `[true, false]` {
		t.Errorf("hexEncoded %s, want [true, false]", hex)
	}
	if loc, _ := e.Raw.Lookup("collation", "locale").StringValueOK(); loc != "en" {
		t.Errorf("collation %v, want the index's", e.Raw.Lookup("collation"))
	}
	if !strings.Contains(e.Message, `collation: { locale: "en"`) || !strings.Contains(e.Message, `dup key: { v: "0x`+v+`", n: 1 }`) {
		t.Errorf("message %q", e.Message)
	}
}

// TestDuplicateKeyMessageCutsLongStrings: the duplicate key message shows
// a key string of 160 bytes or more by its first 150 bytes, cut inside a
// UTF-8 sequence if there is one, as MongoDB's BSONElement::toString does
// (the Node driver's tests expect that invalid UTF-8), while keyValue keeps
// the whole string.
func TestDuplicateKeyMessageCutsLongStrings(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	coll := client.Database(testDB).Collection("dupcut")
	id := strings.Repeat("\U0001F92A", 100)
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: id}})
	var we mongo.WriteException
	if !errors.As(err, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 11000 {
		t.Fatalf("second insert: %v, want a DuplicateKey write error", err)
	}
	e := we.WriteErrors[0]
	if want := `dup key: { _id: "` + id[:150] + `..." }`; !strings.HasSuffix(e.Message, want) || utf8.ValidString(e.Message) {
		t.Errorf("message %q, want it to end %q", e.Message, want)
	}
	if got, _ := e.Raw.Lookup("keyValue", "_id").StringValueOK(); got != id {
		t.Errorf("keyValue._id %q, want the whole key", got)
	}
}

// TestDropLocalOnReplicaSet: a replica set member refuses to drop the local
// database, which holds its oplog, as MongoDB does while replication is
// active, and the oplog stays readable.
func TestDropLocalOnReplicaSet(t *testing.T) {
	in := startInstance(t, instance.Config{Addr: "127.0.0.1:0", DBPath: t.TempDir(), ReplSetName: "rs"})
	client := connect(t, in)
	if _, err := client.Database(testDB).Collection("c").InsertOne(t.Context(), bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	err := client.Database("local").RunCommand(t.Context(), bson.D{{Key: "dropDatabase", Value: 1}}).Err()
	requireCode(t, err, 20, "IllegalOperation")
	if n, err := client.Database("local").Collection("oplog.rs").CountDocuments(t.Context(), bson.D{{Key: "ns", Value: testDB + ".c"}}); err != nil || n == 0 {
		t.Fatalf("oplog entries of %s.c: %d (%v)", testDB, n, err)
	}
}

// TestDatabaseNamesDifferingInCase: MongoDB refuses to create a database
// whose name differs from an existing one's only in case, by a write or a
// rename into it (DatabaseDifferCase); the existing one is unaffected.
func TestDatabaseNamesDifferingInCase(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	if _, err := client.Database("caseDB").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := client.Database("CASEDB").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 2}})
	requireCode(t, err, 13297, "DatabaseDifferCase")
	err = client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "caseDB.c"}, {Key: "to", Value: "casedb.d"}}).Err()
	requireCode(t, err, 13297, "DatabaseDifferCase")
	if _, err := client.Database("caseDB").Collection("d").InsertOne(ctx, bson.D{{Key: "x", Value: 3}}); err != nil {
		t.Fatalf("a second collection in the existing database: %v", err)
	}
	names, err := client.ListDatabaseNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: "^(?i)casedb$"}}}})
	if err != nil || len(names) != 1 || names[0] != "caseDB" {
		t.Fatalf("databases %v (%v), want only caseDB", names, err)
	}
}

// TestOplogNotShadowed proves no command makes a collection of the
// oplog's name beside the oplog: writes and index builds are refused, a
// create finds it exists, a drop refuses to drop it, and the oplog still
// reads and lists once.
func TestOplogNotShadowed(t *testing.T) {
	client := startReplSet(t)
	ctx := t.Context()
	local := client.Database("local")
	if _, err := client.Database(testDB).Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int
		name string
	}{
		{bson.D{{Key: "insert", Value: "oplog.rs"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}}, 238, "NotImplemented"},
		{bson.D{{Key: "update", Value: "oplog.rs"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "upsert", Value: true}}}}}, 238, "NotImplemented"},
		{bson.D{{Key: "delete", Value: "oplog.rs"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}}, 238, "NotImplemented"},
		{bson.D{{Key: "findAndModify", Value: "oplog.rs"}, {Key: "query", Value: bson.D{}}, {Key: "remove", Value: true}}, 238, "NotImplemented"},
		{bson.D{{Key: "createIndexes", Value: "oplog.rs"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a"}}}}}, 238, "NotImplemented"},
		{bson.D{{Key: "create", Value: "oplog.rs"}}, 48, "NamespaceExists"},
		{bson.D{{Key: "drop", Value: "oplog.rs"}}, 5255000, "Location5255000"},
	} {
		reply, err := local.RunCommand(ctx, tc.cmd).Raw()
		if err == nil {
			// a write command's refusal is its statement's write error
			code, _ := reply.Lookup("writeErrors", "0", "code").AsInt64OK()
			if int(code) != tc.code {
				t.Errorf("%v: reply %s, want code %d", tc.cmd[0].Key, reply, tc.code)
			}
			continue
		}
		requireCode(t, err, tc.code, tc.name)
	}
	names, err := local.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "oplog.rs"}})
	if err != nil || len(names) != 1 {
		t.Fatalf("local lists oplog.rs %d times (%v)", len(names), err)
	}
	n, err := local.Collection("oplog.rs").CountDocuments(ctx, bson.D{{Key: "ns", Value: testDB + ".c"}, {Key: "op", Value: "i"}})
	if err != nil || n != 1 {
		t.Fatalf("the oplog holds %d inserts of %s.c (%v)", n, testDB, err)
	}
}

// TestLargeWriteErrorMessages: once two write errors are reported, a
// later error's message over 1 MB is emptied, as MongoDB's generateError
// does, keeping its code and key; smaller messages stay. The messages are
// duplicate key errors of _ids with 100,000 fields: the message shows a
// document whole (only long strings are cut).
func TestLargeWriteErrorMessages(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV stores no key over 8 KiB, so no document has an _id of 1 MB there (TestKeyLimit)")
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("largeerrors")
	var docs []any
	for _, c := range "abcd" {
		id := bson.D{{Key: "which", Value: string(c)}}
		for i := range 100_000 {
			id = append(id, bson.E{Key: fmt.Sprintf("f%06d", i), Value: int32(1)})
		}
		docs = append(docs, bson.D{{Key: "_id", Value: id}})
	}
	docs[3] = bson.D{{Key: "_id", Value: "small"}}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	_, err := coll.InsertMany(t.Context(), docs, options.InsertMany().SetOrdered(false))
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || len(bwe.WriteErrors) != 4 {
		t.Fatalf("error %v, want four duplicate key errors", err)
	}
	for i, we := range bwe.WriteErrors {
		if we.Code != 11000 || (i == 2) != (we.Message == "") {
			t.Errorf("error %d: code %d, message of %d bytes", i, we.Code, len(we.Message))
		}
	}
}

// TestLanguageErrorMessages: projections, stages and expressions fail
// with MongoDB 7.0's codes and messages: find's projection (its positional
// projection's run-time errors after "Executor error during find command",
// sorted or not), $project and $unset (every error after "Invalid
// <stage>"), variable names, $group's fields and $collStats; a constant
// subexpression failing (once the whole pipeline has parsed, after
// "Failed to optimize pipeline", twice in a $facet's pipeline, which
// DocumentSourceFacet::optimize optimizes as a pipeline; find's $expr
// has none).
func TestLanguageErrorMessages(t *testing.T) {
	const middle = "As of 4.4, it's illegal to specify positional operator in the middle of a path.Positional projection may only be used at the end, " +
		"for example: a.b.$. If the query previously used a form like a.b.$.d, remove the parts following the '$' and the results will be equivalent."
	const dollar = "FieldPath field names may not start with '$'. Consider using $getField or $setField."
	absString := bson.D{{Key: "$abs", Value: "x"}}
	const absMsg = "$abs only supports numeric types, not string"
	tests := []struct {
		name       string
		filter     bson.D
		sort       bson.D
		projection bson.D
		pipeline   bson.A
		code       int32
		msg        string
	}{
		{name: "find positional element past the projected array", filter: bson.D{{Key: "v", Value: 42}}, projection: bson.D{{Key: "v.foo.$", Value: true}},
			code: 51247, msg: "Executor error during find command :: caused by :: positional operator '.$' element mismatch"},
		{name: "find positional without a matched element", filter: bson.D{}, projection: bson.D{{Key: "v.$", Value: 1}},
			code: 51246, msg: "Executor error during find command :: caused by :: positional operator '.$' couldn't find a matching element in the array"},
		{name: "sorted find positional without a matched element", filter: bson.D{}, sort: bson.D{{Key: "_id", Value: -1}}, projection: bson.D{{Key: "v.$", Value: 1}},
			code: 51246, msg: "Executor error during find command :: caused by :: positional operator '.$' couldn't find a matching element in the array"},
		{name: "find positional in the middle", filter: bson.D{}, projection: bson.D{{Key: "v.$.foo", Value: true}}, code: 31394, msg: middle},
		{name: "find positional twice", filter: bson.D{}, projection: bson.D{{Key: "v.$.foo.$", Value: true}}, code: 31394, msg: middle},
		{name: "find positional exclusion", filter: bson.D{{Key: "v", Value: 42}}, projection: bson.D{{Key: "v.$", Value: false}},
			code: 31395, msg: "positional projection cannot be used with exclusion"},
		{name: "find dollar alone", filter: bson.D{}, projection: bson.D{{Key: "$", Value: true}}, code: 16410, msg: dollar},
		{name: "find positional after an empty name", filter: bson.D{}, projection: bson.D{{Key: "v..$", Value: true}},
			code: 40353, msg: "FieldPath must not end with a '.'."},
		{name: "find unknown expression", filter: bson.D{}, projection: bson.D{{Key: "v", Value: bson.D{{Key: "$non-existent", Value: "foo"}}}},
			code: 31325, msg: "Unknown expression $non-existent"},
		{name: "project positional", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "v.$", Value: 1}}}}},
			code: 31324, msg: "Invalid $project :: caused by :: Cannot use positional projection in aggregation projection"},
		{name: "project positional exclusion", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "v.$", Value: false}}}}},
			code: 31324, msg: "Invalid $project :: caused by :: Cannot use positional projection in aggregation projection"},
		{name: "project positional in the middle", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "v.$.foo", Value: 1}}}}},
			code: 31394, msg: "Invalid $project :: caused by :: " + middle},
		{name: "project unknown expression", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "v", Value: bson.D{{Key: "$non-existent", Value: "foo"}}}}}}},
			code: 31325, msg: "Invalid $project :: caused by :: Unknown expression $non-existent"},
		{name: "project two operator names", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "v", Value: bson.D{{Key: "$type", Value: 42}, {Key: "$op", Value: 42}}}}}}},
			code: 16410, msg: "Invalid $project :: caused by :: " + dollar},
		{name: "project unknown expression inside one", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "v", Value: bson.D{{Key: "$type", Value: bson.D{{Key: "$non-existent", Value: "foo"}}}}}}}}},
			code: 168, msg: "Invalid $project :: caused by :: Unrecognized expression '$non-existent'"},
		{name: "project dollar as a field path", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "sum", Value: bson.D{{Key: "$sum", Value: "$"}}}}}}},
			code: 16872, msg: "Invalid $project :: caused by :: '$' by itself is not a valid FieldPath"},
		{name: "unset path ending with a dot", pipeline: bson.A{bson.D{{Key: "$unset", Value: "v."}}},
			code: 40353, msg: "Invalid $unset :: caused by :: FieldPath must not end with a '.'."},
		{name: "project path ending with a dot", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "v.", Value: 1}}}}},
			code: 40353, msg: "Invalid $project :: caused by :: FieldPath must not end with a '.'."},
		{name: "set path ending with a dot", pipeline: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "v.", Value: 1}}}}},
			code: 40353, msg: "Invalid $set :: caused by :: FieldPath must not end with a '.'."},
		{name: "project empty variable name", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "sum", Value: bson.D{{Key: "$sum", Value: "$$"}}}}}}},
			code: 9, msg: "Invalid $project :: caused by :: empty variable names are not allowed"},
		{name: "group _id of a variable named $", pipeline: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$$$"}}}}},
			code: 9, msg: "'$' starts with an invalid character for a user variable name"},
		{name: "find $expr variable named $s", filter: bson.D{{Key: "$expr", Value: "$$$s"}},
			code: 9, msg: "'$s' starts with an invalid character for a user variable name"},
		{name: "group field of an empty object", pipeline: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "v", Value: bson.D{}}}}}},
			code: 40234, msg: "The field 'v' must be an accumulator object"},
		{name: "group _id given twice", pipeline: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "_id", Value: 2}}}}},
			code: 15948, msg: "a group's _id may only be specified once"},
		{name: "count named _id", pipeline: bson.A{bson.D{{Key: "$count", Value: "_id"}}},
			code: 15948, msg: "a group's _id may only be specified once"},
		{name: "group object _id with a dotted name", pipeline: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "a.b", Value: "$v"}}}}}}},
			code: 16412, msg: "FieldPath field names may not contain '.'. Consider using $getField or $setField."},
		{name: "collStats null", pipeline: bson.A{bson.D{{Key: "$collStats", Value: nil}}},
			code: 5447000, msg: "$collStats must take a nested object but found: $collStats: null"},
		{name: "project constant failing to optimize", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "r", Value: absString}}}}},
			code: 28765, msg: "Failed to optimize pipeline :: caused by :: " + absMsg},
		{name: "group _id constant failing to optimize", pipeline: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: absString}}}}},
			code: 28765, msg: "Failed to optimize pipeline :: caused by :: " + absMsg},
		{name: "match $expr constant failing to optimize", pipeline: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: absString}}}}},
			code: 28765, msg: "Failed to optimize pipeline :: caused by :: " + absMsg},
		{name: "facet constant failing to optimize", pipeline: bson.A{bson.D{{Key: "$facet", Value: bson.D{{Key: "f", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "r", Value: absString}}}}}}}}}},
			code: 28765, msg: "Failed to optimize pipeline :: caused by :: Failed to optimize pipeline :: caused by :: " + absMsg},
		{name: "project parse error after a constant failing", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "r", Value: bson.D{{Key: "$add", Value: bson.A{absString, bson.D{{Key: "$bad", Value: 1}}}}}}}}}},
			code: 168, msg: "Invalid $project :: caused by :: Unrecognized expression '$bad'"},
		{name: "project field's parse error after a constant failing", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "r", Value: absString}, {Key: "q", Value: bson.D{{Key: "$toInt", Value: bson.A{1, 2}}}}}}}},
			code: 16020, msg: "Invalid $project :: caused by :: Expression $toInt takes exactly 1 arguments. 2 were passed in."},
		{name: "project constants failing twice", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "r", Value: absString}, {Key: "q", Value: bson.D{{Key: "$divide", Value: bson.A{1, 0}}}}}}}},
			code: 28765, msg: "Failed to optimize pipeline :: caused by :: " + absMsg},
		{name: "stage's parse error after a constant failing", pipeline: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "r", Value: absString}}}}, bson.D{{Key: "$limit", Value: -1}}},
			code: 5107201, msg: "invalid argument to $limit stage: Expected a non-negative number in: $limit: -1"},
		{name: "find $expr constant failing", filter: bson.D{{Key: "$expr", Value: absString}},
			code: 28765, msg: absMsg},
		{name: "find $expr parse error after a constant failing", filter: bson.D{{Key: "$expr", Value: bson.D{{Key: "$add", Value: bson.A{absString, bson.D{{Key: "$bad", Value: 1}}}}}}},
			code: 168, msg: "Unrecognized expression '$bad'"},
	}
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("projerrors")
	if _, err := coll.InsertMany(t.Context(), []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: 42}},
		bson.D{{Key: "_id", Value: 2}, {Key: "v", Value: bson.A{42}}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.pipeline != nil {
				_, err = coll.Aggregate(t.Context(), tc.pipeline)
			} else {
				opts := options.Find()
				if tc.projection != nil {
					opts.SetProjection(tc.projection)
				}
				if tc.sort != nil {
					opts.SetSort(tc.sort)
				}
				_, err = coll.Find(t.Context(), tc.filter, opts)
			}
			var ce mongo.CommandError
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Message != tc.msg {
				t.Fatalf("error %v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}

// TestFindAndModifyExecutorErrors: what findAndModify's execution raises
// (its update, its write) carries MongoDB's executor context; what its
// parse refuses does not.
func TestFindAndModifyExecutorErrors(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := context.Background()
	coll := db.Collection("fam_errors")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: "s"}}, bson.D{{Key: "_id", Value: 2}, {Key: "u", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "u", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		update bson.D
		code   int
		msg    string
	}{
		{"$inc of a string", bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: 1}}}}, 14,
			"Plan executor error during findAndModify :: caused by :: Cannot apply $inc to a value of non-numeric type."},
		{"a duplicate key", bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: 1}}}}, 11000,
			"Plan executor error during findAndModify :: caused by :: E11000 duplicate key error"},
		{"an unknown modifier", bson.D{{Key: "$nope", Value: bson.D{{Key: "v", Value: 1}}}}, 9, "Unknown modifier: $nope."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := db.RunCommand(ctx, bson.D{{Key: "findAndModify", Value: "fam_errors"}, {Key: "query", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "update", Value: tc.update}}).Err()
			requireCode(t, err, tc.code, "")
			var ce mongo.CommandError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, tc.msg) {
				t.Errorf("message %q, want it to start with %q", ce.Message, tc.msg)
			}
		})
	}
}

// TestInsertIntoDatabaseDifferingInCase: an insert whose implicit creation
// of its collection is refused (DatabaseDifferCase) answers ok with the
// refusal as each document's write error, as MongoDB creates the
// collection when it acquires it for a document (write_ops_exec.cpp
// insertBatchAndHandleErrors) and handleError makes the failure that
// document's; a document that cannot be inserted fails with its own error,
// and an ordered insert stops at the first.
func TestInsertIntoDatabaseDifferingInCase(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	if _, err := client.Database("caseIns").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	const msg = "db already exists with different case already have: [caseIns] trying to create [CASEINS]"
	docs := bson.A{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: bson.A{1}}}, bson.D{{Key: "_id", Value: 3}}}
	for _, tc := range []struct {
		ordered bool
		want    string
	}{
		{true, `[{"index": {"$numberInt":"0"},"code": {"$numberInt":"13297"},"errmsg": "` + msg + `"}]`},
		{false, `[{"index": {"$numberInt":"0"},"code": {"$numberInt":"13297"},"errmsg": "` + msg + `"},` +
			`{"index": {"$numberInt":"1"},"code": {"$numberInt":"53"},"errmsg": "The '_id' value cannot be of type array"},` +
			`{"index": {"$numberInt":"2"},"code": {"$numberInt":"13297"},"errmsg": "` + msg + `"}]`},
	} {
		raw, err := client.Database("CASEINS").RunCommand(ctx, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: docs}, {Key: "ordered", Value: tc.ordered}}).Raw()
		if _, ok := errors.AsType[mongo.WriteException](err); !ok {
			t.Fatalf("ordered %v: got %v, want write errors in an ok reply", tc.ordered, err)
		}
		if ok, n := raw.Lookup("ok").Double(), raw.Lookup("n").Int32(); ok != 1 || n != 0 {
			t.Errorf("ordered %v: ok %v n %d, want ok 1 n 0: %s", tc.ordered, ok, n, raw)
		}
		if got := raw.Lookup("writeErrors").String(); got != tc.want {
			t.Errorf("ordered %v: writeErrors\n%s\nwant\n%s", tc.ordered, got, tc.want)
		}
	}
	names, err := client.ListDatabaseNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: "^(?i)caseins$"}}}})
	if err != nil || len(names) != 1 || names[0] != "caseIns" {
		t.Fatalf("databases %v (%v), want only caseIns", names, err)
	}
}
