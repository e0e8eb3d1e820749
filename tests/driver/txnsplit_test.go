package driver_test

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestLargeTransactionOplog: a transaction whose operations pass 16 MB is
// logged as MongoDB 7.0 logs it (TransactionOperations::logOplogEntries):
// applyOps entries of at most 16 MB of operations, all but the last with
// o.partialTxn: true, the last with o.count, each with the transaction's
// lsid and txnNumber and a prevOpTime naming the entry before it (null on
// the first). A find and a tailable cursor on local.oplog.rs read them
// back whole; a change stream gives every operation's event at the
// commit's clusterTime, with txnOpIndex across the entries, and resumes
// from any of them (ChangeStreamUnwindTransaction). On TiKV, whose commit
// has one stamp, the transaction stays one entry.
func TestLargeTransactionOplog(t *testing.T) {
	client := startStreams(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("bigtxn")
	if err := client.Database(testDB).CreateCollection(ctx, "bigtxn"); err != nil {
		t.Fatal(err)
	}
	oplog := client.Database("local").Collection("oplog.rs")
	var newest bson.Raw
	if err := oplog.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Decode(&newest); err != nil {
		t.Fatal(err)
	}
	t0 := newest.Lookup("ts")
	cs, err := coll.Watch(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "fullDocument.s", Value: 0}}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close(ctx)

	big := strings.Repeat("s", 4<<20)
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if _, err := sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		for i := range 5 {
			if _, err := coll.InsertOne(sc, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: big}}); err != nil {
				return nil, err
			}
		}
		if _, err := coll.UpdateOne(sc, bson.D{{Key: "_id", Value: 0}}, bson.D{{Key: "$set", Value: bson.D{{Key: "u", Value: 1}}}}); err != nil {
			return nil, err
		}
		_, err := coll.DeleteOne(sc, bson.D{{Key: "_id", Value: 1}})
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "after"}}); err != nil {
		t.Fatal(err)
	}

	txnFilter := bson.D{{Key: "ts", Value: bson.D{{Key: "$gt", Value: t0}}}, {Key: "o.applyOps", Value: bson.D{{Key: "$exists", Value: true}}}}
	entries := findAll(t, oplog, txnFilter, options.Find().SetProjection(bson.D{{Key: "o.applyOps.o.s", Value: 0}}))
	if testkv.TiKV() {
		if len(entries) != 1 {
			t.Fatalf("TiKV: %d entries, want the transaction's one", len(entries))
		}
	} else {
		checkTxnChain(t, entries, []int{3, 7}, 7)
		// read back whole: 20 MB in batches, each entry under 16 MB of
		// operations
		whole := findAll(t, oplog, txnFilter)
		n := 0
		for _, e := range whole {
			vals, _ := e.Lookup("o", "applyOps").Array().Values()
			for _, v := range vals {
				if s, ok := v.Document().Lookup("o", "s").StringValueOK(); ok && len(s) == len(big) {
					n++
				}
			}
		}
		if len(whole) != 2 || n != 5 {
			t.Fatalf("whole entries: %d, holding %d documents of 4 MB", len(whole), n)
		}
		// a tailable cursor from the first entry reads both
		cur, err := oplog.Find(ctx, bson.D{{Key: "ts", Value: bson.D{{Key: "$gte", Value: entries[0].Lookup("ts")}}}},
			options.Find().SetCursorType(options.Tailable).SetProjection(bson.D{{Key: "o.applyOps.o.s", Value: 0}}))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if !cur.Next(ctx) {
				t.Fatalf("tailable cursor: no entry %d: %v", i, cur.Err())
			}
			if !cur.Current.Lookup("ts").Equal(entries[i].Lookup("ts")) {
				t.Fatalf("tailable cursor: entry %d at %s, want %s", i, cur.Current.Lookup("ts"), entries[i].Lookup("ts"))
			}
		}
		cur.Close(ctx)
	}

	commit := entries[len(entries)-1]
	type ev struct {
		op string
		id any
	}
	want := []ev{{"insert", int32(0)}, {"insert", int32(1)}, {"insert", int32(2)}, {"insert", int32(3)}, {"insert", int32(4)}, {"update", int32(0)}, {"delete", int32(1)}}
	var tokens []bson.Raw
	for i, w := range want {
		e := nextEvent(t, cs)
		got := ev{e.Lookup("operationType").StringValue(), e.Lookup("documentKey", "_id").Int32()}
		if got != w {
			t.Fatalf("event %d: %+v, want %+v", i, got, w)
		}
		if !e.Lookup("clusterTime").Equal(commit.Lookup("ts")) {
			t.Errorf("event %d at %s, want the commit's %s", i, e.Lookup("clusterTime"), commit.Lookup("ts"))
		}
		if !e.Lookup("lsid").Equal(commit.Lookup("lsid")) || !e.Lookup("txnNumber").Equal(commit.Lookup("txnNumber")) {
			t.Errorf("event %d: lsid %s txnNumber %s, want the transaction's", i, e.Lookup("lsid"), e.Lookup("txnNumber"))
		}
		tokens = append(tokens, e.Lookup("_id").Document())
	}
	if e := nextEvent(t, cs); e.Lookup("documentKey", "_id").StringValue() != "after" {
		t.Fatalf("after the transaction: %s", e)
	}
	// resuming after any event of the transaction gives the next
	for k := range len(want) - 1 {
		rs, err := coll.Watch(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "fullDocument.s", Value: 0}}}}}, options.ChangeStream().SetResumeAfter(tokens[k]))
		if err != nil {
			t.Fatal(err)
		}
		e := nextEvent(t, rs)
		if got := (ev{e.Lookup("operationType").StringValue(), e.Lookup("documentKey", "_id").Int32()}); got != want[k+1] {
			t.Errorf("resumed after event %d: %+v, want %+v", k, got, want[k+1])
		}
		rs.Close(ctx)
	}
	// a start at the first entry's time gives the whole transaction
	first := entries[0].Lookup("ts")
	ft, fi := first.Timestamp()
	rs, err := coll.Watch(ctx, mongo.Pipeline{{{Key: "$project", Value: bson.D{{Key: "fullDocument.s", Value: 0}}}}}, options.ChangeStream().SetStartAtOperationTime(&bson.Timestamp{T: ft, I: fi}))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	if e := nextEvent(t, rs); e.Lookup("documentKey", "_id").Int32() != 0 || !e.Lookup("clusterTime").Equal(commit.Lookup("ts")) {
		t.Errorf("started at the first entry: %s", e)
	}
}

