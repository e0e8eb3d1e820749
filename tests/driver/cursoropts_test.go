package driver_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// runRaw runs cmd on db, in the test's session (sessionCtx), and returns
// the reply, or the error.
func runRaw(t *testing.T, db *mongo.Database, cmd bson.D) (bson.Raw, error) {
	t.Helper()
	return db.RunCommand(sessionCtx(t, db.Client()), cmd).Raw()
}

// batchOf returns the first or next batch of a cursor reply and its id.
func batchOf(t *testing.T, reply bson.Raw) ([]bson.RawValue, int64) {
	t.Helper()
	cur := reply.Lookup("cursor").Document()
	batch, ok := cur.Lookup("firstBatch").ArrayOK()
	if !ok {
		batch = cur.Lookup("nextBatch").Array()
	}
	vals, err := batch.Values()
	if err != nil {
		t.Fatal(err)
	}
	id, ok := cur.Lookup("id").Int64OK()
	if !ok {
		t.Fatalf("cursor id is not an int64: %s", cur)
	}
	return vals, id
}

// TestCursorReplyFieldOrder proves cursor replies keep MongoDB 7.0's field
// order: find, aggregate and getMore build {firstBatch|nextBatch, id, ns}
// (the server's CursorResponseBuilder), listCollections and listIndexes
// {id, ns, firstBatch} (their IDL reply types).
func TestCursorReplyFieldOrder(t *testing.T) {
	client, _ := startServer(t)
	numbered(t, client, "order", 10)
	db := client.Database(testDB)
	find, err := runRaw(t, db, bson.D{{Key: "find", Value: "order"}, {Key: "batchSize", Value: 2}})
	if err != nil {
		t.Fatal(err)
	}
	_, id := batchOf(t, find)
	getMore, err := runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "order"}})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := runRaw(t, db, bson.D{{Key: "aggregate", Value: "order"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}})
	if err != nil {
		t.Fatal(err)
	}
	listColls, err := runRaw(t, db, bson.D{{Key: "listCollections", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	listIdx, err := runRaw(t, db, bson.D{{Key: "listIndexes", Value: "order"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		reply bson.Raw
		want  string
	}{
		{"find", find, "firstBatch id ns"},
		{"getMore", getMore, "nextBatch id ns"},
		{"aggregate", agg, "firstBatch id ns"},
		{"listCollections", listColls, "id ns firstBatch"},
		{"listIndexes", listIdx, "id ns firstBatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(keysOf(t, tt.reply), " "); got != "cursor ok" {
				t.Errorf("reply fields %q, want %q", got, "cursor ok")
			}
			if got := strings.Join(keysOf(t, tt.reply.Lookup("cursor").Document()), " "); got != tt.want {
				t.Errorf("cursor fields %q, want %q", got, tt.want)
			}
		})
	}
	if ns := listIdx.Lookup("cursor", "ns").StringValue(); ns != "test.order" {
		t.Errorf("listIndexes ns %q, want test.order", ns)
	}
	if ns := listColls.Lookup("cursor", "ns").StringValue(); ns != "test.$cmd.listCollections" {
		t.Errorf("listCollections ns %q, want test.$cmd.listCollections", ns)
	}
}

// TestCursorOptions runs each cursor option of find, aggregate,
// listCollections and listIndexes: honoured (the batch size and whether
// the cursor stays open), validated with MongoDB's code, or refused with
// NotImplemented (238). Batch sizes are IDL safeInt64 fields (doubles
// truncated) validated >= 0 (51024), as in MongoDB 7.0's find_command.idl;
// batchSize 0 returns an empty first batch and an open cursor
// (https://www.mongodb.com/docs/v7.0/reference/command/find/).
func TestCursorOptions(t *testing.T) {
	client, _ := startServer(t)
	numbered(t, client, "opts", 10)
	db := client.Database(testDB)
	if err := db.CreateCollection(t.Context(), "empty"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"l1", "l2", "l3"} {
		if err := db.CreateCollection(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Collection("opts").Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "n", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	find := func(fields ...bson.E) bson.D {
		return append(bson.D{{Key: "find", Value: "opts"}, {Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}}, fields...)
	}
	agg := func(cursor any) bson.D {
		return bson.D{{Key: "aggregate", Value: "opts"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: cursor}}
	}
	e := func(k string, v any) bson.E { return bson.E{Key: k, Value: v} }
	tests := []struct {
		name     string
		cmd      bson.D
		wantCode int
		wantDocs int
		wantOpen bool
	}{
		{"find default batch", find(), 0, 10, false},
		{"find batchSize 0", find(e("batchSize", 0)), 0, 0, true},
		{"find batchSize 0 on an empty collection", bson.D{{Key: "find", Value: "empty"}, {Key: "batchSize", Value: 0}}, 0, 0, true},
		{"find batchSize 0 on a missing collection", bson.D{{Key: "find", Value: "missing"}, {Key: "batchSize", Value: 0}}, 0, 0, false},
		{"find batchSize 3", find(e("batchSize", 3)), 0, 3, true},
		{"find batchSize 2.9 truncated", find(e("batchSize", 2.9)), 0, 2, true},
		{"find batchSize -0.5 truncated to 0", find(e("batchSize", -0.5)), 0, 0, true},
		{"find batchSize int64", find(e("batchSize", int64(4))), 0, 4, true},
		{"find batchSize decimal", find(e("batchSize", bson.NewDecimal128(0x3040000000000000, 5))), 0, 5, true},
		{"find batchSize -1", find(e("batchSize", -1)), 51024, 0, false},
		{"find batchSize string", find(e("batchSize", "2")), 14, 0, false},
		{"find limit 4", find(e("limit", 4)), 0, 4, false},
		{"find limit 2.5 truncated", find(e("limit", 2.5)), 0, 2, false},
		{"find limit -1", find(e("limit", -1)), 51024, 0, false},
		{"find skip 8", find(e("skip", 8)), 0, 2, false},
		{"find skip -1", find(e("skip", -1)), 51024, 0, false},
		{"find limit above batchSize", find(e("limit", 6), e("batchSize", 3)), 0, 3, true},
		{"find limit equals batchSize", find(e("limit", 3), e("batchSize", 3)), 0, 3, false},
		{"find singleBatch", find(e("batchSize", 3), e("singleBatch", true)), 0, 3, false},
		{"find singleBatch batchSize 0", find(e("batchSize", 0), e("singleBatch", true)), 0, 0, false},
		{"find singleBatch without batchSize", find(e("singleBatch", true)), 0, 10, false},
		{"find noCursorTimeout", find(e("batchSize", 3), e("noCursorTimeout", true)), 0, 3, true},
		{"find allowPartialResults", find(e("allowPartialResults", true)), 0, 10, false},
		{"find readOnce", find(e("readOnce", true)), 0, 10, false},
		{"find let in $expr", find(e("filter", bson.D{{Key: "$expr", Value: bson.D{{Key: "$lt", Value: bson.A{"$n", "$$cut"}}}}}), e("let", bson.D{{Key: "cut", Value: 4}})), 0, 4, false},
		{"find let computed from an earlier variable", find(e("filter", bson.D{{Key: "$expr", Value: bson.D{{Key: "$eq", Value: bson.A{"$n", "$$b"}}}}}), e("let", bson.D{{Key: "a", Value: 3}, {Key: "b", Value: bson.D{{Key: "$add", Value: bson.A{"$$a", 1}}}}})), 0, 1, false},
		{"find undefined variable", find(e("filter", bson.D{{Key: "$expr", Value: "$$nope"}})), 17276, 0, false},
		{"find let with an invalid name", find(e("let", bson.D{{Key: "Cut", Value: 4}})), 9, 0, false},
		{"find let not a document", find(e("let", 4)), 14, 0, false},
		{"find $_requestResumeToken sorted by _id", find(e("$_requestResumeToken", true), e("hint", bson.D{{Key: "$natural", Value: 1}})), 2, 0, false},
		{"find showRecordId", find(e("showRecordId", true)), 0, 10, false},
		{"find returnKey", find(e("returnKey", true)), 0, 10, false},
		{"aggregate default batch", agg(bson.D{}), 0, 10, false},
		{"aggregate batchSize 0", agg(bson.D{{Key: "batchSize", Value: 0}}), 0, 0, true},
		{"aggregate batchSize 4", agg(bson.D{{Key: "batchSize", Value: 4}}), 0, 4, true},
		{"aggregate batchSize 1.5 truncated", agg(bson.D{{Key: "batchSize", Value: 1.5}}), 0, 1, true},
		{"aggregate batchSize -1", agg(bson.D{{Key: "batchSize", Value: -1}}), 51024, 0, false},
		{"aggregate batchSize string", agg(bson.D{{Key: "batchSize", Value: "1"}}), 14, 0, false},
		{"aggregate unknown cursor option", agg(bson.D{{Key: "batch", Value: 1}}), 40415, 0, false},
		{"aggregate cursor not a document", agg(1), 14, 0, false},
		{"aggregate let in $match $expr", bson.D{{Key: "aggregate", Value: "opts"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$gte", Value: bson.A{"$n", "$$low"}}}}}}}}},
			{Key: "cursor", Value: bson.D{}}, {Key: "let", Value: bson.D{{Key: "low", Value: 7}}}}, 0, 3, false},
		{"aggregate let with an invalid name", bson.D{{Key: "aggregate", Value: "opts"}, {Key: "pipeline", Value: bson.A{}},
			{Key: "cursor", Value: bson.D{}}, {Key: "let", Value: bson.D{{Key: "_low", Value: 7}}}}, 9, 0, false},
		{"listCollections all", bson.D{{Key: "listCollections", Value: 1}}, 0, 5, false},
		{"listCollections batchSize 2", bson.D{{Key: "listCollections", Value: 1}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 2}}}}, 0, 2, true},
		{"listCollections batchSize 0", bson.D{{Key: "listCollections", Value: 1}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}}, 0, 0, true},
		{"listCollections batchSize 5 of 5", bson.D{{Key: "listCollections", Value: 1}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 5}}}}, 0, 5, false},
		{"listCollections batchSize 0 of none", bson.D{{Key: "listCollections", Value: 1}, {Key: "filter", Value: bson.D{{Key: "name", Value: "none"}}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}}, 0, 0, false},
		{"listCollections batchSize -1", bson.D{{Key: "listCollections", Value: 1}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: -1}}}}, 51024, 0, false},
		{"listIndexes all", bson.D{{Key: "listIndexes", Value: "opts"}}, 0, 2, false},
		{"listIndexes batchSize 1", bson.D{{Key: "listIndexes", Value: "opts"}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 1}}}}, 0, 1, true},
		{"listIndexes batchSize string", bson.D{{Key: "listIndexes", Value: "opts"}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: "1"}}}}, 14, 0, false},
		{"listIndexes unknown field", bson.D{{Key: "listIndexes", Value: "opts"}, {Key: "bogus", Value: 1}}, 40415, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := runRaw(t, db, tt.cmd)
			if tt.wantCode != 0 {
				requireCode(t, err, tt.wantCode, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			batch, id := batchOf(t, reply)
			if len(batch) != tt.wantDocs {
				t.Errorf("first batch holds %d documents, want %d", len(batch), tt.wantDocs)
			}
			if open := id != 0; open != tt.wantOpen {
				t.Errorf("cursor id %d: open = %v, want %v", id, open, tt.wantOpen)
			}
			if id != 0 {
				coll := strings.TrimPrefix(reply.Lookup("cursor", "ns").StringValue(), testDB+".")
				if _, err := runRaw(t, db, bson.D{{Key: "killCursors", Value: coll}, {Key: "cursors", Value: bson.A{id}}}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestBatchSizeZeroThenGetMore proves a cursor opened with batchSize 0
// serves every document through getMore, as in MongoDB's
// find_getmore_cmd.js: the first getMore with batchSize 5 returns 5.
func TestBatchSizeZeroThenGetMore(t *testing.T) {
	client, _ := startServer(t)
	numbered(t, client, "zero", 12)
	db := client.Database(testDB)
	for _, cmd := range []bson.D{
		{{Key: "find", Value: "zero"}, {Key: "batchSize", Value: 0}},
		{{Key: "aggregate", Value: "zero"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 0}}}},
	} {
		t.Run(cmd[0].Key, func(t *testing.T) {
			reply, err := runRaw(t, db, cmd)
			if err != nil {
				t.Fatal(err)
			}
			batch, id := batchOf(t, reply)
			if len(batch) != 0 || id == 0 {
				t.Fatalf("first batch of %d, id %d: want empty and open", len(batch), id)
			}
			reply, err = runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "zero"}, {Key: "batchSize", Value: int32(5)}})
			if err != nil {
				t.Fatal(err)
			}
			batch, id2 := batchOf(t, reply)
			if len(batch) != 5 || id2 != id {
				t.Fatalf("getMore returned %d documents, id %d: want 5 and %d", len(batch), id2, id)
			}
			reply, err = runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "zero"}})
			if err != nil {
				t.Fatal(err)
			}
			if batch, id2 = batchOf(t, reply); len(batch) != 7 || id2 != 0 {
				t.Fatalf("last getMore returned %d documents, id %d: want 7 and 0", len(batch), id2)
			}
		})
	}
}

