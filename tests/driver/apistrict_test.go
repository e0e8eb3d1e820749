package driver_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAPIStrict: with apiVersion "1" and apiStrict true, commands outside
// Stable API version 1 fail with APIStrictError (323), and so do the
// unstable fields of version 1 commands (find_command.idl,
// aggregate_command.idl, list_collections.idl, list_indexes.idl,
// getmore_command.idl) and the aggregation stages outside version 1,
// sub-pipelines included; without apiStrict they are not refused for it.
// https://www.mongodb.com/docs/v7.0/reference/stable-api/
func TestAPIStrict(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	if err := db.RunCommand(ctx, bson.D{{Key: "insert", Value: "api"}, {Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	// a view whose pipeline is outside version 1, created without apiStrict
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "api_unstable"}, {Key: "viewOn", Value: "api"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$indexStats", Value: bson.D{}}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	stage := func(name string, arg any) bson.D { return bson.D{{Key: name, Value: arg}} }
	agg := func(stages ...bson.D) bson.D {
		p := bson.A{}
		for _, s := range stages {
			p = append(p, s)
		}
		return bson.D{{Key: "aggregate", Value: "api"}, {Key: "pipeline", Value: p}, {Key: "cursor", Value: bson.D{}}}
	}
	find := func(extra ...bson.E) bson.D { return append(bson.D{{Key: "find", Value: "api"}}, extra...) }
	tests := []struct {
		name string
		cmd  bson.D
		msg  string // the APIStrictError's message; "" when the command runs
	}{
		{"find", find(bson.E{Key: "filter", Value: bson.D{}}, bson.E{Key: "limit", Value: 1}), ""},
		{"find returnKey", find(bson.E{Key: "returnKey", Value: false}), "BSON field 'FindCommandRequest.returnKey' is not allowed with apiStrict:true."},
		{"find showRecordId", find(bson.E{Key: "showRecordId", Value: true}), "BSON field 'FindCommandRequest.showRecordId' is not allowed with apiStrict:true."},
		{"find noCursorTimeout", find(bson.E{Key: "noCursorTimeout", Value: true}), "BSON field 'FindCommandRequest.noCursorTimeout' is not allowed with apiStrict:true."},
		{"find tailable", find(bson.E{Key: "tailable", Value: false}), "BSON field 'FindCommandRequest.tailable' is not allowed with apiStrict:true."},
		{"find min", find(bson.E{Key: "min", Value: bson.D{{Key: "a", Value: 1}}}), "BSON field 'FindCommandRequest.min' is not allowed with apiStrict:true."},
		{"aggregate", agg(stage("$match", bson.D{})), ""},
		{"aggregate explain", append(agg(), bson.E{Key: "explain", Value: true}), "BSON field 'aggregate.explain' is not allowed with apiStrict:true."},
		{"$currentOp", bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{stage("$currentOp", bson.D{})}}, {Key: "cursor", Value: bson.D{}}}, "$currentOp is not allowed with 'apiStrict: true' in API Version 1"},
		{"$indexStats", agg(stage("$indexStats", bson.D{})), "$indexStats is not allowed with 'apiStrict: true' in API Version 1"},
		{"$listSessions", agg(stage("$listSessions", bson.D{})), "$listSessions is not allowed with 'apiStrict: true' in API Version 1"},
		{"$planCacheStats", agg(stage("$planCacheStats", bson.D{})), "$planCacheStats is not allowed with 'apiStrict: true' in API Version 1"},
		{"$_internalInhibitOptimization", agg(stage("$_internalInhibitOptimization", bson.D{})), "$_internalInhibitOptimization is not allowed with 'apiStrict: true' in API Version 1"},
		{"$_internalApplyOplogUpdate", agg(stage("$_internalApplyOplogUpdate", bson.D{{Key: "oplogUpdate", Value: bson.D{{Key: "$v", Value: 2}, {Key: "diff", Value: bson.D{}}}}})), "$_internalApplyOplogUpdate is not allowed with 'apiStrict: true' in API Version 1"},
		{"$collStats count", agg(stage("$collStats", bson.D{{Key: "count", Value: bson.D{}}})), ""},
		// $setWindowFields, $graphLookup and $redact are in API version 1
		// (registered AllowedWithApiStrict::kAlways).
		{"$setWindowFields", agg(stage("$setWindowFields", bson.D{{Key: "output", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$count", Value: bson.D{}}}}}}})), ""},
		{"$graphLookup", agg(stage("$graphLookup", bson.D{{Key: "from", Value: "api"}, {Key: "startWith", Value: "$a"}, {Key: "connectFromField", Value: "a"}, {Key: "connectToField", Value: "a"}, {Key: "as", Value: "g"}})), ""},
		{"$redact", agg(stage("$redact", "$$KEEP")), ""},

		{"$collStats storageStats", agg(stage("$collStats", bson.D{{Key: "storageStats", Value: bson.D{}}})), "only the 'count' option to $collStats is supported in API Version 1"},
		{"$indexStats in $lookup", agg(stage("$lookup", bson.D{{Key: "from", Value: "api"}, {Key: "pipeline", Value: bson.A{stage("$indexStats", bson.D{})}}, {Key: "as", Value: "x"}})), "$indexStats is not allowed with 'apiStrict: true' in API Version 1"},
		{"$indexStats in $unionWith", agg(stage("$unionWith", bson.D{{Key: "coll", Value: "api"}, {Key: "pipeline", Value: bson.A{stage("$indexStats", bson.D{})}}})), "$indexStats is not allowed with 'apiStrict: true' in API Version 1"},
		{"$currentOp in $facet", agg(stage("$facet", bson.D{{Key: "f", Value: bson.A{stage("$currentOp", bson.D{})}}})), "$currentOp is not allowed with 'apiStrict: true' in API Version 1"},
		{"distinct", bson.D{{Key: "distinct", Value: "api"}, {Key: "key", Value: "a"}}, "Provided apiStrict:true, but the command distinct is not in API Version 1."},
		{"count", bson.D{{Key: "count", Value: "api"}}, ""},
		// list_collections.idl, list_indexes.idl, getmore_command.idl
		{"listCollections includePendingDrops", bson.D{{Key: "listCollections", Value: 1}, {Key: "includePendingDrops", Value: false}}, "BSON field 'listCollections.includePendingDrops' is not allowed with apiStrict:true."},
		{"listIndexes includeBuildUUIDs", bson.D{{Key: "listIndexes", Value: "api"}, {Key: "includeBuildUUIDs", Value: false}}, "BSON field 'listIndexes.includeBuildUUIDs' is not allowed with apiStrict:true."},
		{"listIndexes includeIndexBuildInfo", bson.D{{Key: "listIndexes", Value: "api"}, {Key: "includeIndexBuildInfo", Value: false}}, "BSON field 'listIndexes.includeIndexBuildInfo' is not allowed with apiStrict:true."},
		{"getMore term", bson.D{{Key: "getMore", Value: int64(1)}, {Key: "collection", Value: "api"}, {Key: "term", Value: int64(1)}}, "BSON field 'getMore.term' is not allowed with apiStrict:true."},
		{"getMore lastKnownCommittedOpTime", bson.D{{Key: "getMore", Value: int64(1)}, {Key: "collection", Value: "api"}, {Key: "lastKnownCommittedOpTime", Value: bson.D{{Key: "ts", Value: bson.Timestamp{}}, {Key: "t", Value: int64(1)}}}}, "BSON field 'getMore.lastKnownCommittedOpTime' is not allowed with apiStrict:true."},
		{"listCollections", bson.D{{Key: "listCollections", Value: 1}, {Key: "nameOnly", Value: true}}, ""},
		// isMaster is outside version 1, hello in it
		{"isMaster", bson.D{{Key: "isMaster", Value: 1}}, "Provided apiStrict:true, but the command isMaster is not in API Version 1."},
		{"ismaster", bson.D{{Key: "ismaster", Value: 1}}, "Provided apiStrict:true, but the command isMaster is not in API Version 1."},
		// writes on system.js (initializeAPIParameters); reads run
		{"insert on system.js", bson.D{{Key: "insert", Value: "system.js"}, {Key: "documents", Value: bson.A{bson.D{}}}}, "Provided apiStrict:true, but the command insert attempts to write to system.js"},
		{"update on system.js", bson.D{{Key: "update", Value: "system.js"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}}}}}, "Provided apiStrict:true, but the command update attempts to write to system.js"},
		{"delete on system.js", bson.D{{Key: "delete", Value: "system.js"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 1}}}}}, "Provided apiStrict:true, but the command delete attempts to write to system.js"},
		{"findandmodify on system.js", bson.D{{Key: "findandmodify", Value: "system.js"}, {Key: "query", Value: bson.D{}}, {Key: "remove", Value: true}}, "Provided apiStrict:true, but the command findAndModify attempts to write to system.js"},
		{"find on system.js", bson.D{{Key: "find", Value: "system.js"}}, ""},
		// index types outside version 1 (index_key_validate::validateIndexSpec)
		{"text index", bson.D{{Key: "createIndexes", Value: "api"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: "text"}}}, {Key: "name", Value: "t"}}}}}, `Error in specification { key: { a: "text" }, name: "t" } :: caused by :: text indexes cannot be created with apiStrict: true`},
		// collMod's index document parses strictly, before the collection
		// is looked up (coll_mod.idl)
		{"collMod index prepareUnique", bson.D{{Key: "collMod", Value: "api_none"}, {Key: "index", Value: bson.D{{Key: "name", Value: "a_1"}, {Key: "prepareUnique", Value: true}}}}, "BSON field 'collMod.index.prepareUnique' is not allowed with apiStrict:true."},
		{"collMod dryRun", bson.D{{Key: "collMod", Value: "api_none"}, {Key: "dryRun", Value: true}}, "BSON field 'collMod.dryRun' is not allowed with apiStrict:true."},
		// a view's pipeline, created or read, under the request's apiStrict
		{"create view $indexStats", bson.D{{Key: "create", Value: "api_v"}, {Key: "viewOn", Value: "api"}, {Key: "pipeline", Value: bson.A{stage("$indexStats", bson.D{})}}}, "Invalid pipeline for view " + testDB + ".api_v :: caused by :: $indexStats is not allowed with 'apiStrict: true' in API Version 1"},
		{"create view $indexStats in $facet", bson.D{{Key: "create", Value: "api_v2"}, {Key: "viewOn", Value: "api"}, {Key: "pipeline", Value: bson.A{stage("$facet", bson.D{{Key: "f", Value: bson.A{stage("$indexStats", bson.D{})}}})}}}, "Invalid pipeline for view " + testDB + ".api_v2 :: caused by :: $indexStats is not allowed with 'apiStrict: true' in API Version 1"},
		{"aggregate on a view with $indexStats", bson.D{{Key: "aggregate", Value: "api_unstable"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}}, "$indexStats is not allowed with 'apiStrict: true' in API Version 1"},
		{"find on a view with $indexStats", bson.D{{Key: "find", Value: "api_unstable"}}, "$indexStats is not allowed with 'apiStrict: true' in API Version 1"},
		// explain's command runs under its API parameters
		{"explain find min", bson.D{{Key: "explain", Value: find(bson.E{Key: "min", Value: bson.D{{Key: "a", Value: 1}}})}}, "BSON field 'FindCommandRequest.min' is not allowed with apiStrict:true."},
		{"explain aggregate $indexStats", bson.D{{Key: "explain", Value: agg(stage("$indexStats", bson.D{}))}}, "$indexStats is not allowed with 'apiStrict: true' in API Version 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			strict := append(append(bson.D{}, tc.cmd...), bson.E{Key: "apiVersion", Value: "1"}, bson.E{Key: "apiStrict", Value: true})
			err := db.RunCommand(ctx, strict).Err()
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			requireCode(t, err, 323, "APIStrictError")
			var ce mongo.CommandError
			if !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, tc.msg) {
				t.Fatalf("message %q, want %q", ce.Message, tc.msg)
			}
			// Not strict: not refused for its API version.
			loose := append(append(bson.D{}, tc.cmd...), bson.E{Key: "apiVersion", Value: "1"})
			if err := db.RunCommand(ctx, loose).Err(); serverCode(err) == 323 {
				t.Fatalf("refused without apiStrict: %v", err)
			}
		})
	}
}

