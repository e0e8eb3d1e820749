package driver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestIndexLimit checks MongoDB's limit of 64 indexes per collection, the
// _id index included: the 65th fails with CannotCreateIndex (67) and
// MongoDB's message, and a createIndexes that would pass the limit builds
// none of its indexes.
// https://www.mongodb.com/docs/manual/reference/limits/#mongodb-limit-Number-of-Indexes-per-Collection
func TestIndexLimit(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	coll := db.Collection("many")

	// Two at once that would make 65: refused, and neither is built.
	var specs bson.A
	for i := range 63 {
		specs = append(specs, bson.D{{Key: "key", Value: bson.D{{Key: fmt.Sprintf("f%d", i), Value: 1}}}, {Key: "name", Value: fmt.Sprintf("f%d_1", i)}})
	}
	over := append(append(bson.A{}, specs...), bson.D{{Key: "key", Value: bson.D{{Key: "g", Value: -1.0}}}, {Key: "name", Value: "g"}})
	err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "many"}, {Key: "indexes", Value: over}}).Err()
	requireCode(t, err, 67, "CannotCreateIndex")
	if want := "add index fails, too many indexes for test.many key:{ g: -1.0 }"; errMsg(err) != want {
		t.Fatalf("message %q, want %q", errMsg(err), want)
	}
	if n := countIndexes(t, coll); n != 1 {
		t.Fatalf("%d indexes after the refused createIndexes, want 1", n)
	}

	if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "many"}, {Key: "indexes", Value: specs}}).Err(); err != nil {
		t.Fatalf("63 indexes: %v", err)
	}
	if n := countIndexes(t, coll); n != 64 {
		t.Fatalf("%d indexes, want 64", n)
	}
	_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "x", Value: 1}, {Key: "y", Value: "hashed"}}})
	requireCode(t, err, 67, "CannotCreateIndex")
	if want := `add index fails, too many indexes for test.many key:{ x: 1, y: "hashed" }`; errMsg(err) != want {
		t.Fatalf("message %q, want %q", errMsg(err), want)
	}
	// An index that exists is still a no-op at the limit.
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "f0", Value: 1}}}); err != nil {
		t.Fatalf("existing index at the limit: %v", err)
	}
	// Dropping one makes room again.
	if err := coll.Indexes().DropOne(ctx, "f5_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "z", Value: 1}}}); err != nil {
		t.Fatalf("index after a drop: %v", err)
	}
}

// TestIndexLimitClustered checks that the limit counts the entries of the
// index catalog, where a clustered collection's clustered index is none:
// such a collection takes 64 secondary indexes, 65 listed (index_many2.js).
func TestIndexLimitClustered(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	clustered := bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "unique", Value: true}}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "clmany"}, {Key: "clusteredIndex", Value: clustered}}).Err(); err != nil {
		t.Fatal(err)
	}
	var specs bson.A
	for i := range 64 {
		specs = append(specs, bson.D{{Key: "key", Value: bson.D{{Key: fmt.Sprintf("f%d", i), Value: 1}}}, {Key: "name", Value: fmt.Sprintf("f%d_1", i)}})
	}
	var res bson.M
	if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "clmany"}, {Key: "indexes", Value: specs}}).Decode(&res); err != nil {
		t.Fatalf("64 secondary indexes on a clustered collection: %v", err)
	}
	// the counts are of the catalog's entries too (getNumIndexesTotal)
	if res["numIndexesBefore"] != int32(0) || res["numIndexesAfter"] != int32(64) {
		t.Fatalf("reply %v, want numIndexesBefore 0 and numIndexesAfter 64", res)
	}
	if n := countIndexes(t, db.Collection("clmany")); n != 65 {
		t.Fatalf("%d indexes listed, want 65", n)
	}
	_, err := db.Collection("clmany").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "y", Value: 1}}})
	requireCode(t, err, 67, "CannotCreateIndex")
	if want := "add index fails, too many indexes for test.clmany key:{ y: 1 }"; errMsg(err) != want {
		t.Fatalf("message %q, want %q", errMsg(err), want)
	}
}

func countIndexes(t *testing.T, coll *mongo.Collection) int {
	t.Helper()
	specs, err := coll.Indexes().ListSpecifications(context.Background())
	if err != nil {
		var ce mongo.CommandError
		if errors.As(err, &ce) && ce.Code == 26 {
			return 0
		}
		t.Fatal(err)
	}
	return len(specs)
}