// TestTailableCursors proves a tailable find on an empty capped
// collection opens no cursor (MongoDB keeps one only when the collection
// has records), one on a non-empty collection stays open past its last
// document, and getMore's maxTimeMS is accepted only on an awaitData
// cursor (BadValue otherwise), as in MongoDB's getmore_cmd.cpp.
func TestTailableCursors(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	if err := db.RunCommand(t.Context(), bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	tail := func(await bool) (bson.Raw, error) {
		cmd := bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}}
		if await {
			cmd = append(cmd, bson.E{Key: "awaitData", Value: true})
		}
		return runRaw(t, db, cmd)
	}
	reply, err := tail(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, id := batchOf(t, reply); id != 0 {
		t.Fatalf("tailable cursor on an empty capped collection: id %d, want 0", id)
	}
	if _, err := db.Collection("capped").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, await := range []bool{false, true} {
		reply, err := tail(await)
		if err != nil {
			t.Fatal(err)
		}
		batch, id := batchOf(t, reply)
		if len(batch) != 1 || id == 0 {
			t.Fatalf("awaitData %v: %d documents, id %d; want 1 and an open cursor", await, len(batch), id)
		}
		_, err = runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "capped"}, {Key: "maxTimeMS", Value: 10}})
		if await {
			if err != nil {
				t.Fatalf("getMore with maxTimeMS on an awaitData cursor: %v", err)
			}
		} else {
			requireCode(t, err, 2, "BadValue")
		}
	}
}