// TestValidateDBMetadata: under {version: "1", strict: true} the command
// lists, as APIStrictError entries, the text and sparse indexes of each
// collection (in creation order) and the views whose pipeline uses a stage
// outside version 1; other API parameters, and names that are neither
// collections nor views, give an empty list. Its fields parse as MongoDB's
// IDL: apiParameters and its version are required.
// https://www.mongodb.com/docs/v7.0/reference/command/validateDBMetadata/
func TestValidateDBMetadata(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	const dbName = "vdm"
	db := client.Database(dbName)
	for _, cmd := range []bson.D{
		{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{
			bson.D{{Key: "key", Value: bson.D{{Key: "z", Value: 1}}}, {Key: "name", Value: "z_sparse"}, {Key: "sparse", Value: true}},
			bson.D{{Key: "key", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "name", Value: "b_1"}},
			bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: "text"}}}, {Key: "name", Value: "a_text"}},
			bson.D{{Key: "key", Value: bson.D{{Key: "p", Value: "2dsphere"}}}, {Key: "name", Value: "p_2dsphere"}},
		}}},
		{{Key: "createIndexes", Value: "plain"}, {Key: "indexes", Value: bson.A{
			bson.D{{Key: "key", Value: bson.D{{Key: "h", Value: "hashed"}}}, {Key: "name", Value: "h_hashed"}},
		}}},
		{{Key: "create", Value: "stats"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$indexStats", Value: bson.D{}}}}}},
		{{Key: "create", Value: "fine"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{}}}}}},
	} {
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatal(cmd, err)
		}
	}
	entry := func(ns, msg string) bson.D {
		return bson.D{{Key: "ns", Value: ns}, {Key: "code", Value: int32(323)}, {Key: "codeName", Value: "APIStrictError"}, {Key: "errmsg", Value: msg}}
	}
	index := func(name string) bson.D {
		return entry(dbName+".c", "The index with name "+name+" is not allowed in API version 1.")
	}
	view := entry(dbName+".stats", "$indexStats is not allowed with 'apiStrict: true' in API Version 1")
	strict := bson.D{{Key: "version", Value: "1"}, {Key: "strict", Value: true}}
	tests := []struct {
		name   string
		fields bson.D
		want   bson.A
	}{
		{"database", bson.D{{Key: "db", Value: dbName}, {Key: "apiParameters", Value: strict}}, bson.A{view, index("z_sparse"), index("a_text")}},
		{"collection", bson.D{{Key: "db", Value: dbName}, {Key: "collection", Value: "c"}, {Key: "apiParameters", Value: strict}}, bson.A{index("z_sparse"), index("a_text")}},
		{"view", bson.D{{Key: "db", Value: dbName}, {Key: "collection", Value: "stats"}, {Key: "apiParameters", Value: strict}}, bson.A{view}},
		{"fine view", bson.D{{Key: "db", Value: dbName}, {Key: "collection", Value: "fine"}, {Key: "apiParameters", Value: strict}}, bson.A{}},
		{"fine collection", bson.D{{Key: "db", Value: dbName}, {Key: "collection", Value: "plain"}, {Key: "apiParameters", Value: strict}}, bson.A{}},
		{"every database", bson.D{{Key: "collection", Value: "c"}, {Key: "apiParameters", Value: strict}}, bson.A{index("z_sparse"), index("a_text")}},
		{"no such collection", bson.D{{Key: "db", Value: dbName}, {Key: "collection", Value: "C"}, {Key: "apiParameters", Value: strict}}, bson.A{}},
		{"no such database", bson.D{{Key: "db", Value: "nothing"}, {Key: "apiParameters", Value: strict}}, bson.A{}},
		{"a database name with a dollar", bson.D{{Key: "db", Value: "$admin"}, {Key: "apiParameters", Value: strict}}, bson.A{}},
		{"bad name, no such database", bson.D{{Key: "db", Value: "nothing"}, {Key: "collection", Value: ""}, {Key: "apiParameters", Value: strict}}, bson.A{}},
		{"not strict", bson.D{{Key: "db", Value: dbName}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}}}}, bson.A{}},
		{"version 2", bson.D{{Key: "db", Value: dbName}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "2"}, {Key: "strict", Value: true}}}}, bson.A{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := append(bson.D{{Key: "validateDBMetadata", Value: 1}}, tc.fields...)
			var got bson.Raw
			if err := client.Database("admin").RunCommand(ctx, cmd).Decode(&got); err != nil {
				t.Fatal(err)
			}
			want := mustRaw(t, bson.D{{Key: "apiVersionErrors", Value: tc.want}, {Key: "ok", Value: 1.0}})
			if !bytes.Equal(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
		})
	}
	for _, tc := range []struct {
		cmd  bson.D
		code int
		name string
	}{
		{bson.D{{Key: "validateDBMetadata", Value: 1}}, 40414, "Location40414"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: nil}}, 40414, "Location40414"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: bson.D{{Key: "strict", Value: true}}}}, 40414, "Location40414"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: "1"}}, 14, "TypeMismatch"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: strict}, {Key: "db", Value: 1}}, 14, "TypeMismatch"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}, {Key: "Strict", Value: true}}}}, 40415, "Location40415"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}, {Key: "strict", Value: 1}}}}, 14, "TypeMismatch"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: bson.D{{Key: "version", Value: "1"}, {Key: "deprecationErrors", Value: nil}}}}, 14, "TypeMismatch"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: strict}, {Key: "db", Value: dbName}, {Key: "collection", Value: ".c"}}, 73, "InvalidNamespace"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: strict}, {Key: "db", Value: ""}}, 73, "InvalidNamespace"},
		{bson.D{{Key: "validateDBMetadata", Value: 1}, {Key: "apiParameters", Value: strict}, {Key: "db", Value: "a.b"}}, 73, "InvalidNamespace"},
	} {
		err := client.Database("admin").RunCommand(ctx, tc.cmd).Err()
		requireCode(t, err, tc.code, tc.name)
	}
}

