package commands

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCreateExistingView: creating a view that exists succeeds when its
// viewOn, pipeline and collation are the same (the collation compared as
// a collator: {locale: "uk"} is {locale: "uk", strength: 3}), and fails
// with NamespaceExists naming what differs (checkCollectionOptions,
// views_creation.js).
func TestCreateExistingView(t *testing.T) {
	s := argsService(t)
	create := `{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 1}}], "collation": {"locale": "uk"}}`
	for _, tc := range []struct {
		cmd  string
		code int32
		msg  string
	}{
		{create, 0, ""},
		{create, 0, ""},
		{`{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 1.0}}], "collation": {"locale": "uk", "strength": 3}}`, 0, ""},
		{`{"create": "v", "viewOn": "d", "pipeline": [{"$match": {"x": 1}}], "collation": {"locale": "uk"}}`, 48,
			"namespace test.v already exists, but is a view on test.c rather than test.d"},
		{`{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 2}}], "collation": {"locale": "uk"}}`, 48,
			"namespace test.v already exists, but with pipeline { 0: { $match: { x: 1 } } } rather than { 0: { $match: { x: 2 } } }"},
		{`{"create": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 1}}]}`, 48, ""},
		{`{"create": "v"}`, 48, ""},
	} {
		var cmd bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.cmd), true, &cmd); err != nil {
			t.Fatal(err)
		}
		reply := runOn(t, s, "test", cmd)
		if got, msg := code(reply), errmsg(reply); got != tc.code || tc.msg != "" && msg != tc.msg {
			t.Errorf("%s: %d %q, want %d %q", tc.cmd, got, msg, tc.code, tc.msg)
		}
	}
}