func errMsg(err error) string {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

// TestInvalidUTF8Names checks that database and collection names that are
// not valid UTF-8 are refused with InvalidNamespace (73).
func TestInvalidUTF8Names(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	cases := []struct{ db, coll string }{
		{"bad\xffdb", "c"},
		{testDB, "bad\xc3"},
		{testDB, "a\xed\xa0\x80b"}, // an encoded surrogate
	}
	for _, c := range cases {
		_, err := client.Database(c.db).Collection(c.coll).InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
		requireCode(t, err, 73, "InvalidNamespace")
		err = client.Database(c.db).CreateCollection(ctx, c.coll)
		requireCode(t, err, 73, "InvalidNamespace")
	}
	names, err := client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == "bad\xffdb" {
			t.Fatalf("database with an invalid name was created: %q", names)
		}
	}
}

// TestDatabaseNameCharacters checks MongoDB's database naming rules on
// Linux: / \ . space " $ and NUL are refused (73); * < > : | ? only on
// Windows, so they are taken here.
func TestDatabaseNameCharacters(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	for _, c := range []struct {
		db string
		ok bool
	}{
		{"te?st", true}, {"te*st", true}, {"te<>st", true}, {"te:st", true}, {"te|st", true},
		{"te/st", false}, {"te\\st", false}, {"te st", false}, {"te\"st", false}, {"te$st", false}, {"te\x00st", false},
	} {
		_, err := client.Database(c.db).Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}})
		if c.ok {
			if err != nil {
				t.Errorf("%q: %v", c.db, err)
			} else if err := client.Database(c.db).Drop(ctx); err != nil {
				t.Errorf("drop %q: %v", c.db, err)
			}
			continue
		}
		requireCode(t, err, 73, "InvalidNamespace")
	}
}

// TestIntegerExtremesKeepServing sends updates and queries whose numeric
// arguments sit at the edges of their types through the driver: each gets
// MongoDB's result or error, and the server keeps serving the same client.
func TestIntegerExtremesKeepServing(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("extremes")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{3, 1, 2}}}); err != nil {
		t.Fatal(err)
	}
	push := func(clause bson.D) error {
		_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}},
			bson.D{{Key: "$push", Value: bson.D{{Key: "a", Value: append(bson.D{{Key: "$each", Value: bson.A{4}}}, clause...)}}}})
		return err
	}
	// $slice: NumberLong(-9223372036854775808) keeps every element.
	if err := push(bson.D{{Key: "$slice", Value: int64(math.MinInt64)}}); err != nil {
		t.Fatalf("$slice MinInt64: %v", err)
	}
	if err := push(bson.D{{Key: "$position", Value: int64(math.MinInt64)}, {Key: "$slice", Value: int64(math.MaxInt64)}}); err != nil {
		t.Fatalf("$position MinInt64: %v", err)
	}
	var got struct{ A []int }
	if err := coll.FindOne(ctx, bson.D{}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.A) != "[4 3 1 2 4]" {
		t.Fatalf("a = %v, want [4 3 1 2 4]", got.A)
	}
	requireCode(t, push(bson.D{{Key: "$slice", Value: math.NaN()}}), 2, "BadValue")

	_, err := coll.UpdateOne(ctx, bson.D{}, bson.D{{Key: "$set", Value: bson.D{{Key: "a.9223372036854775807", Value: 1}}}})
	requireCode(t, err, 28, "PathNotViable")

	err = coll.Database().RunCommand(ctx, bson.D{{Key: "find", Value: "extremes"}, {Key: "limit", Value: int64(math.MinInt64)}}).Err()
	requireCode(t, err, 51024, "")
	// batchSize is a safeInt64 in MongoDB: an infinite double saturates to
	// the largest long, which is a valid batch size.
	err = coll.Database().RunCommand(ctx, bson.D{{Key: "find", Value: "extremes"}, {Key: "batchSize", Value: math.Inf(1)}}).Err()
	if err != nil {
		t.Fatalf("find with an infinite batchSize: %v", err)
	}
	err = coll.Database().RunCommand(ctx, bson.D{{Key: "find", Value: "extremes"}, {Key: "skip", Value: int64(math.MaxInt64)}, {Key: "limit", Value: int64(math.MaxInt64)}}).Err()
	if err != nil {
		t.Fatalf("find with MaxInt64 skip and limit: %v", err)
	}
	var out bson.Raw
	err = coll.Database().RunCommand(ctx, bson.D{{Key: "aggregate", Value: "extremes"}, {Key: "pipeline", Value: bson.A{
		bson.D{{Key: "$project", Value: bson.D{
			{Key: "s", Value: bson.D{{Key: "$substrBytes", Value: bson.A{"hello", 1, int64(math.MaxInt64)}}}},
			{Key: "m", Value: bson.D{{Key: "$mod", Value: bson.A{int64(math.MinInt64), -1}}}},
		}}},
	}}, {Key: "cursor", Value: bson.D{}}}).Decode(&out)
	if err != nil {
		t.Fatalf("aggregate: %v", err)
	}
	first := out.Lookup("cursor", "firstBatch").Array().Index(0).Document()
	if first.Lookup("s").StringValue() != "ello" || first.Lookup("m").Int64() != 0 {
		t.Fatalf("projected %s", first)
	}
	if err := client.Ping(ctx, nil); err != nil {
		t.Fatalf("ping after the extremes: %v", err)
	}
}