// checkTxnChain checks a transaction's entries (their applyOps' documents
// left out): ends gives where each entry's operations end, count the
// transaction's operations.
func checkTxnChain(t *testing.T, entries []bson.Raw, ends []int, count int64) {
	t.Helper()
	if len(entries) != len(ends) {
		t.Fatalf("%d entries, want %d: %s", len(entries), len(ends), docsString(entries))
	}
	start := 0
	for i, e := range entries {
		last := i == len(entries)-1
		if e.Lookup("op").StringValue() != "c" || e.Lookup("ns").StringValue() != "admin.$cmd" {
			t.Errorf("entry %d: %s", i, e)
		}
		vals, _ := e.Lookup("o", "applyOps").Array().Values()
		if len(vals) != ends[i]-start {
			t.Errorf("entry %d holds %d operations, want %d", i, len(vals), ends[i]-start)
		}
		start = ends[i]
		elems, _ := e.Lookup("o").Document().Elements()
		var keys []string
		for _, el := range elems {
			keys = append(keys, el.Key())
		}
		wantKeys := "applyOps,partialTxn"
		if last {
			wantKeys = "applyOps,count"
		}
		if strings.Join(keys, ",") != wantKeys {
			t.Errorf("entry %d's o has %v, want %s", i, keys, wantKeys)
		}
		if p, ok := e.Lookup("o", "partialTxn").BooleanOK(); !last && (!ok || !p) {
			t.Errorf("entry %d: partialTxn %s", i, e.Lookup("o", "partialTxn"))
		}
		if n, ok := e.Lookup("o", "count").Int64OK(); last && (!ok || n != count) {
			t.Errorf("entry %d: count %s, want %d", i, e.Lookup("o", "count"), count)
		}
		want := bson.D{{Key: "ts", Value: bson.Timestamp{}}, {Key: "t", Value: int64(-1)}}
		if i > 0 {
			pt, pi := entries[i-1].Lookup("ts").Timestamp()
			want = bson.D{{Key: "ts", Value: bson.Timestamp{T: pt, I: pi}}, {Key: "t", Value: entries[i-1].Lookup("t").Int64()}}
		}
		if got := e.Lookup("prevOpTime"); !got.Equal(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: mustRaw(t, want)}) {
			t.Errorf("entry %d: prevOpTime %s, want %v", i, got, want)
		}
		if !e.Lookup("lsid").Equal(entries[0].Lookup("lsid")) || !e.Lookup("txnNumber").Equal(entries[0].Lookup("txnNumber")) || !e.Lookup("wall").Equal(entries[0].Lookup("wall")) {
			t.Errorf("entry %d: lsid, txnNumber or wall differ from the first's", i)
		}
		if _, err := e.LookupErr("stmtId"); err == nil {
			t.Errorf("entry %d has a stmtId", i)
		}
	}
}