// TestInvalidViewDefinitions: a system.views document MongoDB's view
// catalog would not load makes listCollections fail with
// InvalidViewDefinition, leaves commands on collections working, and
// system.views may still be dropped (invalid_system_views.js); a
// listCollections selecting only collections by the cloners' filter reads
// no view (list_collections_no_views.js).
func TestInvalidViewDefinitions(t *testing.T) {
	for _, bad := range []string{
		`{"_id": "test.badViewStringPipeline", "viewOn": "c", "pipeline": "bad"}`,
		`{"_id": "test.badViewEmptyObjectPipeline", "viewOn": "c", "pipeline": {}}`,
		`{"_id": "test.badViewArrayWithIntegerPipeline", "viewOn": "c", "pipeline": [1]}`,
		`{"_id": "test.badViewArrayWithEmptyArrayPipeline", "viewOn": "c", "pipeline": [[]]}`,
		`{"_id": 7, "viewOn": "c", "pipeline": []}`,
		`{"_id": "test.embedded\u0000null", "viewOn": "c", "pipeline": []}`,
		`{"_id": "invalidNotFullyQualifiedNs", "viewOn": "c", "pipeline": []}`,
		`{"_id": "test.missingViewOnField", "pipeline": []}`,
		`{"_id": "test.extraField", "viewOn": "c", "pipeline": [], "x": 1}`,
		`{"_id": "test.badCollation", "viewOn": "c", "pipeline": [], "collation": {"locale": "xx"}}`,
		`{"_id": "test.badCollationField", "viewOn": "c", "pipeline": [], "collation": {"locale": "en", "x": 1}}`,
		`{"_id": "test.onBuckets", "viewOn": "system.buckets.other", "pipeline": []}`,
	} {
		t.Run(bad, func(t *testing.T) {
			s := argsService(t)
			var doc bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(bad), true, &doc); err != nil {
				t.Fatal(err)
			}
			if c := code(runCmd(t, s, bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}})); c != 0 {
				t.Fatalf("create: %d", c)
			}
			ops := bson.A{bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "test.system.views"}, {Key: "o", Value: doc}}}
			if c := code(runCmdOn(t, s, "admin", bson.D{{Key: "applyOps", Value: ops}})); c != 0 {
				t.Fatalf("applyOps: %d", c)
			}
			if c := code(runCmd(t, s, bson.D{{Key: "listCollections", Value: 1}})); c != 182 {
				t.Errorf("listCollections: %d, want 182", c)
			}
			// the cloners' filter of collections reads no view
			collsOnly := bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "type", Value: "collection"}}, bson.D{{Key: "type", Value: bson.D{{Key: "$exists", Value: false}}}}}}}
			reply := runCmd(t, s, bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: collsOnly}})
			listed, _ := reply.Lookup("cursor", "firstBatch").Array().Values()
			if c := code(reply); c != 0 || len(listed) == 0 {
				t.Errorf("listCollections of collections only: %d %s", c, reply)
			}
			typeView := bson.D{{Key: "type", Value: "view"}}
			if c := code(runCmd(t, s, bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: typeView}})); c != 182 {
				t.Errorf("listCollections of views: %d, want 182", c)
			}
			// an invalid definition is no view to read
			if id, ok := doc.Lookup("_id").StringValueOK(); ok && strings.HasPrefix(id, "test.") && !strings.ContainsRune(id, 0) {
				if c := code(runCmd(t, s, bson.D{{Key: "find", Value: strings.TrimPrefix(id, "test.")}})); c != 182 {
					t.Errorf("find on the invalid view: %d, want 182", c)
				}
			}
			if c := code(runCmd(t, s, bson.D{{Key: "find", Value: "c"}})); c != 0 {
				t.Errorf("find on a collection: %d", c)
			}
			// a name no collection has is looked up in the invalid catalog
			for _, cmd := range []bson.D{
				{{Key: "find", Value: "missing"}},
				{{Key: "find", Value: "v"}},
				{{Key: "create", Value: "missing"}},
			} {
				if c := code(runCmd(t, s, cmd)); c != 182 {
					t.Errorf("%v: %d, want 182", cmd, c)
				}
			}
			// a name without a view is dropped as one that does not exist,
			// a view's drop fails
			if c := code(runCmd(t, s, bson.D{{Key: "drop", Value: "missing"}})); c != 0 {
				t.Errorf("drop of a missing name: %d, want 0", c)
			}
			if c := code(runCmd(t, s, bson.D{{Key: "drop", Value: "v"}})); c != 182 {
				t.Errorf("drop of a view: %d, want 182", c)
			}
			// a write's statements fail, each acquiring the collection
			for _, cmd := range []bson.D{
				{{Key: "insert", Value: "missing"}, {Key: "documents", Value: bson.A{bson.D{}}}},
				{{Key: "update", Value: "missing"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{}}}}}},
				{{Key: "delete", Value: "missing"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}},
			} {
				reply := runCmd(t, s, cmd)
				if c, _ := reply.Lookup("writeErrors", "0", "code").AsInt64OK(); code(reply) != 0 || c != 182 {
					t.Errorf("%v: %s, want a write error 182", cmd, reply)
				}
			}
			if c := code(runCmd(t, s, bson.D{{Key: "drop", Value: "system.views"}})); c != 0 {
				t.Errorf("drop system.views: %d", c)
			}
			if c := code(runCmd(t, s, bson.D{{Key: "listCollections", Value: 1}})); c != 0 {
				t.Errorf("listCollections after the drop: %d", c)
			}
		})
	}
}

// TestCreateExistingCollection: creating a collection that exists with
// other options fails with NamespaceExists showing the existing options,
// uuid first (checkCollectionOptions, CollectionOptions::toBSON).
func TestCreateExistingCollection(t *testing.T) {
	s := argsService(t)
	if c := code(runCmd(t, s, bson.D{{Key: "create", Value: "d"}, {Key: "validationLevel", Value: "moderate"}})); c != 0 {
		t.Fatalf("create: %d", c)
	}
	reply := runCmd(t, s, bson.D{{Key: "create", Value: "d"}})
	msg := errmsg(reply)
	if code(reply) != 48 || !strings.HasPrefix(msg, `namespace test.d already exists, but with different options: { uuid: UUID("`) ||
		!strings.HasSuffix(msg, `"), validationLevel: "moderate" }`) {
		t.Errorf("%d %q", code(reply), msg)
	}
}