// TestServerStatusConnections checks that serverStatus reports the
// configured connection limit's real remainder.
// https://www.mongodb.com/docs/manual/reference/command/serverStatus/#connections
func TestServerStatusConnections(t *testing.T) {
	cfg := defaultConfig()
	cfg.MaxConnections = 50
	in := startInstance(t, cfg)
	client := connect(t, in)
	var status struct {
		Connections struct {
			Current, Available, TotalCreated, Rejected int32
		}
	}
	if err := client.Database("admin").RunCommand(context.Background(), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&status); err != nil {
		t.Fatal(err)
	}
	c := status.Connections
	if c.Current < 1 || c.Current+c.Available != 50 || c.Rejected != 0 {
		t.Fatalf("connections %+v: current + available should be 50", c)
	}
}

// TestMaxTimeMSRangeEveryCommand checks that maxTimeMS outside [0,
// 2147483647] fails every command with BadValue, as MongoDB parses it for
// all commands.
// https://www.mongodb.com/docs/manual/reference/method/cursor.maxTimeMS/
func TestMaxTimeMSRangeEveryCommand(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, ms := range []any{int64(math.MinInt64), int64(-1), int64(math.MaxInt32) + 1, int64(math.MaxInt64)} {
		for _, cmd := range []bson.D{
			{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}},
			{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "x", Value: 1}}}}},
			{{Key: "ping", Value: 1}},
			{{Key: "find", Value: "c"}},
		} {
			err := db.RunCommand(ctx, append(cmd, bson.E{Key: "maxTimeMS", Value: ms})).Err()
			requireCode(t, err, 2, "BadValue")
		}
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}, {Key: "maxTimeMS", Value: int64(math.MaxInt32)}}).Err(); err != nil {
		t.Fatalf("ping with maxTimeMS 2147483647: %v", err)
	}
}

