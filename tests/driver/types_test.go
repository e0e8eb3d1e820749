package driver_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// negZero is the double -0.
func negZero() float64 { return math.Copysign(0, -1) }

// dec parses a Decimal128 literal.
func dec(t *testing.T, s string) bson.Decimal128 {
	t.Helper()
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

// TestBSONTypesRoundTrip proves every BSON type, with its edge values, is
// stored and returned byte for byte as inserted.
func TestBSONTypesRoundTrip(t *testing.T) {
	oid := bson.NewObjectID()
	tests := []struct {
		name  string
		value any
	}{
		{"double", 3.141592653589793},
		{"double NaN", math.NaN()},
		{"double +Inf", math.Inf(1)},
		{"double -Inf", math.Inf(-1)},
		{"double -0", negZero()},
		{"double smallest subnormal", math.SmallestNonzeroFloat64},
		{"double max", math.MaxFloat64},
		{"string empty", ""},
		{"string unicode", "héllo wörld 日本語 🎉 \u200b\U0010ffff"},
		{"string long", strings.Repeat("xyz", 10000)},
		{"embedded doc", bson.D{{Key: "b", Value: int32(1)}, {Key: "a", Value: bson.D{{Key: "z", Value: "deep"}}}}},
		{"empty doc", bson.D{}},
		{"array", bson.A{int32(1), "two", 3.0, nil}},
		{"empty array", bson.A{}},
		{"array of arrays", bson.A{bson.A{int32(1), int32(2)}, bson.A{}, bson.A{bson.A{"x"}}}},
		{"nested empties", bson.D{{Key: "d", Value: bson.D{{Key: "e", Value: bson.D{}}}}, {Key: "a", Value: bson.A{bson.A{}, bson.D{}}}}},
		{"binary generic", bson.Binary{Subtype: 0x00, Data: []byte{0, 1, 2, 255}}},
		{"binary empty", bson.Binary{Subtype: 0x00, Data: []byte{}}},
		{"binary function", bson.Binary{Subtype: 0x01, Data: []byte("fn")}},
		{"binary old", bson.Binary{Subtype: 0x02, Data: []byte("old binary")}},
		{"binary uuid old", bson.Binary{Subtype: 0x03, Data: bytes.Repeat([]byte{0xab}, 16)}},
		{"binary uuid", bson.Binary{Subtype: 0x04, Data: bytes.Repeat([]byte{0xcd}, 16)}},
		{"binary md5", bson.Binary{Subtype: 0x05, Data: bytes.Repeat([]byte{0xef}, 16)}},
		{"binary encrypted", bson.Binary{Subtype: 0x06, Data: []byte{1, 2, 3}}},
		{"binary column", bson.Binary{Subtype: 0x07, Data: []byte{4, 5, 6}}},
		{"binary sensitive", bson.Binary{Subtype: 0x08, Data: []byte{7, 8, 9}}},
		{"binary user defined", bson.Binary{Subtype: 0x80, Data: []byte("user")}},
		{"undefined", bson.Undefined{}},
		{"objectid", oid},
		{"bool true", true},
		{"bool false", false},
		{"datetime", bson.DateTime(1700000000123)},
		{"datetime negative", bson.DateTime(-62135596800000)},
		{"datetime min", bson.DateTime(math.MinInt64)},
		{"null", nil},
		{"regex", bson.Regex{Pattern: "^a.*b$", Options: "imsx"}},
		{"regex empty", bson.Regex{Pattern: "", Options: ""}},
		{"dbpointer", bson.DBPointer{DB: "test.coll", Pointer: oid}},
		{"javascript", bson.JavaScript("function() { return 1; }")},
		{"symbol", bson.Symbol("sym")},
		{"code with scope", bson.CodeWithScope{Code: "function() { return x; }", Scope: bson.D{{Key: "x", Value: int32(1)}}}},
		{"int32", int32(-2147483648)},
		{"int32 max", int32(math.MaxInt32)},
		{"timestamp", bson.Timestamp{T: 1700000000, I: 7}},
		// A top-level Timestamp(0, 0) is filled on insert, as in MongoDB:
		// see TestEmptyTimestamps.
		{"timestamp zero", bson.D{{Key: "ts", Value: bson.Timestamp{}}}},
		{"int64", int64(math.MinInt64)},
		{"int64 max", int64(math.MaxInt64)},
		{"decimal", dec(t, "1234.5678")},
		{"decimal NaN", dec(t, "NaN")},
		{"decimal Inf", dec(t, "Infinity")},
		{"decimal -Inf", dec(t, "-Infinity")},
		{"decimal -0", dec(t, "-0")},
		{"decimal trailing zeros", dec(t, "1.000")},
		{"decimal max exponent", dec(t, "9.999999999999999999999999999999999E+6144")},
		{"decimal min exponent", dec(t, "1E-6176")},
		{"minkey", bson.MinKey{}},
		{"maxkey", bson.MaxKey{}},
	}
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("types")
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := mustRaw(t, bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: tt.value}})
			if _, err := coll.InsertOne(t.Context(), want); err != nil {
				t.Fatal(err)
			}
			got, err := coll.FindOne(t.Context(), bson.D{{Key: "_id", Value: int32(i)}}).Raw()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("stored %v\n want %v", got, want)
			}
		})
	}
}