// TestMaxTxnOpsPerOplogEntry: with the startup parameter
// maxNumberOfTransactionOperationsInSingleOplogEntry at 1, as the jstest
// on transaction entries through applyOps (jstests/replsets) starts its
// node, a transaction of two inserts is two entries; getParameter reports
// the setting (the largest int32 by default) and setParameter cannot
// change it; the entries fed back to applyOps fail with 31056 (partialTxn)
// and 31240 (count).
func TestMaxTxnOpsPerOplogEntry(t *testing.T) {
	cfg := replSetConfig()
	cfg.MaxTxnOpsPerOplogEntry = 1
	client := connect(t, startInstance(t, cfg))
	ctx := context.Background()
	admin := client.Database("admin")
	var reply bson.Raw
	if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "maxNumberOfTransactionOperationsInSingleOplogEntry", Value: 1}}).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	if n, ok := reply.Lookup("maxNumberOfTransactionOperationsInSingleOplogEntry").Int32OK(); !ok || n != 1 {
		t.Fatalf("getParameter: %s", reply)
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "maxNumberOfTransactionOperationsInSingleOplogEntry", Value: 2}}).Err(); err == nil {
		t.Fatal("setParameter changed a startup parameter")
	}
	coll := client.Database(testDB).Collection("coll")
	if _, err := coll.InsertOne(ctx, bson.D{}); err != nil {
		t.Fatal(err)
	}
	oplog := client.Database("local").Collection("oplog.rs")
	var newest bson.Raw
	if err := oplog.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: -1}})).Decode(&newest); err != nil {
		t.Fatal(err)
	}
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	if _, err := sess.WithTransaction(ctx, func(sc context.Context) (any, error) {
		if _, err := coll.InsertOne(sc, bson.D{{Key: "x", Value: 1}}); err != nil {
			return nil, err
		}
		_, err := coll.InsertOne(sc, bson.D{{Key: "x", Value: 2}})
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	entries := findAll(t, oplog, bson.D{{Key: "ts", Value: bson.D{{Key: "$gt", Value: newest.Lookup("ts")}}}, {Key: "o.applyOps", Value: bson.D{{Key: "$exists", Value: true}}}})
	if testkv.TiKV() {
		if len(entries) != 1 {
			t.Fatalf("TiKV: %d entries, want the transaction's one", len(entries))
		}
		return
	}
	checkTxnChain(t, entries, []int{1, 2}, 2)
	for i, code := range []int{31056, 31240} {
		err := admin.RunCommand(ctx, bson.D{{Key: "applyOps", Value: bson.A{entries[i]}}}).Err()
		if serverCode(err) != code {
			t.Errorf("entry %d through applyOps: %v, want code %d", i, err, code)
		}
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 3 {
		t.Errorf("%d documents (%v), want 3", n, err)
	}
}
