package driver_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// recordIDOf is the $recordId a document ends with: binary data of
// subtype 0, as MongoDB shows a clustered collection's record ids.
func recordIDOf(t *testing.T, doc bson.Raw) []byte {
	t.Helper()
	elems, err := doc.Elements()
	if err != nil || len(elems) == 0 || elems[len(elems)-1].Key() != "$recordId" {
		t.Fatalf("%s does not end with $recordId", doc)
	}
	sub, data, ok := elems[len(elems)-1].Value().BinaryOK()
	if !ok || sub != 0 {
		t.Fatalf("$recordId of %s is not binary data of subtype 0", doc)
	}
	return data
}

// TestShowRecordID: showRecordId ends each document with its record id,
// after a projection's fields, but not returnKey's key, which replaces the
// projection showRecordId adds to, as in MongoDB; {$meta: "recordId"}
// gives the same value in a find's projection and an aggregation's stage;
// a collection scan reads the documents in record id order.
func TestShowRecordID(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := db.Collection("recordids")
	docs := []any{
		bson.D{{Key: "_id", Value: "b"}, {Key: "a", Value: int32(1)}, {Key: "x", Value: "keep"}},
		bson.D{{Key: "_id", Value: int32(7)}, {Key: "a", Value: int32(2)}},
		bson.D{{Key: "_id", Value: bson.NewObjectID()}, {Key: "a", Value: int32(3)}},
		bson.D{{Key: "_id", Value: 2.5}, {Key: "a", Value: int32(4)}},
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	find := func(extra ...bson.E) []bson.RawValue {
		t.Helper()
		reply, err := runRaw(t, db, append(bson.D{{Key: "find", Value: "recordids"}, {Key: "showRecordId", Value: true}}, extra...))
		if err != nil {
			t.Fatal(err)
		}
		batch, _ := batchOf(t, reply)
		return batch
	}
	byID := map[string][]byte{}
	var scanned [][]byte
	for _, v := range find(bson.E{Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}}) {
		id := recordIDOf(t, v.Document())
		byID[v.Document().Lookup("_id").String()] = id
		scanned = append(scanned, id)
	}
	if len(byID) != 4 || !slices.IsSortedFunc(scanned, bytes.Compare) {
		t.Fatalf("a collection scan's record ids are not distinct and increasing: %x", scanned)
	}
	check := func(what string, batch []bson.RawValue, fields ...string) {
		t.Helper()
		if len(batch) == 0 {
			t.Fatalf("%s: no documents", what)
		}
		for _, v := range batch {
			d := v.Document()
			elems, _ := d.Elements()
			var keys []string
			for _, e := range elems {
				keys = append(keys, e.Key())
			}
			if want := append(slices.Clone(fields), "$recordId"); !slices.Equal(keys, want) {
				t.Fatalf("%s: %s has fields %v, want %v", what, d, keys, want)
			}
		}
	}
	check("projection", find(bson.E{Key: "projection", Value: bson.D{{Key: "a", Value: 1}}}, bson.E{Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gte", Value: 2}}}}}), "_id", "a")
	check("covered projection", find(bson.E{Key: "projection", Value: bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}}}, bson.E{Key: "filter", Value: bson.D{{Key: "a", Value: 2}}}), "a")
	for _, v := range find(bson.E{Key: "returnKey", Value: true}, bson.E{Key: "hint", Value: "a_1"}) {
		if elems, _ := v.Document().Elements(); len(elems) != 1 || elems[0].Key() != "a" {
			t.Fatalf("returnKey with showRecordId gave %s, want the key {a} alone", v)
		}
	}
	sorted := find(bson.E{Key: "sort", Value: bson.D{{Key: "a", Value: -1}}}, bson.E{Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}})
	check("sorted", sorted[:1], "_id", "a")
	for _, v := range append(sorted, find(bson.E{Key: "hint", Value: "a_1"})...) {
		if got := recordIDOf(t, v.Document()); !bytes.Equal(got, byID[v.Document().Lookup("_id").String()]) {
			t.Fatalf("%s: record id %x, the collection scan gave %x", v.Document(), got, byID[v.Document().Lookup("_id").String()])
		}
	}
	meta := bson.D{{Key: "rid", Value: bson.D{{Key: "$meta", Value: "recordId"}}}}
	projected := findAll(t, coll, bson.D{}, options.Find().SetProjection(meta))
	agg, err := coll.Aggregate(t.Context(), bson.A{bson.D{{Key: "$match", Value: bson.D{}}}, bson.D{{Key: "$project", Value: meta}}})
	if err != nil {
		t.Fatal(err)
	}
	var aggregated []bson.Raw
	if err := agg.All(t.Context(), &aggregated); err != nil {
		t.Fatal(err)
	}
	covered := findAll(t, coll, bson.D{{Key: "a", Value: 2}}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "a", Value: 1}, {Key: "rid", Value: bson.D{{Key: "$meta", Value: "recordId"}}}}))
	if _, rid, _ := covered[0].Lookup("rid").BinaryOK(); len(covered) != 1 || !bytes.Equal(rid, byID[`{"$numberInt":"7"}`]) {
		t.Fatalf("{$meta: \"recordId\"} beside an index's field: %v, want %x", covered, byID[`{"$numberInt":"7"}`])
	}
	for _, d := range append(projected, aggregated...) {
		_, got, _ := d.Lookup("rid").BinaryOK()
		if !bytes.Equal(got, byID[d.Lookup("_id").String()]) {
			t.Fatalf("{$meta: \"recordId\"} of %s, the collection scan gave %x", d, byID[d.Lookup("_id").String()])
		}
	}
	if _, err := runRaw(t, db, bson.D{{Key: "create", Value: "recordview"}, {Key: "viewOn", Value: "recordids"}, {Key: "pipeline", Value: bson.A{}}}); err != nil {
		t.Fatal(err)
	}
	_, err = runRaw(t, db, bson.D{{Key: "find", Value: "recordview"}, {Key: "showRecordId", Value: true}})
	requireError(t, err, 168, "InvalidPipelineOperator", "Option showRecordId not supported in aggregation.")
}