// TestFieldNamesRoundTrip proves unusual field names, the empty name
// included, are stored unchanged and in order.
func TestFieldNamesRoundTrip(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("names")
	want := mustRaw(t, bson.D{
		{Key: "_id", Value: int32(1)},
		{Key: "", Value: "empty name"},
		{Key: "z", Value: int32(1)},
		{Key: "a", Value: int32(2)},
		{Key: "ünï 名前", Value: true},
		{Key: "sub", Value: bson.D{{Key: "", Value: bson.D{{Key: "", Value: bson.A{}}}}}},
		{Key: "with space", Value: nil},
	})
	if _, err := coll.InsertOne(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	got, err := coll.FindOne(t.Context(), bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("stored %v\n want %v", got, want)
	}
}

// maxDocument is a document of exactly size bytes: an _id and one string.
func maxDocument(t *testing.T, size int) bson.Raw {
	t.Helper()
	// {_id: int32, s: string}: 4 (length) + 9 (_id) + 7 (s header) + 1
	// (string NUL) + 1 (document NUL) = 22 bytes around the string.
	doc := mustRaw(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "s", Value: strings.Repeat("x", size-22)}})
	if len(doc) != size {
		t.Fatalf("built a %d-byte document, want %d", len(doc), size)
	}
	return doc
}

// TestMaxSizeDocument proves a document of exactly 16 MiB is stored and
// returned intact, and one byte more is refused with BadValue (2), as
// MongoDB's fixDocumentForInsert refuses it (jstests/core/max_doc_size.js),
// when the driver lets it through to the server.
func TestMaxSizeDocument(t *testing.T) {
	const maxBSON = 16 * 1024 * 1024
	if testkv.TiKV() {
		// Not done yet: a document is one value, and TiKV refuses a
		// Raft entry over 8 MiB (raft-entry-max-size; mocktikv the same).
		t.Skip("FOLIO_TEST_STORAGE=tikv: documents over 8 MiB are not stored on TiKV yet (one value per document; TiKV's Raft entry limit is 8 MiB)")
	}
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("big")

	want := maxDocument(t, maxBSON)
	if _, err := coll.InsertOne(t.Context(), want); err != nil {
		t.Fatalf("insert a %d-byte document: %v", len(want), err)
	}
	got, err := coll.FindOne(t.Context(), bson.D{}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the %d-byte document came back as %d bytes, or changed", len(want), len(got))
	}

	tooBig := maxDocument(t, maxBSON+1)
	if _, err := coll.InsertOne(t.Context(), tooBig); err == nil {
		t.Fatal("the driver inserted a document over 16 MiB")
	}
	reply, err := client.Database(testDB).RunCommand(t.Context(), bson.D{
		{Key: "insert", Value: "big2"},
		{Key: "documents", Value: bson.A{tooBig}},
	}).Raw()
	switch {
	case serverCode(err) != 0:
		requireCode(t, err, 2, "")
	case err != nil:
		t.Logf("the driver refused the raw insert: %v", err)
	default:
		code, ok := reply.Lookup("writeErrors", "0", "code").AsInt64OK()
		if !ok || code != 2 {
			t.Fatalf("raw insert of a %d-byte document: reply %v, want write error 2 BadValue", len(tooBig), reply)
		}
	}
	if n, err := client.Database(testDB).Collection("big2").CountDocuments(t.Context(), bson.D{}); err != nil || n != 0 {
		t.Fatalf("big2 holds %d documents (%v), want 0", n, err)
	}

	// max_doc_size.js: an upsert whose new document is over the limit
	// fails with 17420 (the upsert stage), an update's result with 17419.
	over := strings.Repeat("x", maxBSON-21)
	writeCode := func(cmd bson.D) int64 {
		var we mongo.WriteException
		if err := client.Database(testDB).RunCommand(t.Context(), cmd).Err(); !errors.As(err, &we) || len(we.WriteErrors) != 1 {
			t.Fatalf("%v: %v, want a write error", cmd[0], err)
		}
		return int64(we.WriteErrors[0].Code)
	}
	upsert := bson.D{{Key: "update", Value: "big3"}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: over}}}, {Key: "upsert", Value: true}}}}}
	if code := writeCode(upsert); code != 17420 {
		t.Fatalf("oversized upsert: code %d, want 17420", code)
	}
	pipelineUpsert := bson.D{{Key: "update", Value: "big4"}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.A{bson.D{{Key: "$set", Value: bson.D{{Key: "s", Value: over}}}}}}, {Key: "upsert", Value: true}}}}}
	if code := writeCode(pipelineUpsert); code != 17420 {
		t.Fatalf("oversized pipeline upsert: code %d, want 17420", code)
	}
	set := bson.D{{Key: "update", Value: "big"}, {Key: "updates", Value: bson.A{bson.D{
		{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "s", Value: over}}}}}}}}}
	if code := writeCode(set); code != 17419 {
		t.Fatalf("oversized $set: code %d, want 17419", code)
	}
}