// TestViewPipelineValidation: a view's pipeline is checked as MongoDB's
// view_catalog_helpers::validatePipeline checks it, in the context of the
// view ("Invalid pipeline for view ..."): it must parse, then hold no
// stage writing to disk (167, naming the stage's location among the
// stages MongoDB parses) and no $changeStream (167). A view stored invalid
// through applyOps fails every later create or collMod of a view with its
// own error, as MongoDB's refresh of its view graph revalidates every view,
// until it is removed (invalid_view_prevents_creating_new_view.js).
func TestViewPipelineValidation(t *testing.T) {
	s := argsService(t)
	for _, tc := range []struct {
		pipeline string
		code     int32
		msg      string
	}{
		{`[{"$out": "x"}]`, 167, "Invalid pipeline for view test.v :: caused by :: The aggregation stage $out in location 0 of the pipeline cannot be used in the view definition of test.v because it writes to disk"},
		{`[{"$match": {}}, {"$sortByCount": "$a"}, {"$merge": {"into": "x"}}]`, 167, "Invalid pipeline for view test.v :: caused by :: The aggregation stage $merge in location 3 of the pipeline cannot be used in the view definition of test.v because it writes to disk"},
		{`[{"$out": "x"}, {"$match": {}}]`, 40601, "Invalid pipeline for view test.v :: caused by :: $out can only be the final stage in the pipeline"},
		{`[{"$changeStream": {}}]`, 167, "Invalid pipeline for view test.v :: caused by :: $changeStream cannot be used in a view definition"},
		{`[{"$match": {}}]`, 0, ""},
	} {
		var p bson.A
		if err := bson.UnmarshalExtJSON([]byte(tc.pipeline), true, &p); err != nil {
			t.Fatal(err)
		}
		reply := runCmd(t, s, bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: p}})
		if got, msg := code(reply), errmsg(reply); got != tc.code || msg != tc.msg {
			t.Errorf("%s: %d %q, want %d %q", tc.pipeline, got, msg, tc.code, tc.msg)
		}
	}
	bad := bson.D{{Key: "_id", Value: "test.bad"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: false}}}}, bson.D{{Key: "$out", Value: "y"}}}}}
	apply := func(op string, o bson.D) {
		ops := bson.A{bson.D{{Key: "op", Value: op}, {Key: "ns", Value: "test.system.views"}, {Key: "o", Value: o}}}
		if c := code(runCmdOn(t, s, "admin", bson.D{{Key: "applyOps", Value: ops}})); c != 0 {
			t.Fatalf("applyOps %s: %d", op, c)
		}
	}
	apply("i", bad)
	const want = "The aggregation stage $out in location 1 of the pipeline cannot be used in the view definition of test.bad because it writes to disk"
	for _, cmd := range []bson.D{
		{{Key: "create", Value: "w"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}},
		{{Key: "collMod", Value: "v"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}},
	} {
		if reply := runCmd(t, s, cmd); code(reply) != 167 || errmsg(reply) != want {
			t.Errorf("%s with an invalid view stored: %d %q, want 167 %q", cmd[0].Key, code(reply), errmsg(reply), want)
		}
	}
	if c := code(runCmd(t, s, bson.D{{Key: "find", Value: "v"}})); c != 0 {
		t.Errorf("find on a valid view: %d", c)
	}
	apply("d", bson.D{{Key: "_id", Value: "test.bad"}})
	if c := code(runCmd(t, s, bson.D{{Key: "create", Value: "w"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}})); c != 0 {
		t.Errorf("create once the invalid view is removed: %d", c)
	}
}

