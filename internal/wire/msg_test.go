package wire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

func TestParseMsg(t *testing.T) {
	insert := doc(t, "insert", "c", "$db", "db")
	d1, d2, d3 := doc(t, "_id", 1), doc(t, "_id", 2, "x", D("y", bson.A{1, "z"})), doc(t, "_id", 3)
	// badNested has an embedded document with an unknown element type.
	badNested := doc(t, "a", D("b", 1))
	badNested[10] = 0x42
	// lyingLength declares more bytes than the section holds.
	lyingLength := bytes.Clone(insert)
	binary.LittleEndian.PutUint32(lyingLength, uint32(len(insert)+100))
	huge := make([]byte, 4)
	binary.LittleEndian.PutUint32(huge, MaxBSONInternalSize+1)
	badChecksum := opMsg(1, ChecksumPresent, kind0(insert))
	badChecksum[len(badChecksum)-1] ^= 0xFF
	corrupted := opMsg(1, ChecksumPresent, kind0(insert))
	corrupted[HeaderSize+10] ^= 0x01 // the body's first key: still valid BSON
	corruptedLength := opMsg(1, ChecksumPresent, kind0(insert))
	corruptedLength[HeaderSize+8] ^= 0x01
	checksumOnly := opMsg(1, ChecksumPresent)
	// checksumOneByte holds one byte beside its flags and checksum: the
	// sections parse (and fail on the unknown kind 5).
	checksumOneByte := opMsg(1, ChecksumPresent, []byte{5})
	shortChecksum := opMsg(1, 0, []byte{0xAB, 0xCD})
	shortChecksum[HeaderSize] = byte(ChecksumPresent)
	noFlags := append(appendHeader(nil, Header{Length: HeaderSize + 2, OpCode: OpMsg}), 0, 0)
	twoBodiesBadChecksum := opMsg(1, ChecksumPresent, kind0(insert), kind0(insert))
	twoBodiesBadChecksum[len(twoBodiesBadChecksum)-1] ^= 0xFF
	wrongHeader := opMsg(1, ChecksumPresent, kind0(insert))
	binary.LittleEndian.PutUint32(wrongHeader[4:], 2) // request id is covered too

	tests := []struct {
		name    string
		msg     []byte
		wantErr string
		want    bson.D // the merged command, when valid
		flags   uint32
	}{
		{name: "body only", msg: opMsg(1, 0, kind0(insert)),
			want: D("insert", "c", "$db", "db")},
		{name: "document sequence", msg: opMsg(1, 0, kind0(insert), kind1("documents", d1, d2, d3)),
			want: D("insert", "c", "$db", "db", "documents", bson.A{D("_id", 1), D("_id", 2, "x", D("y", bson.A{1, "z"})), D("_id", 3)})},
		{name: "sequence before body", msg: opMsg(1, 0, kind1("documents", d1), kind0(insert)),
			want: D("insert", "c", "$db", "db", "documents", bson.A{D("_id", 1)})},
		{name: "two sequences", msg: opMsg(1, 0, kind0(doc(t, "bulkWrite", 1)), kind1("ops", d1, d2), kind1("nsInfo", d3)),
			want: D("bulkWrite", 1, "ops", bson.A{D("_id", 1), D("_id", 2, "x", D("y", bson.A{1, "z"}))}, "nsInfo", bson.A{D("_id", 3)})},
		{name: "empty sequence", msg: opMsg(1, 0, kind0(insert), kind1("documents")),
			want: D("insert", "c", "$db", "db", "documents", bson.A{})},
		{name: "empty identifier", msg: opMsg(1, 0, kind0(insert), kind1("", d1)),
			want: D("insert", "c", "$db", "db", "", bson.A{D("_id", 1)})},
		{name: "moreToCome", msg: opMsg(1, MoreToCome, kind0(insert)), flags: MoreToCome,
			want: D("insert", "c", "$db", "db")},
		{name: "exhaustAllowed and unknown optional bit", msg: opMsg(1, ExhaustAllowed|1<<20, kind0(insert)), flags: ExhaustAllowed | 1<<20,
			want: D("insert", "c", "$db", "db")},
		{name: "valid checksum", msg: opMsg(1, ChecksumPresent, kind0(insert), kind1("documents", d1)), flags: ChecksumPresent,
			want: D("insert", "c", "$db", "db", "documents", bson.A{D("_id", 1)})},
		{name: "valid checksum with moreToCome", msg: opMsg(1, ChecksumPresent|MoreToCome, kind0(insert)), flags: ChecksumPresent | MoreToCome,
			want: D("insert", "c", "$db", "db")},

		{name: "invalid checksum", msg: badChecksum, wantErr: "ChecksumMismatch"},
		{name: "corrupted content under checksum", msg: corrupted, wantErr: "ChecksumMismatch"},
		{name: "invalid BSON under a bad checksum", msg: corruptedLength, wantErr: "InvalidBSON"},
		{name: "header not matching checksum", msg: wrongHeader, wantErr: "ChecksumMismatch"},
		{name: "checksum flag without checksum", msg: shortChecksum, wantErr: "Location51252"},
		{name: "checksum without sections", msg: checksumOnly, wantErr: "Location51252"},
		{name: "two bodies under a bad checksum", msg: twoBodiesBadChecksum, wantErr: "Location40430"},
		{name: "unknown required flag", msg: opMsg(1, 1<<2, kind0(insert)), wantErr: "close"},
		{name: "unknown required flag 15", msg: opMsg(1, 1<<15, kind0(insert)), wantErr: "close"},
		{name: "no flags", msg: noFlags, wantErr: "ProtocolError"},
		{name: "no sections", msg: opMsg(1, 0), wantErr: "Location40587"},
		{name: "sequence without body", msg: opMsg(1, 0, kind1("documents", d1)), wantErr: "Location40587"},
		{name: "two bodies", msg: opMsg(1, 0, kind0(insert), kind0(insert)), wantErr: "Location40430"},
		{name: "section kind 2", msg: opMsg(1, 0, kind0(insert), []byte{2, 5, 0, 0, 0, 0}), wantErr: "Unauthorized"},
		{name: "section kind 0xFF", msg: opMsg(1, 0, []byte{0xFF}, kind0(insert)), wantErr: "Location40432"},
		{name: "duplicate sequence", msg: opMsg(1, 0, kind0(insert), kind1("documents", d1), kind1("documents", d2)), wantErr: "Location40431"},
		{name: "sequence duplicates body field", msg: opMsg(1, 0, kind0(insert), kind1("insert", d1)), wantErr: "Location40433"},
		{name: "three sequences", msg: opMsg(1, 0, kind0(insert), kind1("a"), kind1("b"), kind1("c")), wantErr: "close"},
		{name: "zero-length sequence", msg: opMsg(1, 0, kind0(insert), []byte{1, 4, 0, 0, 0}), wantErr: "ProtocolError"},
		{name: "negative sequence size", msg: opMsg(1, 0, kind0(insert), []byte{1, 0xFF, 0xFF, 0xFF, 0xFF, 0}), wantErr: "ProtocolError"},
		{name: "sequence size past end", msg: opMsg(1, 0, kind0(insert), []byte{1, 100, 0, 0, 0, 'a', 0}), wantErr: "ProtocolError"},
		{name: "truncated sequence size", msg: opMsg(1, 0, kind0(insert), []byte{1, 9, 0}), wantErr: "ProtocolError"},
		{name: "unterminated identifier", msg: opMsg(1, 0, kind0(insert), []byte{1, 7, 0, 0, 0, 'a', 'b', 'c'}), wantErr: "ProtocolError"},
		{name: "truncated document in sequence", msg: opMsg(1, 0, kind0(insert), kind1("documents", d1, d2[:len(d2)-3])), wantErr: "InvalidBSON"},
		{name: "garbage after documents in sequence", msg: opMsg(1, 0, kind0(insert), kind1("documents", d1, []byte{1, 2})), wantErr: "InvalidBSON"},
		{name: "invalid nested BSON in sequence", msg: opMsg(1, 0, kind0(insert), kind1("documents", badNested)), wantErr: "InvalidBSON"},
		{name: "invalid nested BSON in body", msg: opMsg(1, 0, kind0(badNested)), wantErr: "InvalidBSON"},
		{name: "truncated body", msg: opMsg(1, 0, kind0(insert[:len(insert)-1])), wantErr: "InvalidBSON"},
		{name: "body length lie", msg: opMsg(1, 0, kind0(lyingLength)), wantErr: "InvalidBSON"},
		{name: "body length 4", msg: opMsg(1, 0, kind0([]byte{4, 0, 0, 0})), wantErr: "InvalidBSON"},
		{name: "body without length", msg: opMsg(1, 0, []byte{0, 9}), wantErr: "InvalidBSON"},
		{name: "oversized body length", msg: opMsg(1, 0, kind0(huge)), wantErr: "BSONObjectTooLarge"},
		{name: "oversized document length in sequence", msg: opMsg(1, 0, kind0(insert), kind1("documents", huge)), wantErr: "BSONObjectTooLarge"},
		{name: "checksum flag with one byte of sections", msg: checksumOneByte, wantErr: "Location40432"},
		{name: "dotted sequence under a body document", msg: opMsg(1, 0, kind0(doc(t, "ping", 1, "a", D("b", 1), "$db", "db")), kind1("a.b", d1)), wantErr: "Location40433"},
		{name: "dotted sequence through a body array", msg: opMsg(1, 0, kind0(doc(t, "ping", 1, "a", bson.A{1}, "$db", "db")), kind1("a.b.c", d1)), wantErr: "Location40433"},
		{name: "dotted sequence past a body scalar", msg: opMsg(1, 0, kind0(doc(t, "ping", 1, "a", 1, "$db", "db")), kind1("a.b", d1)),
			want: D("ping", 1, "a", 1, "$db", "db", "a.b", bson.A{D("_id", 1)})},
		{name: "dotted sequence beside a dotted body field", msg: opMsg(1, 0, kind0(doc(t, "ping", 1, "a.b", 1, "$db", "db")), kind1("a.b", d1)),
			want: D("ping", 1, "a.b", 1, "$db", "db", "a.b", bson.A{D("_id", 1)})},
		{name: "empty identifier repeating an empty body field", msg: opMsg(1, 0, kind0(doc(t, "ping", 1, "", 1, "$db", "db")), kind1("", d1)), wantErr: "Location40433"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body, err := ReadMessage(bytes.NewReader(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseMsg(h, body)
			checkErr(t, err, tt.wantErr)
			if err != nil {
				if m != nil {
					t.Fatal("non-nil Msg with error")
				}
				return
			}
			if m.Flags != tt.flags || m.MoreToCome() != (tt.flags&MoreToCome != 0) || m.ExhaustAllowed() != (tt.flags&ExhaustAllowed != 0) {
				t.Fatalf("flags %#x, want %#x", m.Flags, tt.flags)
			}
			if PeekMsgFlags(body) != m.Flags {
				t.Fatalf("PeekMsgFlags = %#x", PeekMsgFlags(body))
			}
			cmd, err := m.Command()
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := bson.Marshal(tt.want); !bytes.Equal(cmd, want) {
				t.Fatalf("command %v\nwant    %v", cmd, bson.Raw(want))
			}
		})
	}
}

// TestParseMsgOversizedDocument sends a real document just over the limit.
func TestParseMsgOversizedDocument(t *testing.T) {
	ok := doc(t, "_id", 1, "pad", strings.Repeat("x", MaxBSONInternalSize-30))
	if len(ok) > MaxBSONInternalSize {
		t.Fatalf("setup: %d bytes", len(ok))
	}
	big := doc(t, "_id", 1, "pad", strings.Repeat("x", MaxBSONInternalSize))
	insert := doc(t, "insert", "c", "$db", "db")
	if _, err := ParseMsg(split(opMsg(1, 0, kind0(insert), kind1("documents", ok)))); err != nil {
		t.Fatalf("document of %d bytes: %v", len(ok), err)
	}
	_, err := ParseMsg(split(opMsg(1, 0, kind0(insert), kind1("documents", big))))
	checkErr(t, err, "BSONObjectTooLarge")
	_, err = ParseMsg(split(opMsg(1, 0, kind0(big))))
	checkErr(t, err, "BSONObjectTooLarge")
}

func TestParseMsgWrongOpCode(t *testing.T) {
	h, body := split(opMsg(1, 0, kind0(doc(t, "ping", 1))))
	h.OpCode = OpQuery
	_, err := ParseMsg(h, body)
	checkErr(t, err, "close")
}

// TestParseMsgAliases checks that parsed documents share the input buffer.
func TestParseMsgAliases(t *testing.T) {
	h, body := split(opMsg(1, 0, kind0(doc(t, "insert", "c")), kind1("documents", doc(t, "_id", 1), doc(t, "_id", 2))))
	m, err := ParseMsg(h, body)
	if err != nil {
		t.Fatal(err)
	}
	within := func(b []byte) bool {
		p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&body[0]))
		return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(body))
	}
	if !within(m.Body) || !within(m.Sequences[0].Docs[0]) || !within(m.Sequences[0].Docs[1]) {
		t.Fatal("parsed documents do not alias the body")
	}
}