// TestFindLet proves find's let variables (MongoDB 5.0+,
// https://www.mongodb.com/docs/v7.0/reference/command/find/) are usable
// in the filter's $expr and in the projection's computed fields.
func TestFindLet(t *testing.T) {
	client, _ := startServer(t)
	numbered(t, client, "let", 10)
	reply, err := runRaw(t, client.Database(testDB), bson.D{
		{Key: "find", Value: "let"},
		{Key: "filter", Value: bson.D{{Key: "$expr", Value: bson.D{{Key: "$gte", Value: bson.A{"$n", "$$low"}}}}}},
		{Key: "projection", Value: bson.D{{Key: "_id", Value: 0}, {Key: "n", Value: 1}, {Key: "scaled", Value: bson.D{{Key: "$multiply", Value: bson.A{"$n", "$$factor"}}}}}},
		{Key: "sort", Value: bson.D{{Key: "n", Value: 1}}},
		{Key: "let", Value: bson.D{{Key: "low", Value: 8}, {Key: "factor", Value: 10}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	batch, _ := batchOf(t, reply)
	var got []string
	for _, d := range batch {
		got = append(got, d.Document().String())
	}
	want := []string{`{"n": {"$numberInt":"8"},"scaled": {"$numberInt":"80"}}`, `{"n": {"$numberInt":"9"},"scaled": {"$numberInt":"90"}}`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// TestCursorExactFill proves when a batch that ends with the last result
// closes the cursor, as MongoDB decides it (isEOF, in find_cmd.cpp and
// getmore_cmd.cpp): a scan does not know it has reached its end until it
// looks, so its cursor stays open and the next getMore returns an empty
// batch; a reached limit or a drained in-memory sort is known, and closes
// the cursor with the batch. An aggregation closes only on reaching its
// end within a batch.
func TestCursorExactFill(t *testing.T) {
	client, _ := startServer(t)
	numbered(t, client, "exact", 6)
	db := client.Database(testDB)
	tests := []struct {
		name       string
		cmd        bson.D
		openAfter6 bool
	}{
		{"collection scan", bson.D{{Key: "find", Value: "exact"}, {Key: "batchSize", Value: 3}}, true},
		{"in-memory sort", bson.D{{Key: "find", Value: "exact"}, {Key: "sort", Value: bson.D{{Key: "n", Value: -1}}}, {Key: "batchSize", Value: 3}}, false},
		{"limit reached", bson.D{{Key: "find", Value: "exact"}, {Key: "limit", Value: 6}, {Key: "batchSize", Value: 3}}, false},
		{"limit not reached", bson.D{{Key: "find", Value: "exact"}, {Key: "limit", Value: 7}, {Key: "batchSize", Value: 3}}, true},
		{"aggregate", bson.D{{Key: "aggregate", Value: "exact"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 3}}}}, true},
		{"aggregate with $sort", bson.D{{Key: "aggregate", Value: "exact"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$sort", Value: bson.D{{Key: "n", Value: -1}}}}}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 3}}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := runRaw(t, db, tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			batch, id := batchOf(t, reply)
			if len(batch) != 3 || id == 0 {
				t.Fatalf("first batch of %d, id %d: want 3 and open", len(batch), id)
			}
			getMore := bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "exact"}, {Key: "batchSize", Value: 3}}
			reply, err = runRaw(t, db, getMore)
			if err != nil {
				t.Fatal(err)
			}
			batch, next := batchOf(t, reply)
			if len(batch) != 3 || (next != 0) != tt.openAfter6 {
				t.Fatalf("second batch of %d, id %d: want 3, open %v", len(batch), next, tt.openAfter6)
			}
			if next == 0 {
				return
			}
			reply, err = runRaw(t, db, getMore)
			if err != nil {
				t.Fatal(err)
			}
			if batch, next = batchOf(t, reply); len(batch) != 0 || next != 0 {
				t.Fatalf("last batch of %d, id %d: want empty and closed", len(batch), next)
			}
		})
	}
}

// TestTailableCursorOptions: a tailable find applies skip to its start and
// limit to all its batches together, after which it stays open and returns
// nothing, as in MongoDB; its sort may be {} or {$natural: 1} only (any
// number equal to 1), else the find fails as it parses; on a
// collection that does not exist it opens no cursor; a getMore fails with
// CappedPositionLost (136) once the collection evicted the last document
// it returned, and with QueryPlanKilled (175) once the collection is
// dropped.
func TestTailableCursorOptions(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	if err := db.RunCommand(t.Context(), bson.D{{Key: "create", Value: "capped"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	capped := db.Collection("capped")
	insert := func(ids ...int) {
		t.Helper()
		for _, id := range ids {
			if _, err := capped.InsertOne(t.Context(), bson.D{{Key: "_id", Value: id}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := func(batch []bson.RawValue) []int64 {
		var out []int64
		for _, d := range batch {
			out = append(out, d.Document().Lookup("_id").AsInt64())
		}
		return out
	}
	getMore := func(id int64) ([]int64, int64, error) {
		reply, err := runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "capped"}})
		if err != nil {
			return nil, 0, err
		}
		batch, next := batchOf(t, reply)
		return ids(batch), next, nil
	}
	insert(1, 2, 3, 4)
	reply, err := runRaw(t, db, bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}, {Key: "skip", Value: 1}, {Key: "limit", Value: 4}, {Key: "sort", Value: bson.D{}}})
	if err != nil {
		t.Fatal(err)
	}
	batch, id := batchOf(t, reply)
	if got := ids(batch); fmt.Sprint(got) != "[2 3 4]" || id == 0 {
		t.Fatalf("first batch %v, cursor %d: want [2 3 4] and an open cursor", got, id)
	}
	insert(5, 6)
	if got, next, err := getMore(id); err != nil || fmt.Sprint(got) != "[5]" || next == 0 {
		t.Fatalf("getMore: %v, cursor %d (%v): want [5], the limit's last, and an open cursor", got, next, err)
	}
	if got, next, err := getMore(id); err != nil || len(got) != 0 || next == 0 {
		t.Fatalf("getMore past the limit: %v, cursor %d (%v): want nothing and an open cursor", got, next, err)
	}
	// validateFindCommandRequest's messages, unprefixed: the find is
	// refused as it parses, $natural's own rule first
	for _, c := range []struct {
		sort bson.D
		msg  string
	}{
		{bson.D{{Key: "$natural", Value: -1}}, "cannot use tailable option with a sort other than {$natural: 1}"},
		{bson.D{{Key: "x", Value: 1}}, "cannot use tailable option with a sort other than {$natural: 1}"},
		{bson.D{{Key: "$natural", Value: 1}, {Key: "x", Value: 1}}, "$natural sort cannot be set to a value other than -1 or 1."},
	} {
		_, err := runRaw(t, db, bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}, {Key: "sort", Value: c.sort}})
		requireError(t, err, 2, "BadValue", c.msg)
	}
	if _, err := runRaw(t, db, bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}, {Key: "sort", Value: bson.D{{Key: "$natural", Value: 1.0}}}}); err != nil {
		t.Fatalf("tailable find sorted {$natural: 1.0}: %v", err)
	}
	reply, err = runRaw(t, db, bson.D{{Key: "find", Value: "nothere"}, {Key: "tailable", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	if batch, id := batchOf(t, reply); len(batch) != 0 || id != 0 {
		t.Fatalf("tailable find of a missing collection: %d documents, cursor %d; want none", len(batch), id)
	}
	// eviction past the cursor's position
	reply, err = runRaw(t, db, bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}, {Key: "batchSize", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, id = batchOf(t, reply)
	pad := strings.Repeat("x", 500)
	for i := 100; i < 120; i++ {
		if _, err := capped.InsertOne(t.Context(), bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: pad}}); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = getMore(id)
	requireCode(t, err, 136, "CappedPositionLost")
	// the collection dropped under an open cursor
	reply, err = runRaw(t, db, bson.D{{Key: "find", Value: "capped"}, {Key: "tailable", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	_, id = batchOf(t, reply)
	if err := capped.Drop(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, _, err = getMore(id)
	requireCode(t, err, 175, "QueryPlanKilled")
}

// TestKillCursorInUse: killCursors on a cursor a getMore is using (an
// awaitData getMore waiting for documents) reports it killed and ends that
// getMore with CursorKilled (237), as MongoDB's CursorManager::killCursor
// kills the operation that has the cursor pinned; the cursor is gone
// afterwards (43).
func TestKillCursorInUse(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	if err := db.RunCommand(t.Context(), bson.D{{Key: "create", Value: "tailkill"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("tailkill").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	reply, err := runRaw(t, db, bson.D{{Key: "find", Value: "tailkill"}, {Key: "tailable", Value: true}, {Key: "awaitData", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	_, id := batchOf(t, reply)
	getMore := bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "tailkill"}, {Key: "maxTimeMS", Value: 10000}}
	waited := make(chan error, 1)
	go func() {
		_, err := runRaw(t, db, getMore)
		waited <- err
	}()
	// wait until the getMore has the cursor checked out (currentOp shows
	// it using the cursor)
	for deadline := time.Now().Add(5 * time.Second); ; {
		cur, err := client.Database("admin").Aggregate(t.Context(), bson.A{
			bson.D{{Key: "$currentOp", Value: bson.D{}}},
			bson.D{{Key: "$match", Value: bson.D{{Key: "cursor.cursorId", Value: id}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		found := cur.Next(t.Context())
		cur.Close(t.Context())
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiting getMore never had the cursor")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// (outside the cursor's session, whose getMore holds it)
	reply, err = db.RunCommand(t.Context(), bson.D{{Key: "killCursors", Value: "tailkill"}, {Key: "cursors", Value: bson.A{id}}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if killed, _ := reply.Lookup("cursorsKilled").Array().Values(); len(killed) != 1 {
		t.Fatalf("killCursors of a cursor in use: %s", reply)
	}
	select {
	case err := <-waited:
		requireCode(t, err, 237, "CursorKilled")
	case <-time.After(5 * time.Second):
		t.Fatal("the getMore of a killed cursor kept waiting")
	}
	_, err = runRaw(t, db, getMore[:2])
	requireCode(t, err, 43, "CursorNotFound")
}

// TestCappedScanPositionLost: a plain find over a capped collection, in
// insertion order, fails its getMore with CappedPositionLost (136) once
// the last document it returned was evicted, as MongoDB's collection scan
// does when it cannot restore its position (jstests capped_max1.js); one
// whose position survives carries on with the documents still there.
func TestCappedScanPositionLost(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	if err := db.RunCommand(t.Context(), bson.D{{Key: "create", Value: "cmax"}, {Key: "capped", Value: true}, {Key: "size", Value: 65536}, {Key: "max", Value: 10}}).Err(); err != nil {
		t.Fatal(err)
	}
	coll := db.Collection("cmax")
	insert := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: i}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	insert(0, 10)
	open := func() int64 {
		t.Helper()
		reply, err := runRaw(t, db, bson.D{{Key: "find", Value: "cmax"}, {Key: "batchSize", Value: 4}})
		if err != nil {
			t.Fatal(err)
		}
		_, id := batchOf(t, reply)
		return id
	}
	getMore := func(id int64) (bson.Raw, error) {
		return runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "cmax"}})
	}
	// Two evictions leave document 3, the last returned: the scan goes on.
	id := open()
	insert(10, 12)
	reply, err := getMore(id)
	if err != nil {
		t.Fatalf("getMore with its position kept: %v", err)
	}
	if batch, _ := batchOf(t, reply); len(batch) == 0 || batch[0].Document().Lookup("_id").AsInt64() != 4 {
		t.Fatalf("getMore returned %v, want to go on from 4", batch)
	}
	// Evicting every document, the last returned (5) too, loses the position.
	id = open()
	insert(12, 30)
	_, err = getMore(id)
	requireCode(t, err, 136, "CappedPositionLost")
}
