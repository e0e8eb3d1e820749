package driver_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzServerMessage sends an arbitrary message body under an arbitrary
// opcode, correctly framed, over a real connection to one in-process server,
// then half-closes and drains the connection; it proves the server answers
// or closes, never hangs or dies, and a separate driver client still reads
// its untouched data. Run: go test -fuzz=FuzzServerMessage -fuzztime=30s
// ./tests/driver/
func FuzzServerMessage(f *testing.F) {
	cmd := func(d bson.D) []byte { return mustRaw(f, d) }
	ping := cmd(bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	insert := cmd(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}}}, {Key: "$db", Value: "fuzz"}})
	find := cmd(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}}, {Key: "$db", Value: "fuzz"}})
	sequence := append(msgBody(0, cmd(bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "fuzz"}})), 1)
	docs := cmd(bson.D{{Key: "b", Value: "x"}})
	sequence = append(sequence, byte(4+10+len(docs)), 0, 0, 0)
	sequence = append(append(sequence, "documents\x00"...), docs...)
	f.Add(int32(opMsg), msgBody(0, ping))
	f.Add(int32(opMsg), msgBody(0, insert))
	f.Add(int32(opMsg), msgBody(flagMoreToCome, insert))
	f.Add(int32(opMsg), msgBody(0, find))
	f.Add(int32(opMsg), sequence)
	f.Add(int32(opMsg), msgBody(flagChecksum, ping))
	f.Add(int32(opCompressed), compressedBody(opMsg, int32(len(msgBody(0, ping))), 0, msgBody(0, ping)))
	f.Add(int32(2004), append(append([]byte{0, 0, 0, 0}, "admin.$cmd\x00\x00\x00\x00\x00\xff\xff\xff\xff"...), cmd(bson.D{{Key: "hello", Value: 1}})...))
	f.Add(int32(9999), []byte{})

	in := startInstance(f, defaultConfig())
	client := connect(f, in)
	sentinel := client.Database("fuzzsentinel").Collection("kept")
	want := mustRaw(f, bson.D{{Key: "_id", Value: "sentinel"}, {Key: "v", Value: int32(42)}})
	if _, err := sentinel.InsertOne(f.Context(), want); err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, opcode int32, body []byte) {
		if len(body) > 1<<20 {
			t.Skip("bodies over 1 MiB cost more than they find")
		}
		c := rawDial(t, in)
		if err := c.SetDeadline(time.Now().Add(hangGuard)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(message(1, opcode, body)); err != nil {
			t.Fatal(err)
		}
		if err := c.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		// The server answers at most once and closes when it reads EOF or
		// refuses the message; a reset also counts as closed.
		if _, err := io.Copy(io.Discard, c); isTimeout(err) {
			t.Fatalf("the server neither answered nor closed within %v", hangGuard)
		}
		got, err := sentinel.FindOne(t.Context(), bson.D{{Key: "_id", Value: "sentinel"}}).Raw()
		if err != nil {
			t.Fatalf("driver client after the message: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("sentinel changed to %v", got)
		}
	})
}