func TestCommandInvalidBody(t *testing.T) {
	m := &Msg{Body: bson.Raw{1, 2}, Sequences: []Sequence{{Identifier: "documents"}}}
	_, err := m.Command()
	checkErr(t, err, "InvalidBSON")
}

func TestAppendMsg(t *testing.T) {
	reply := doc(t, "ok", 1.0)
	for _, flags := range []uint32{0, MoreToCome, ChecksumPresent, ChecksumPresent | MoreToCome} {
		prefix := []byte("prefix")
		out := AppendMsg(bytes.Clone(prefix), 10, 7, flags, reply)
		if !bytes.Equal(out[:len(prefix)], prefix) {
			t.Fatal("prefix overwritten")
		}
		msg := out[len(prefix):]
		length, reqID, respTo, op, _, ok := wiremessage.ReadHeader(msg)
		if !ok || int(length) != len(msg) || reqID != 10 || respTo != 7 || op != wiremessage.OpMsg {
			t.Fatalf("flags %#x: header %d %d %d %v", flags, length, reqID, respTo, op)
		}
		if wiremessage.IsMsgMoreToCome(msg) != (flags&MoreToCome != 0) {
			t.Fatalf("flags %#x: driver sees moreToCome wrong", flags)
		}
		m, err := ParseMsg(split(msg))
		if err != nil {
			t.Fatalf("flags %#x: %v", flags, err)
		}
		if m.Flags != flags || !bytes.Equal(m.Body, reply) || len(m.Sequences) != 0 {
			t.Fatalf("flags %#x: parsed %+v", flags, m)
		}
		if !bytes.Equal(AppendMsg(nil, 10, 0, flags, reply), opMsg(10, flags, kind0(reply))) {
			t.Fatalf("flags %#x: layout differs from the driver-built message", flags)
		}
	}
}

func BenchmarkParseMsg(b *testing.B) {
	docs := make([][]byte, 100)
	for i := range docs {
		docs[i] = doc(b, "_id", int32(i), "payload", strings.Repeat("p", 1000))
		if n := len(docs[i]); n < 1000 || n > 1100 {
			b.Fatalf("document of %d bytes", n)
		}
	}
	h, body := split(opMsg(1, 0, kind0(doc(b, "insert", "coll", "ordered", true, "$db", "db")), kind1("documents", docs...)))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := ParseMsg(h, body)
		if err != nil || len(m.Sequences[0].Docs) != 100 {
			b.Fatal(err)
		}
	}
}
