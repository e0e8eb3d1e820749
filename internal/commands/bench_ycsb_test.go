package commands

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/folio-db/folio/internal/advise"
	"github.com/folio-db/folio/internal/sessions"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkYCSBA measures the server side of YCSB-A's two operations as
// the Go driver sends them (with an implicit session's lsid): a find of
// one record by _id, and an update by _id that $sets one field, over 1 KB
// records. Beside ping, the ratio of times per operation bounds YCSB-A's
// share of the ping floor from the server's side. FOLIO_BENCH_SHARD_KEY
// (Extended JSON, e.g. {"_id": "hashed"}) shards the table on that key
// first, so that its documents lie in shard key order and reads by _id go
// through its _id index. As a server's, the service is a replica set
// member whose sessions keep durable records: the update with a txnNumber
// (a retryable write, as the driver sends it by default) writes its
// session's record, the one without (retryWrites=false) does not.
func BenchmarkYCSBA(b *testing.B) {
	s, kv := newServiceOnStore(b)
	s.ReplSetName = "folio"
	s.Sessions = sessions.NewRegistry()
	if err := s.Sessions.Load(kv); err != nil {
		b.Fatal(err)
	}
	if os.Getenv("FOLIO_BENCH_NO_ADVISOR") == "" {
		s.Advisor = advise.NewObserver() // as a server has it
	}
	const records = 20_000
	if key := os.Getenv("FOLIO_BENCH_SHARD_KEY"); key != "" {
		var k bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(key), false, &k); err != nil {
			b.Fatal(err)
		}
		cmd := marshal(bson.D{{Key: "shardCollection", Value: "ycsb.usertable"}, {Key: "key", Value: k}})
		if reply := s.Run(&Request{DB: "admin", Cmd: cmd}); bson.Raw(reply).Lookup("ok").Double() != 1 {
			b.Fatal(bson.Raw(reply))
		}
	}
	pad := strings.Repeat("x", 100)
	var docs bson.A
	for i := range records {
		d := bson.D{{Key: "_id", Value: fmt.Sprintf("user%08d", i)}}
		for f := range 10 {
			d = append(d, bson.E{Key: fmt.Sprintf("field%d", f), Value: pad})
		}
		docs = append(docs, d)
		if len(docs) == 1000 {
			if reply := s.Run(&Request{DB: "ycsb", Cmd: marshal(bson.D{{Key: "insert", Value: "usertable"}, {Key: "documents", Value: docs}})}); bson.Raw(reply).Lookup("ok").Double() != 1 {
				b.Fatal(bson.Raw(reply))
			}
			docs = nil
		}
	}
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			cmd := marshal(bson.D{{Key: "find", Value: "usertable"},
				{Key: "filter", Value: bson.D{{Key: "_id", Value: fmt.Sprintf("user%08d", (i*7919)%records)}}},
				{Key: "limit", Value: int64(1)}, {Key: "singleBatch", Value: true},
				{Key: "lsid", Value: lsid}, {Key: "$db", Value: "ycsb"}})
			if reply := bson.Raw(s.Run(&Request{DB: "ycsb", Cmd: cmd})); reply.Lookup("ok").Double() != 1 {
				b.Fatal(reply)
			}
		}
	})
	var txnNumber int64 // the driver numbers a session's retryable writes
	for _, retryable := range []bool{true, false} {
		name := "update"
		if !retryable {
			name = "update-not-retryable"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				txnNumber++
				cmd := bson.D{{Key: "update", Value: "usertable"}, {Key: "ordered", Value: true}, {Key: "lsid", Value: lsid}}
				if retryable {
					cmd = append(cmd, bson.E{Key: "txnNumber", Value: txnNumber})
				}
				cmd = append(cmd, bson.E{Key: "$db", Value: "ycsb"}, bson.E{Key: "updates", Value: bson.A{bson.D{
					{Key: "q", Value: bson.D{{Key: "_id", Value: fmt.Sprintf("user%08d", (i*7919)%records)}}},
					{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: fmt.Sprintf("field%d", i%10), Value: fmt.Sprintf("%0100d", txnNumber)}}}}},
				}}})
				if reply := bson.Raw(s.Run(&Request{DB: "ycsb", Cmd: marshal(cmd)})); reply.Lookup("ok").Double() != 1 || reply.Lookup("nModified").Int32() != 1 {
					b.Fatal(reply)
				}
			}
		})
	}
	b.Run("ping", func(b *testing.B) {
		b.ReportAllocs()
		cmd := marshal(bson.D{{Key: "ping", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "$db", Value: "admin"}})
		for b.Loop() {
			s.Run(&Request{DB: "admin", Cmd: cmd})
		}
	})
}

// BenchmarkBulkInsert measures the server side of folio-bench's bulk
// workload: an insert of 1000 1 KB documents with ObjectId _ids, as the
// driver's insertMany sends them. Time and allocations are per batch.
func BenchmarkBulkInsert(b *testing.B) {
	s := newTestService(b)
	s.Sessions = sessions.NewRegistry()
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}}
	pad := strings.Repeat("x", 100)
	b.ReportAllocs()
	for b.Loop() {
		docs := make(bson.A, 1000)
		for j := range docs {
			d := bson.D{{Key: "_id", Value: bson.NewObjectID()}}
			for f := range 10 {
				d = append(d, bson.E{Key: fmt.Sprintf("field%d", f), Value: pad})
			}
			docs[j] = d
		}
		cmd := marshal(bson.D{{Key: "insert", Value: "bulk"}, {Key: "ordered", Value: true},
			{Key: "lsid", Value: lsid}, {Key: "$db", Value: "ycsb"}, {Key: "documents", Value: docs}})
		if reply := bson.Raw(s.Run(&Request{DB: "ycsb", Cmd: cmd})); reply.Lookup("n").Int32() != 1000 {
			b.Fatal(reply)
		}
	}
}
