package commands

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkShortRangeScan measures the server side of YCSB-E's scan (a
// find of up to 100 records from a key on, in key order, over 1 KB
// records), and of ping beside it: the ratio of their times per operation
// bounds YCSB-E's share of the ping floor from the server's side.
func BenchmarkShortRangeScan(b *testing.B) {
	s := newTestService(b)
	const records = 20_000
	pad := make([]byte, 100)
	for i := range pad {
		pad[i] = 'x'
	}
	var docs bson.A
	for i := range records {
		d := bson.D{{Key: "_id", Value: fmt.Sprintf("user%08d", i)}}
		for f := range 10 {
			d = append(d, bson.E{Key: fmt.Sprintf("field%d", f), Value: string(pad)})
		}
		docs = append(docs, d)
		if len(docs) == 1000 {
			if reply := s.Run(&Request{DB: "ycsb", Cmd: marshal(bson.D{{Key: "insert", Value: "usertable"}, {Key: "documents", Value: docs}})}); bson.Raw(reply).Lookup("ok").Double() != 1 {
				b.Fatal(bson.Raw(reply))
			}
			docs = nil
		}
	}
	b.Run("scan", func(b *testing.B) {
		// The reply buffer is reused from one request to the next, as a
		// connection does.
		var scratch []byte
		for i := 0; b.Loop(); i++ {
			n := 1 + i%100
			cmd := marshal(bson.D{{Key: "find", Value: "usertable"},
				{Key: "filter", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: fmt.Sprintf("user%08d", (i*7919)%records)}}}}},
				{Key: "sort", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "limit", Value: int64(n)}, {Key: "$db", Value: "ycsb"}})
			r := &Request{DB: "ycsb", Cmd: cmd, Scratch: scratch}
			if reply := bson.Raw(s.Run(r)); reply.Lookup("ok").Double() != 1 {
				b.Fatal(reply)
			}
			scratch = r.Scratch
		}
	})
	b.Run("ping", func(b *testing.B) {
		cmd := marshal(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
		for b.Loop() {
			s.Run(&Request{DB: "admin", Cmd: cmd})
		}
	})
}
