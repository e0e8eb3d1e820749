package wire

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

func TestAppendReply(t *testing.T) {
	d1, d2 := doc(t, "ismaster", true, "ok", 1.0), doc(t, "x", 1)
	for _, docs := range [][][]byte{nil, {d1}, {d1, d2}} {
		msg := AppendReply([]byte("pre"), 5, 9, ReplyAwaitCapable, 77, 3, docs...)[3:]
		length, reqID, respTo, op, rem, ok := wiremessage.ReadHeader(msg)
		if !ok || int(length) != len(msg) || reqID != 5 || respTo != 9 || op != wiremessage.OpReply {
			t.Fatalf("header %d %d %d %v", length, reqID, respTo, op)
		}
		flags, rem, _ := wiremessage.ReadReplyFlags(rem)
		cursorID, rem, _ := wiremessage.ReadReplyCursorID(rem)
		from, rem, _ := wiremessage.ReadReplyStartingFrom(rem)
		n, rem, _ := wiremessage.ReadReplyNumberReturned(rem)
		got, rem, ok := wiremessage.ReadReplyDocuments(rem)
		if !ok || len(rem) != 0 || int32(flags) != ReplyAwaitCapable || cursorID != 77 || from != 3 || int(n) != len(docs) || len(got) != len(docs) {
			t.Fatalf("reply: flags %d cursor %d from %d n %d docs %d rest %d", flags, cursorID, from, n, len(got), len(rem))
		}
		for i := range docs {
			if !bytes.Equal(got[i], bsoncore.Document(docs[i])) {
				t.Fatalf("document %d differs", i)
			}
		}
	}
}

func TestUnsupportedOpReply(t *testing.T) {
	want := doc(t, "$err", "OP_QUERY is no longer supported. The client driver may require an upgrade. "+
		"For more details see https://dochub.mongodb.org/core/legacy-opcode-removal",
		"code", int32(5739101), "ok", 0.0)
	if got := UnsupportedOpReply(OpQuery); !bytes.Equal(got, want) {
		t.Fatalf("got %s\nwant %s", got, bsoncore.Document(want))
	}
}