// TestDocumentsNearTheSizeLimit stores documents close to MongoDB's 16 MiB
// limit, whose size passes TiKV's raft entry limit (8 MiB): insert, read,
// replace, update, a transaction's write and delete all work, and a
// document over the limit is refused with BadValue, as MongoDB's
// fixDocumentForInsert does (jstests/core/max_doc_size.js).
func TestDocumentsNearTheSizeLimit(t *testing.T) {
	client := connect(t, startInstance(t, replSetConfig()))
	ctx := context.Background()
	coll := client.Database(testDB).Collection("large")
	payload := func(c byte, n int) bson.D {
		b := make([]byte, n)
		for i := range b {
			b[i] = c + byte(i%7)
		}
		return bson.D{{Key: "_id", Value: 1}, {Key: "p", Value: bson.Binary{Data: b}}}
	}
	data := func(d bson.Raw) []byte { _, b := d.Lookup("p").Binary(); return b }
	size := func(d bson.Raw) int { return len(data(d)) }
	const n = 15 << 20
	if _, err := coll.InsertOne(ctx, payload('a', n)); err != nil {
		t.Fatal(err)
	}
	got, err := coll.FindOne(ctx, bson.D{}).Raw()
	if err != nil || size(got) != n || data(got)[n-1] != 'a'+byte((n-1)%7) {
		t.Fatalf("read back: %v", err)
	}
	if _, err := coll.ReplaceOne(ctx, bson.D{{Key: "_id", Value: 1}}, payload('b', 12<<20)); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}); err != nil {
		t.Fatal(err)
	}
	got, err = coll.FindOne(ctx, bson.D{}).Raw()
	if err != nil || size(got) != 12<<20 || got.Lookup("x").Int32() != 1 {
		t.Fatalf("after replace and update: %v", err)
	}
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if _, err := sess.WithTransaction(ctx, func(ctx context.Context) (any, error) {
		return coll.InsertOne(ctx, append(payload('c', 10<<20)[1:], bson.E{Key: "_id", Value: 2}))
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 2 {
		t.Fatalf("count %d, %v", n, err)
	}
	if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	_, err = coll.InsertOne(ctx, payload('d', 16<<20))
	requireCode(t, err, 2, "BadValue")
}

// TestKeyLimit: on TiKV, which refuses keys over 8 KiB, a document whose
// _id or index key is longer fails with a write error (NotImplemented)
// and nothing of it is written, the other documents of the batch are; on
// Pebble, which has no such limit, both are stored, as in MongoDB.
func TestKeyLimit(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("keylimit")
	if _, err := coll.Indexes().CreateOne(t.Context(), mongo.IndexModel{Keys: bson.D{{Key: "tag", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("k", 9000)
	docs := []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: long}}, bson.D{{Key: "_id", Value: 2}}}
	_, insErr := coll.InsertMany(t.Context(), docs, options.InsertMany().SetOrdered(false))
	_, updErr := coll.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "tag", Value: long}}}})
	n, err := coll.CountDocuments(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	tagged, err := coll.CountDocuments(t.Context(), bson.D{{Key: "tag", Value: long}})
	if err != nil {
		t.Fatal(err)
	}
	if !testkv.TiKV() {
		if insErr != nil || updErr != nil || n != 3 || tagged != 1 {
			t.Fatalf("insert: %v, update: %v, %d documents, %d tagged; want all stored", insErr, updErr, n, tagged)
		}
		return
	}
	var bwe mongo.BulkWriteException
	if !errors.As(insErr, &bwe) || len(bwe.WriteErrors) != 1 || bwe.WriteErrors[0].Index != 1 || bwe.WriteErrors[0].Code != 238 {
		t.Fatalf("insert: %v, want a NotImplemented write error for the long _id", insErr)
	}
	var we mongo.WriteException
	if !errors.As(updErr, &we) || len(we.WriteErrors) != 1 || we.WriteErrors[0].Code != 238 {
		t.Fatalf("update: %v, want a NotImplemented write error for the long index key", updErr)
	}
	if n != 2 || tagged != 0 {
		t.Fatalf("%d documents, %d tagged; want the two short ones, untagged", n, tagged)
	}
}

// TestIntermediateDocumentsOverTheSizeLimit: a pipeline's stages may build
// documents over 16 MiB for the stages after them ($lookup's matches up
// to 100 MiB, lookup_large_documents.js; $facet's output up to 100 MiB,
// facet_memory_consumption.js), but one reaching the client fails with
// BSONObjectTooLarge, as MongoDB's BSONObj::_assertInvalid does when it
// serialises the result.
func TestIntermediateDocumentsOverTheSizeLimit(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	big, local := db.Collection("intermediate_big"), db.Collection("intermediate_local")
	s := strings.Repeat("x", 7<<20)
	for i := range 3 {
		if _, err := big.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: 1}, {Key: "s", Value: s}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := local.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}, {Key: "k", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	lookup := bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: big.Name()}, {Key: "localField", Value: "k"}, {Key: "foreignField", Value: "k"}, {Key: "as", Value: "r"}}}}
	got := aggregateAll(t, local, mongo.Pipeline{lookup, {{Key: "$project", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$size", Value: "$r"}}}}}}})
	if len(got) != 1 || got[0].Lookup("n").Int32() != 3 {
		t.Fatalf("$lookup of 21 MB then $project: %s", docsString(got))
	}
	_, err := aggregateResult(local, mongo.Pipeline{lookup})
	requireCode(t, err, 10334, "BSONObjectTooLarge")
	if msg := err.Error(); !strings.Contains(msg, "BSONObj size: ") || !strings.Contains(msg, "is invalid. Size must be between 0 and 16793600(16MB) First element: _id: 0") {
		t.Fatalf("message: %s", msg)
	}
	got = aggregateAll(t, big, mongo.Pipeline{{{Key: "$facet", Value: bson.D{{Key: "a", Value: bson.A{}}}}}, {{Key: "$unwind", Value: "$a"}}, {{Key: "$project", Value: bson.D{{Key: "_id", Value: "$a._id"}}}}})
	if len(got) != 3 {
		t.Fatalf("$facet of 21 MB then $unwind: %s", docsString(got))
	}
	_, err = aggregateResult(big, mongo.Pipeline{{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "all", Value: bson.D{{Key: "$push", Value: "$s"}}}}}}})
	requireCode(t, err, 10334, "BSONObjectTooLarge")
}

