package oplog

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// An entry stored by reference and resolved with its document is, byte
// for byte, the entry built with the document, its ts included.
func TestRefResolvesToTheEntry(t *testing.T) {
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 7}, {Key: "x", Value: "abc"}})
	lsid, _ := bson.Marshal(bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: make([]byte, 16)}}})
	wall := time.UnixMilli(1700000000123)
	for _, tc := range []struct {
		name string
		op   Op
		sess *Session
	}{
		{"with uuid and session", Op{Kind: Insert, NS: "db.coll", UUID: bytes.Repeat([]byte{9}, 16), O: doc, O2: doc}, &Session{LSID: lsid, TxnNumber: 3, StmtID: 2}},
		{"without uuid", Op{Kind: Insert, NS: "a.b", O: doc}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := New(nil, tc.op, tc.sess, wall)
			binary.LittleEndian.PutUint64(want.Doc[want.TSAt:], 0x0102030405060708)
			key := []byte("the key")
			stored, at := NewRef([]byte("prefix"), tc.op, key, tc.sess, wall)
			stored = stored[len("prefix"):]
			binary.LittleEndian.PutUint64(stored[at:], 0x0102030405060708)
			if got, ok := Stored(stored).Ref(); !ok || !bytes.Equal(got, key) {
				t.Fatalf("Ref = %q, %v", got, ok)
			}
			if Stored(stored).Entry() != nil {
				t.Fatalf("a reference reads as an entry")
			}
			if n := Stored(stored).EntryLen(); n != len(want.Doc) {
				t.Fatalf("EntryLen %d, want %d", n, len(want.Doc))
			}
			if Stored(stored).Resolve(nil, doc[:len(doc)-1]) != nil {
				t.Fatal("resolved with a document of another length")
			}
			got := Stored(stored).Resolve([]byte("x"), doc)
			if !bytes.Equal(got, want.Doc) {
				t.Fatalf("resolved\n%v\nwant\n%v", bson.Raw(got), bson.Raw(want.Doc))
			}
			if _, ok := Stored(want.Doc).Ref(); ok {
				t.Fatalf("a whole entry reads as a reference")
			}
		})
	}
}

// Resolve never reads outside its input, and what it returns is one
// document: its length prefix is its length.
func FuzzRefResolve(f *testing.F) {
	doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}})
	stored, _ := NewRef(nil, Op{Kind: Insert, NS: "a.b", O: doc}, []byte("k"), nil, time.Unix(0, 0))
	f.Add(stored)
	f.Add([]byte{0, 0, 0, 0, 'r', 200})
	f.Fuzz(func(t *testing.T, s []byte) {
		got := Stored(s).Resolve(nil, doc)
		if got != nil && int(binary.LittleEndian.Uint32(got)) != len(got) {
			t.Fatalf("Resolve(%x) = %x", s, []byte(got))
		}
	})
}