// TestAPITestCommands: MongoDB's Stable API test commands (with test
// commands on) reply with the API parameters they were given, and differ
// in the versions they belong to: testVersion2 is outside version 1,
// testDeprecation is deprecated in it; without test commands they do not
// exist.
func TestAPITestCommands(t *testing.T) {
	client := startTestCommands(t, "apitest")
	db := client.Database(testDB)
	api := func(name string, params ...bson.E) bson.D { return append(bson.D{{Key: name, Value: 1}}, params...) }
	v1 := bson.E{Key: "apiVersion", Value: "1"}
	strict := bson.E{Key: "apiStrict", Value: true}
	deprecation := bson.E{Key: "apiDeprecationErrors", Value: true}
	for _, tc := range []struct {
		cmd   bson.D
		reply string // the reply without ok, when it runs
		code  int
		msg   string
	}{
		{cmd: api("testVersion2"), reply: `{}`},
		{cmd: api("testVersion2", v1), reply: `{"apiVersion": "1"}`},
		{cmd: api("testVersion2", v1, strict), code: 323, msg: "Provided apiStrict:true, but the command testVersion2 is not in API Version 1"},
		{cmd: api("testVersions1And2", v1, strict), reply: `{"apiVersion": "1","apiStrict": true}`},
		{cmd: api("testRemoval", v1, strict), reply: `{"apiVersion": "1","apiStrict": true}`},
		{cmd: api("testDeprecationInVersion2", v1, strict, deprecation), reply: `{"apiVersion": "1","apiStrict": true,"apiDeprecationErrors": true}`},
		{cmd: api("testDeprecation", v1), reply: `{"apiVersion": "1"}`},
		{cmd: api("testDeprecation", v1, deprecation), code: 324, msg: "Provided apiDeprecationErrors:true, but the command testDeprecation is deprecated in API Version 1"},
		{cmd: api("testVersions1And2", bson.E{Key: "apiVersion", Value: "2"}), code: 322, msg: "Cannot accept API version 2"},
	} {
		raw, err := db.RunCommand(t.Context(), tc.cmd).Raw()
		if tc.code != 0 {
			var ce mongo.CommandError
			if !errors.As(err, &ce) || int(ce.Code) != tc.code || !strings.Contains(ce.Message, tc.msg) {
				t.Errorf("%v: %v, want code %d with %q", tc.cmd, err, tc.code, tc.msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.cmd, err)
			continue
		}
		elems, err := raw.Elements()
		if err != nil {
			t.Fatal(err)
		}
		got := bson.D{}
		for _, e := range elems {
			if e.Key() != "ok" && !strings.HasPrefix(e.Key(), "$") && e.Key() != "operationTime" {
				got = append(got, bson.E{Key: e.Key(), Value: e.Value()})
			}
		}
		if s := mustRaw(t, got).String(); s != tc.reply {
			t.Errorf("%v: reply %s, want %s", tc.cmd, s, tc.reply)
		}
	}
	plain, _ := startServer(t)
	requireCode(t, plain.Database(testDB).RunCommand(t.Context(), api("testVersion2")).Err(), 59, "CommandNotFound")
}

// TestRequireAPIVersion: with the requireApiVersion parameter set, a
// command that does not declare apiVersion fails with 498870, the
// handshake's included, so a client without an API version cannot
// connect; clients that declare one run as before, getMore included.
// https://www.mongodb.com/docs/v7.0/reference/parameters/#mongodb-parameter-param.requireApiVersion
func TestRequireAPIVersion(t *testing.T) {
	in := startInstance(t, defaultConfig())
	ctx := context.Background()
	v1 := connect(t, in, options.Client().SetServerAPIOptions(options.ServerAPI(options.ServerAPIVersion1)))
	plain := connect(t, in)
	coll := v1.Database(testDB).Collection("req")
	if _, err := coll.InsertMany(ctx, []any{bson.D{{Key: "i", Value: 1}}, bson.D{{Key: "i", Value: 2}}, bson.D{{Key: "i", Value: 3}}}); err != nil {
		t.Fatal(err)
	}
	if err := plain.Database("admin").RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "requireApiVersion", Value: true}}).Err(); err != nil {
		t.Fatal(err)
	}
	err := plain.Database(testDB).RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
	requireCode(t, err, 498870, "Location498870")
	late, err := mongo.Connect(uriOptions(in.URI()).SetDirect(true).SetServerSelectionTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = late.Disconnect(ctx) }()
	if err := late.Ping(ctx, nil); err == nil || !strings.Contains(err.Error(), "The apiVersion parameter is required") {
		t.Errorf("a client without an API version connected: %v", err)
	}
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil || len(docs) != 3 {
		t.Errorf("find through getMore: %d documents, %v", len(docs), err)
	}
	var got bson.M
	if err := v1.Database("admin").RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "requireApiVersion", Value: 1}}).Decode(&got); err != nil || got["requireApiVersion"] != true {
		t.Errorf("getParameter: %v %v", got, err)
	}
	if err := v1.Database("admin").RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "requireApiVersion", Value: false}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := plain.Database(testDB).RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err(); err != nil {
		t.Errorf("after requireApiVersion false: %v", err)
	}
}