// resumableFind runs find with $_requestResumeToken on a forward natural
// scan, resuming after token when it is set, and returns its reply.
func resumableFind(t *testing.T, db *mongo.Database, coll string, filter bson.D, batchSize int, token bson.Raw) (bson.Raw, error) {
	t.Helper()
	cmd := bson.D{{Key: "find", Value: coll}, {Key: "filter", Value: filter}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}},
		{Key: "$_requestResumeToken", Value: true}, {Key: "batchSize", Value: int32(batchSize)}}
	if token != nil {
		cmd = append(cmd, bson.E{Key: "$_resumeAfter", Value: token})
	}
	return runRaw(t, db, cmd)
}

// tokenOf is a cursor reply's postBatchResumeToken, after its batch.
func tokenOf(t *testing.T, reply bson.Raw) bson.Raw {
	t.Helper()
	elems, _ := reply.Lookup("cursor").Document().Elements()
	if len(elems) < 2 || elems[1].Key() != "postBatchResumeToken" {
		t.Fatalf("no postBatchResumeToken after the batch: %s", reply)
	}
	return elems[1].Value().Document()
}

// TestResumableScan is model-based: a scan with $_requestResumeToken is
// read a few random batches at a time, then given up, and another find
// resumes after the last token it reported, until the end. Together they
// return exactly the documents one plain natural-order find returns, in
// its order; the last token names the last document of the collection,
// whether it matched or not.
func TestResumableScan(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := db.Collection("resumable")
	r := rand.New(rand.NewPCG(7, 9))
	var docs []any
	taken := map[string]bool{}
	for i := range 300 {
		var id any = int32(r.IntN(10000))
		switch r.IntN(3) {
		case 1:
			id = fmt.Sprintf("k%05d", r.IntN(10000))
		case 2:
			id = bson.NewObjectID()
		}
		if k := fmt.Sprintf("%T %v", id, id); !taken[k] {
			taken[k] = true
			docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "n", Value: int32(i)}, {Key: "odd", Value: i%3 == 1}})
		}
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	all := findAll(t, coll, bson.D{}, options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}).SetShowRecordID(true))
	lastID := recordIDOf(t, all[len(all)-1])
	for round := range 20 {
		filter := bson.D{}
		if round%2 == 1 {
			filter = bson.D{{Key: "odd", Value: true}}
		}
		want := ids(findAll(t, coll, filter, options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}})))
		var got []bson.Raw
		var token bson.Raw
		for scans := 0; ; scans++ {
			if scans > len(all) {
				t.Fatal("the resumed scans do not end")
			}
			reply, err := resumableFind(t, db, "resumable", filter, 1+r.IntN(40), token)
			if err != nil {
				t.Fatal(err)
			}
			batch, id := batchOf(t, reply)
			token = tokenOf(t, reply)
			for batches := r.IntN(3); ; batches-- {
				for _, v := range batch {
					got = append(got, v.Document())
				}
				if id == 0 || batches == 0 {
					break
				}
				more, err := runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "resumable"}, {Key: "batchSize", Value: int32(1 + r.IntN(40))}})
				if err != nil {
					t.Fatal(err)
				}
				batch, id = batchOf(t, more)
				token = tokenOf(t, more)
			}
			if id == 0 {
				break
			}
			if _, err := runRaw(t, db, bson.D{{Key: "killCursors", Value: "resumable"}, {Key: "cursors", Value: bson.A{id}}}); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(ids(got), want) {
			t.Fatalf("round %d: the resumed scans returned\n%v\nwant\n%v", round, ids(got), want)
		}
		if _, rid, ok := token.Lookup("$recordId").BinaryOK(); !ok || !bytes.Equal(rid, lastID) {
			t.Fatalf("round %d: the last token is %s, want the last document's record id %x", round, token, lastID)
		}
	}
}

