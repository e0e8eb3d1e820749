package wire

import (
	"bytes"
	"encoding/binary"
	"github.com/folio-db/folio/internal/rawdoc"
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// rawDoc wraps element bytes into a document with a correct length.
func rawDoc(elems ...[]byte) []byte {
	idx, b := bsoncore.ReserveLength(nil)
	for _, e := range elems {
		b = append(b, e...)
	}
	b = append(b, 0)
	return bsoncore.UpdateLength(b, idx, int32(len(b)))
}

// elem is one element: type, key "k" and raw value bytes.
func elem(t byte, value ...byte) []byte {
	return append([]byte{t, 'k', 0}, value...)
}

func le32(n int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(n)) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// nested returns depth levels of documents inside the top-level one.
func nested(depth int) []byte {
	d := rawDoc()
	for range depth {
		d = rawDoc(elem(0x03, d...))
	}
	return d
}

func TestValidateDocument(t *testing.T) {
	every, err := bson.Marshal(D(
		"double", 1.5, "string", "s", "doc", D("a", 1), "array", bson.A{1, "x"},
		"binary", bson.Binary{Subtype: 4, Data: make([]byte, 16)}, "undefined", bson.Undefined{},
		"oid", bson.NewObjectID(), "true", true, "false", false, "date", bson.NewDateTimeFromTime(time.Unix(0, 0)),
		"null", nil, "regex", bson.Regex{Pattern: "^a", Options: "i"},
		"dbpointer", bson.DBPointer{DB: "db.c", Pointer: bson.NewObjectID()},
		"code", bson.JavaScript("f()"), "symbol", bson.Symbol("s"),
		"codewscope", bson.CodeWithScope{Code: "f()", Scope: D("x", 1)},
		"int32", int32(1), "timestamp", bson.Timestamp{T: 1, I: 2}, "int64", int64(math.MaxInt64),
		"decimal", bson.NewDecimal128(1, 2), "minkey", bson.MinKey{}, "maxkey", bson.MaxKey{},
	))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		doc   []byte
		valid bool
	}{
		{"every type", every, true},
		{"empty document", rawDoc(), true},
		{"old binary", rawDoc(elem(0x05, cat(le32(7), []byte{2}, le32(3), []byte{1, 2, 3})...)), true},
		{"empty string", rawDoc(elem(0x02, cat(le32(1), []byte{0})...)), true},
		{"depth at limit", nested(rawdoc.MaxDepth), true},
		{"too short", []byte{5, 0, 0, 0}, false},
		{"length larger than data", cat(le32(6), []byte{0}), false},
		{"length smaller than data", cat(le32(5), []byte{0, 0}), false},
		{"missing terminator", cat(le32(5), []byte{1}), false},
		{"unknown type", rawDoc(elem(0x14)), false},
		{"deprecated type 0x00 inside", rawDoc(elem(0x00)), false},
		{"unterminated key", cat(le32(8), []byte{0x10, 'a', 'b', 0}), false},
		{"truncated int32", rawDoc(elem(0x10, 1, 2)), false},
		{"truncated double", rawDoc(elem(0x01, 1, 2, 3)), false},
		{"truncated objectid", rawDoc(elem(0x07, make([]byte, 11)...)), false},
		{"truncated decimal", rawDoc(elem(0x13, make([]byte, 15)...)), false},
		{"boolean 2", rawDoc(elem(0x08, 2)), false},
		{"string length 0", rawDoc(elem(0x02, cat(le32(0))...)), false},
		{"string length negative", rawDoc(elem(0x02, cat(le32(-5), []byte{0})...)), false},
		{"string length past end", rawDoc(elem(0x02, cat(le32(10), []byte{'a', 0})...)), false},
		{"string not null-terminated", rawDoc(elem(0x02, cat(le32(2), []byte{'a', 'b'})...)), false},
		{"embedded document length lie", rawDoc(elem(0x03, cat(le32(100), []byte{0})...)), false},
		{"embedded document with trailing byte", rawDoc(elem(0x03, cat(le32(6), []byte{1, 0})...)), false},
		{"embedded bad element", rawDoc(elem(0x04, rawDoc(elem(0x08, 7))...)), false},
		{"binary length negative", rawDoc(elem(0x05, cat(le32(-1), []byte{0})...)), false},
		{"binary past end", rawDoc(elem(0x05, cat(le32(4), []byte{0, 1})...)), false},
		{"old binary bad inner length", rawDoc(elem(0x05, cat(le32(7), []byte{2}, le32(9), []byte{1, 2, 3})...)), false},
		{"regex without options", rawDoc(elem(0x0B, 'a', 0, 'i')), false},
		{"dbpointer truncated", rawDoc(elem(0x0C, cat(le32(2), []byte{'a', 0}, make([]byte, 11))...)), false},
		{"code with scope too short", rawDoc(elem(0x0F, cat(le32(13), le32(1), []byte{0}, le32(5))...)), false},
		{"code with scope length mismatch", rawDoc(elem(0x0F, cat(le32(20), le32(1), []byte{0}, rawDoc())...)), false},
		{"code with scope bad scope", rawDoc(elem(0x0F, cat(le32(14), le32(1), []byte{0}, le32(5), []byte{1})...)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateDocument(tt.doc)
			if tt.valid {
				checkErr(t, err, "")
				if err := bson.Raw(tt.doc).Validate(); err != nil {
					t.Fatalf("the driver rejects a valid document: %v", err)
				}
				return
			}
			checkErr(t, err, "InvalidBSON")
		})
	}
	// Too deep is Overflow, which MongoDB answers without closing the
	// connection (TooDeep).
	if err := validateDocument(nested(rawdoc.MaxDepth + 1)); !TooDeep(err) {
		t.Errorf("depth over limit: %v, want Overflow", err)
	}
}