// TestStoredViewCollation: a view's stored collation is read as MongoDB's
// view catalog parses it: the simple collation or an empty document is no
// collation, another is filled with its locale's defaults.
func TestStoredViewCollation(t *testing.T) {
	s := argsService(t)
	if c := code(runCmd(t, s, bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}})); c != 0 {
		t.Fatalf("create: %d", c)
	}
	for _, tc := range []struct {
		stored, listed string
	}{
		{`{"locale": "simple"}`, ``},
		{`{}`, ``},
		{`{"locale": "fr", "strength": 1}`, `{"locale": "fr", "caseLevel": false, "caseFirst": "off", "strength": 1, "numericOrdering": false, "alternate": "non-ignorable", "maxVariable": "punct", "normalization": false, "backwards": false, "version": "57.1"}`},
	} {
		var coll bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.stored), true, &coll); err != nil {
			t.Fatal(err)
		}
		doc := bson.D{{Key: "_id", Value: "test.w"}, {Key: "viewOn", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "collation", Value: coll}}
		ops := bson.A{bson.D{{Key: "op", Value: "i"}, {Key: "ns", Value: "test.system.views"}, {Key: "o", Value: doc}}}
		if c := code(runCmdOn(t, s, "admin", bson.D{{Key: "applyOps", Value: ops}})); c != 0 {
			t.Fatalf("applyOps: %d", c)
		}
		reply := runCmd(t, s, bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: bson.D{{Key: "name", Value: "w"}}}})
		got := reply.Lookup("cursor", "firstBatch", "0", "options", "collation")
		switch {
		case tc.listed == "" && got.Type != 0:
			t.Errorf("stored %s: listed %s, want no collation", tc.stored, got)
		case tc.listed != "":
			var want bson.Raw
			if err := bson.UnmarshalExtJSON([]byte(tc.listed), true, &want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Value, want) {
				t.Errorf("stored %s: listed %s, want %s", tc.stored, got, want)
			}
		}
		// a find under the simple collation is refused by a view with another
		if c := code(runCmd(t, s, bson.D{{Key: "find", Value: "w"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "simple"}}}})); (c == 0) != (tc.listed == "") {
			t.Errorf("stored %s: find with the simple collation: %d", tc.stored, c)
		}
		del := bson.A{bson.D{{Key: "op", Value: "d"}, {Key: "ns", Value: "test.system.views"}, {Key: "o", Value: bson.D{{Key: "_id", Value: "test.w"}}}}}
		if c := code(runCmdOn(t, s, "admin", bson.D{{Key: "applyOps", Value: del}})); c != 0 {
			t.Fatalf("applyOps: %d", c)
		}
	}
}

// TestCollModViewOnBuckets: collMod may not turn a view into one on a
// buckets collection other than its own time series collection's: MongoDB
// reloads its view catalog with the new definition, whose load refuses it
// (ViewsForDatabase::_insert), and the collMod fails, the view unchanged.
func TestCollModViewOnBuckets(t *testing.T) {
	s := argsService(t)
	if c := code(runCmd(t, s, bson.D{{Key: "create", Value: "v"}, {Key: "viewOn", Value: "c"}})); c != 0 {
		t.Fatalf("create: %d", c)
	}
	const want = "Invalid view: cannot define a view over a system.buckets namespace except by creating a time-series collection"
	reply := runCmd(t, s, bson.D{{Key: "collMod", Value: "v"}, {Key: "viewOn", Value: "system.buckets.x"}, {Key: "pipeline", Value: bson.A{}}})
	if code(reply) != 73 || errmsg(reply) != want {
		t.Errorf("collMod: %d %q, want 73 %q", code(reply), errmsg(reply), want)
	}
	reply = runCmd(t, s, bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: bson.D{{Key: "name", Value: "v"}}}})
	if on, _ := reply.Lookup("cursor", "firstBatch", "0", "options", "viewOn").StringValueOK(); on != "c" {
		t.Errorf("viewOn after the failed collMod: %q, want c", on)
	}
}

// TestViewDocMemo: the memo answers as validViewDoc does, asked again and
// after it forgot a full database's answers.
func TestViewDocMemo(t *testing.T) {
	var m viewDocMemo
	doc := func(i int, viewOn string) bson.Raw {
		return marshal(bson.D{{Key: "_id", Value: fmt.Sprintf("test.v%d", i)}, {Key: "viewOn", Value: viewOn}, {Key: "pipeline", Value: bson.A{}}})
	}
	for i := range viewDocMemoSize + 2 {
		for _, d := range []bson.Raw{doc(i, "c"), doc(i, "system.buckets.other")} {
			for range 2 {
				if got, want := m.valid("test", d), validViewDoc("test", d); got != want {
					t.Fatalf("%s: memo says %v, validViewDoc %v", d, got, want)
				}
			}
		}
	}
	if n := len(m.known["test"]); n > viewDocMemoSize {
		t.Errorf("%d answers kept, want at most %d", n, viewDocMemoSize)
	}
}