// TestIntermediateSizeParameters: internalLookupStageIntermediateDocumentMaxSizeBytes
// (a long, at least 16793600) and internalQueryFacetMaxOutputDocSizeBytes
// (a long above 0), both 100 MiB by default, bound a $lookup's matches
// (4568) and a $facet's output (4031700), as query_knobs.idl declares them.
func TestIntermediateSizeParameters(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	admin := client.Database("admin")
	const lookupName, facetName = "internalLookupStageIntermediateDocumentMaxSizeBytes", "internalQueryFacetMaxOutputDocSizeBytes"
	for _, name := range []string{lookupName, facetName} {
		var got bson.Raw
		if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if v, ok := got.Lookup(name).Int64OK(); !ok || v != 100<<20 {
			t.Fatalf("%s default: %v", name, got)
		}
		defer admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: int64(100 << 20)}})
	}
	err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: lookupName, Value: 16793599}}).Err()
	requireError(t, err, 2, "BadValue", "Invalid value for parameter "+lookupName+": 16793599 is not greater than or equal to 16793600")
	err = admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: facetName, Value: 0}}).Err()
	requireCode(t, err, 2, "BadValue")

	db := client.Database(testDB)
	big, local := db.Collection("intermediate_params_big"), db.Collection("intermediate_params_local")
	s := strings.Repeat("x", 7<<20)
	for i := range 4 {
		if _, err := big.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: 1}, {Key: "s", Value: s}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := local.InsertOne(ctx, bson.D{{Key: "_id", Value: 0}, {Key: "k", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	lookup := mongo.Pipeline{{{Key: "$lookup", Value: bson.D{{Key: "from", Value: big.Name()}, {Key: "localField", Value: "k"}, {Key: "foreignField", Value: "k"}, {Key: "as", Value: "r"}}}},
		{{Key: "$project", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$size", Value: "$r"}}}}}}}
	if got := aggregateAll(t, local, lookup); len(got) != 1 || got[0].Lookup("n").Int32() != 4 {
		t.Fatalf("28 MB of matches under the default: %s", docsString(got))
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: lookupName, Value: 16793600}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = aggregateResult(local, lookup)
	requireCode(t, err, 4568, "Location4568")
	if !strings.Contains(err.Error(), "matching pipeline's $lookup stage exceeds 16793600 bytes") {
		t.Fatalf("message: %v", err)
	}

	facet := mongo.Pipeline{{{Key: "$facet", Value: bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "k", Value: 1}}}}}}}}}}
	if got := aggregateAll(t, big, facet); len(got) != 1 {
		t.Fatalf("$facet under the default: %s", docsString(got))
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: facetName, Value: 50}}).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = aggregateResult(big, facet)
	requireCode(t, err, 4031700, "Location4031700")
}

// TestFacetBufferParameter: internalQueryFacetBufferSizeBytes (an int
// above 0, 100 MiB by default) is the size of the batches of its input a
// $facet holds; its sub-pipelines give the same results whatever it is.
func TestFacetBufferParameter(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	admin := client.Database("admin")
	const name = "internalQueryFacetBufferSizeBytes"
	var got bson.Raw
	if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if v, ok := got.Lookup(name).Int32OK(); !ok || v != 100<<20 {
		t.Fatalf("%s default: %v", name, got)
	}
	defer admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: int32(100 << 20)}})
	err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: 0}}).Err()
	requireCode(t, err, 2, "BadValue")

	coll := client.Database(testDB).Collection("facet_buffer")
	var docs []any
	for i := range 50 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "g", Value: i % 3}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	pipeline := mongo.Pipeline{{{Key: "$facet", Value: bson.D{
		{Key: "total", Value: bson.A{bson.D{{Key: "$count", Value: "n"}}}},
		{Key: "page", Value: bson.A{bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: -1}}}}, bson.D{{Key: "$skip", Value: 10}}, bson.D{{Key: "$limit", Value: 3}}}},
		{Key: "groups", Value: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}}, bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}}}},
	}}}}
	want := docsString(aggregateAll(t, coll, pipeline))
	if !strings.Contains(want, `"page": [{"_id": {"$numberInt":"39"}`) {
		t.Fatalf("$facet: %s", want)
	}
	for _, size := range []int32{1, 100} {
		if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: size}}).Err(); err != nil {
			t.Fatal(err)
		}
		if got := docsString(aggregateAll(t, coll, pipeline)); got != want {
			t.Fatalf("batches of %d bytes: %s, want %s", size, got, want)
		}
	}
}