// TestAPIMismatch: the commands continuing a transaction give the Stable
// API parameters of its first command, and a cursor's getMores those of
// the command that opened it, else APIMismatchError (347), the
// transaction left open and the cursor usable
// (jstests/core/txns/api_params_transaction.js; getmore_cmd.cpp). Giving
// apiStrict: false is not giving none.
func TestAPIMismatch(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	db := client.Database(testDB)
	v1 := bson.E{Key: "apiVersion", Value: "1"}
	docs := bson.A{bson.D{}, bson.D{}, bson.D{}}
	mustRunRaw(t, db, bson.D{{Key: "insert", Value: "apimis"}, {Key: "documents", Value: docs}})

	opened := mustRunRaw(t, db, bson.D{{Key: "find", Value: "apimis"}, {Key: "batchSize", Value: 1}, v1})
	getMore := bson.D{{Key: "getMore", Value: opened.Lookup("cursor", "id").Int64()}, {Key: "collection", Value: "apimis"}, {Key: "batchSize", Value: 1}}
	err := db.RunCommand(t.Context(), getMore).Err()
	requireError(t, err, 347, "APIMismatchError", `API parameter mismatch: getMore used params {}, the cursor-creating command used { apiVersion: "1" }`)
	mustRunRaw(t, db, append(getMore, v1))

	lsid := lsidFor("apimismatch")
	txn := func(cmd bson.D, params ...bson.E) bson.D {
		return append(append(inSession(cmd, lsid, 1), bson.E{Key: "autocommit", Value: false}), params...)
	}
	insert := bson.D{{Key: "insert", Value: "apimis"}, {Key: "documents", Value: bson.A{bson.D{}}}}
	mustRunRaw(t, db, append(txn(insert, v1), bson.E{Key: "startTransaction", Value: true}))
	err = db.RunCommand(t.Context(), txn(insert)).Err()
	requireError(t, err, 347, "APIMismatchError", `API parameter mismatch: insert used params {}, the transaction's first command used { apiVersion: "1" }`)
	admin := client.Database("admin")
	commit := bson.D{{Key: "commitTransaction", Value: 1}}
	err = admin.RunCommand(t.Context(), txn(commit, v1, bson.E{Key: "apiStrict", Value: false})).Err()
	requireError(t, err, 347, "APIMismatchError", `API parameter mismatch: commitTransaction used params { apiVersion: "1", apiStrict: false }, the transaction's first command used { apiVersion: "1" }`)
	mustRunRaw(t, db, txn(insert, v1))
	mustRunRaw(t, admin, txn(commit, v1))
	// a committed transaction's commit retried: nothing open to match
	mustRunRaw(t, admin, txn(commit))
	if n, err := db.Collection("apimis").CountDocuments(t.Context(), bson.D{}); err != nil || n != 5 {
		t.Errorf("documents: %d (%v), want 5", n, err)
	}
}