// TestResumableScanErrors: MongoDB's checks of a resumable scan's fields,
// and a resume after a record that is gone.
func TestResumableScanErrors(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := numbered(t, client, "resumeerr", 5)
	natural := bson.D{{Key: "$natural", Value: 1}}
	run := func(cmd ...bson.E) error {
		_, err := runRaw(t, db, append(bson.D{{Key: "find", Value: "resumeerr"}}, cmd...))
		return err
	}
	requireError(t, run(bson.E{Key: "$_requestResumeToken", Value: true}), 2, "BadValue", "hint must be {$natural:1} if 'requestResumeToken' is enabled")
	requireError(t, run(bson.E{Key: "$_requestResumeToken", Value: true}, bson.E{Key: "hint", Value: bson.D{{Key: "$natural", Value: -1}}}), 2, "BadValue", "hint must be {$natural:1} if 'requestResumeToken' is enabled")
	requireError(t, run(bson.E{Key: "$_requestResumeToken", Value: true}, bson.E{Key: "hint", Value: natural}, bson.E{Key: "sort", Value: bson.D{{Key: "n", Value: 1}}}), 2, "BadValue", "sort must be unset or {$natural:1} if 'requestResumeToken' is enabled")
	requireError(t, run(bson.E{Key: "$_resumeAfter", Value: bson.D{{Key: "$recordId", Value: nil}}}), 2, "BadValue", "'requestResumeToken' must be true if 'resumeAfter' is specified")
	malformed := "Malformed resume token: the '_resumeAfter' object must contain exactly one field named '$recordId', of type NumberLong, BinData or jstNULL."
	for _, token := range []bson.D{{{Key: "$recordId", Value: "x"}}, {{Key: "other", Value: int64(1)}}, {{Key: "$recordId", Value: int64(1)}, {Key: "more", Value: 1}}} {
		requireError(t, run(bson.E{Key: "$_requestResumeToken", Value: true}, bson.E{Key: "hint", Value: natural}, bson.E{Key: "$_resumeAfter", Value: token}), 2, "BadValue", malformed)
	}
	requireError(t, run(bson.E{Key: "$_requestResumeToken", Value: true}, bson.E{Key: "hint", Value: natural}, bson.E{Key: "$_resumeAfter", Value: bson.D{{Key: "$recordId", Value: int64(5)}}}),
		211, "KeyNotFound", "Failed to resume collection scan: the recordId from which we are attempting to resume no longer exists in the collection. recordId: RecordId(5)")
	// A resume after the first document, then after it is deleted.
	reply, err := resumableFind(t, db, "resumeerr", bson.D{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	token := tokenOf(t, reply)
	reply, err = resumableFind(t, db, "resumeerr", bson.D{}, 10, token)
	if err != nil {
		t.Fatal(err)
	}
	if batch, _ := batchOf(t, reply); len(batch) != 4 || batch[0].Document().Lookup("n").Int32() != 1 {
		t.Fatalf("resumed after the first document: %s", reply)
	}
	if _, err := coll.DeleteOne(t.Context(), bson.D{{Key: "_id", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	_, rid, _ := token.Lookup("$recordId").BinaryOK()
	_, err = resumableFind(t, db, "resumeerr", bson.D{}, 10, token)
	requireError(t, err, 211, "KeyNotFound", fmt.Sprintf("Failed to resume collection scan: the recordId from which we are attempting to resume no longer exists in the collection. recordId: RecordId(%X)", rid))
	// A null record id starts at the beginning; an empty scan reports null.
	reply, err = resumableFind(t, db, "resumeerr", bson.D{{Key: "n", Value: 99}}, 10, bson.Raw(mustRaw(t, bson.D{{Key: "$recordId", Value: nil}})))
	if err != nil {
		t.Fatal(err)
	}
	if got := tokenOf(t, reply).Lookup("$recordId"); got.Type != bson.TypeBinary {
		t.Fatalf("a scan of the whole collection reported %s", got)
	}
	// An empty collection's scan reports null; a missing one's plan has
	// no scan and reports no token, as MongoDB's EOF plan.
	if _, err := runRaw(t, db, bson.D{{Key: "create", Value: "resumeempty"}}); err != nil {
		t.Fatal(err)
	}
	reply, err = resumableFind(t, db, "resumeempty", bson.D{}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := tokenOf(t, reply).Lookup("$recordId"); got.Type != bson.TypeNull {
		t.Fatalf("a scan of an empty collection reported %s", got)
	}
	reply, err = resumableFind(t, db, "missing", bson.D{}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reply.LookupErr("cursor", "postBatchResumeToken"); err == nil {
		t.Fatalf("a find on a missing collection reported a token: %s", reply)
	}
	if _, err := runRaw(t, db, bson.D{{Key: "create", Value: "resumecapped"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}); err != nil {
		t.Fatal(err)
	}
	_, err = resumableFind(t, db, "resumecapped", bson.D{}, 10, bson.Raw(mustRaw(t, bson.D{{Key: "$recordId", Value: bson.Binary{Data: []byte{1}}}})))
	requireCode(t, err, 238, "NotImplemented")
}

// TestResumeTokenHoldsBack: when a document does not fit the 16 MiB of a
// batch, the batch's token names the last document it holds, and the
// getMore that returns the one held back names that one.
func TestResumeTokenHoldsBack(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := db.Collection("resumebig")
	big := strings.Repeat("x", 6<<20)
	for i := range 3 {
		if _, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: int32(i)}, {Key: "s", Value: big}}); err != nil {
			t.Fatal(err)
		}
	}
	all := findAll(t, coll, bson.D{}, options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}).SetShowRecordID(true).SetProjection(bson.D{{Key: "s", Value: 0}}))
	reply, err := resumableFind(t, db, "resumebig", bson.D{}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	batch, id := batchOf(t, reply)
	if _, rid, _ := tokenOf(t, reply).Lookup("$recordId").BinaryOK(); len(batch) != 2 || !bytes.Equal(rid, recordIDOf(t, all[1])) {
		t.Fatalf("a first batch of %d documents reported %s, want the second document's record id", len(batch), tokenOf(t, reply))
	}
	more, err := runRaw(t, db, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "resumebig"}, {Key: "batchSize", Value: int32(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, rid, _ := tokenOf(t, more).Lookup("$recordId").BinaryOK(); !bytes.Equal(rid, recordIDOf(t, all[2])) {
		t.Fatalf("the getMore returning the held document reported %s", tokenOf(t, more))
	}
}

// TestTextRecordID: the documents of a $text search carry their record
// ids, as MongoDB's TEXT_OR, which gathers record ids, gives every result
// one: {$meta: "recordId"} in a find's projection and an aggregation's
// $project, and find's showRecordId, give the id a collection scan gives
// the document, also for the $text branch of an $or.
func TestTextRecordID(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	coll := db.Collection("textrecordids")
	docs := []any{
		bson.D{{Key: "_id", Value: int32(1)}, {Key: "a", Value: "hello world"}, {Key: "b", Value: int32(0)}},
		bson.D{{Key: "_id", Value: "two"}, {Key: "a", Value: "goodbye"}, {Key: "b", Value: int32(1)}},
		bson.D{{Key: "_id", Value: 3.5}, {Key: "a", Value: "hello"}, {Key: "b", Value: int32(0)}},
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	for _, keys := range []bson.D{{{Key: "a", Value: "text"}}, {{Key: "b", Value: 1}}} {
		if _, err := coll.Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: keys}); err != nil {
			t.Fatal(err)
		}
	}
	byID := map[string][]byte{}
	for _, d := range findAll(t, coll, bson.D{}, options.Find().SetHint(bson.D{{Key: "$natural", Value: 1}}).SetShowRecordID(true)) {
		byID[d.Lookup("_id").String()] = recordIDOf(t, d)
	}
	text := bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: "hello"}}}}
	meta := bson.D{{Key: "rid", Value: bson.D{{Key: "$meta", Value: "recordId"}}}}
	check := func(what string, got []bson.Raw, n int, rid func(bson.Raw) []byte) {
		t.Helper()
		if len(got) != n {
			t.Fatalf("%s: %d documents, want %d: %s", what, len(got), n, docsString(got))
		}
		for _, d := range got {
			if want := byID[d.Lookup("_id").String()]; want == nil || !bytes.Equal(rid(d), want) {
				t.Fatalf("%s: %s has record id %x, the collection scan gave %x", what, d, rid(d), want)
			}
		}
	}
	fromMeta := func(d bson.Raw) []byte { _, b, _ := d.Lookup("rid").BinaryOK(); return b }
	check("find projection", findAll(t, coll, text, options.Find().SetProjection(meta)), 2, fromMeta)
	check("$project", aggregateAll(t, coll, bson.A{bson.D{{Key: "$match", Value: text}}, bson.D{{Key: "$project", Value: meta}}}), 2, fromMeta)
	check("showRecordId", findAll(t, coll, text, options.Find().SetShowRecordID(true)), 2, func(d bson.Raw) []byte { return recordIDOf(t, d) })
	or := bson.D{{Key: "$or", Value: bson.A{text, bson.D{{Key: "b", Value: int32(1)}}}}}
	check("$or", findAll(t, coll, or, options.Find().SetProjection(meta)), 3, fromMeta)
}