// TestAPIStrictHidesIndexes: under apiStrict the planner sees no sparse or
// text index (MongoDB leaves them out of API version 1): a $text query
// fails with NoQueryExecutionPlans, a hint of a sparse index with BadValue,
// and a query a sparse index would serve scans the collection, also after
// the same query without apiStrict cached its plan on that index
// (api_version_unstable_indexes.js).
func TestAPIStrictHidesIndexes(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("api_indexes")
	docs := bson.A{}
	for i := range 20 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "subject", Value: "coffee"}, {Key: "views", Value: i % 4}, {Key: "a", Value: i}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mongo.IndexModel{
		{Keys: bson.D{{Key: "subject", Value: "text"}}},
		{Keys: bson.D{{Key: "views", Value: 1}}, Options: options.Index().SetSparse(true)},
		{Keys: bson.D{{Key: "views", Value: 1}, {Key: "a", Value: 1}}},
	} {
		if _, err := coll.Indexes().CreateOne(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	strict := bson.D{{Key: "apiVersion", Value: "1"}, {Key: "apiStrict", Value: true}}
	with := func(cmd bson.D, api bool) bson.D {
		if api {
			return append(cmd, strict...)
		}
		return cmd
	}
	find := func(filter bson.D, hint any) bson.D {
		cmd := bson.D{{Key: "find", Value: "api_indexes"}, {Key: "filter", Value: filter}}
		if hint != nil {
			cmd = append(cmd, bson.E{Key: "hint", Value: hint})
		}
		return cmd
	}
	// indexOf is the index the winning plan of find scans ("" for none).
	indexOf := func(cmd bson.D, api bool) string {
		t.Helper()
		out, err := db.RunCommand(ctx, with(bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}, api)).Raw()
		if err != nil {
			t.Fatal(err)
		}
		for stage := out.Lookup("queryPlanner", "winningPlan"); stage.Type == bson.TypeEmbeddedDocument; stage = stage.Document().Lookup("inputStage") {
			if name, ok := stage.Document().Lookup("indexName").StringValueOK(); ok {
				return name
			}
		}
		return ""
	}
	text := bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "coffee"}}}}
	if got := indexOf(find(text, nil), false); got != "subject_text" {
		t.Errorf("$text without apiStrict: index %q, want subject_text", got)
	}
	for _, c := range []struct {
		name string
		cmd  bson.D
		code int32
	}{
		{"explain $text", bson.D{{Key: "explain", Value: find(text, nil)}}, 291},
		{"find $text", find(text, nil), 291},
		{"aggregate $text", bson.D{{Key: "aggregate", Value: "api_indexes"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: text}}}}, {Key: "cursor", Value: bson.D{}}}, 291},
		{"hint sparse by key", find(bson.D{{Key: "views", Value: 1}}, bson.D{{Key: "views", Value: 1}}), 2},
		{"hint sparse by name", find(bson.D{{Key: "views", Value: 1}}, "views_1"), 2},
		{"count hint sparse", bson.D{{Key: "count", Value: "api_indexes"}, {Key: "query", Value: bson.D{{Key: "views", Value: 1}}}, {Key: "hint", Value: "views_1"}}, 2},
	} {
		var se mongo.ServerError
		if err := db.RunCommand(ctx, with(c.cmd, true)).Err(); !errors.As(err, &se) || !se.HasErrorCode(int(c.code)) {
			t.Errorf("%s under apiStrict: %v, want code %d", c.name, err, c.code)
		}
		if err := db.RunCommand(ctx, c.cmd).Err(); err != nil {
			t.Errorf("%s without apiStrict: %v", c.name, err)
		}
	}
	// a sparse index serves {views: 1} only without apiStrict; the plan
	// cached without it does not serve the query under it
	eq := find(bson.D{{Key: "views", Value: 1}}, nil)
	for range 3 {
		if err := db.RunCommand(ctx, eq).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := indexOf(eq, false); got == "" {
		t.Errorf("{views: 1} without apiStrict: no index scanned")
	}
	if got := indexOf(eq, true); got == "views_1" {
		t.Errorf("{views: 1} under apiStrict scans the sparse index")
	}
	reply, err := db.RunCommand(ctx, with(eq, true)).Raw()
	if err != nil {
		t.Fatal(err)
	}
	vals, _ := reply.Lookup("cursor", "firstBatch").Array().Values()
	if n := len(vals); n != 5 {
		t.Errorf("{views: 1} under apiStrict: %d documents, want 5", n)
	}
	if got := indexOf(find(bson.D{{Key: "views", Value: 1}}, "views_1_a_1"), true); got != "views_1_a_1" {
		t.Errorf("hint of an index in version 1 under apiStrict: index %q", got)
	}
}
