package mongoerr

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

func TestCodeName(t *testing.T) {
	for _, tc := range []struct {
		code Code
		want string
	}{
		{BadValue, "BadValue"},
		{UnsatisfiableWriteConcern, "UnsatisfiableWriteConcern"},
		{DuplicateKey, "DuplicateKey"},
		{IDLUnknownField, "Location40415"}, // unnamed in 7.0
		{InterruptedAtShutdown, "InterruptedAtShutdown"},
		{Code(51024), "Location51024"}, // MongoDB names unnamed codes by their location
	} {
		if got := tc.code.Name(); got != tc.want {
			t.Errorf("%d.Name() = %q, want %q", tc.code, got, tc.want)
		}
	}
	for c, n := range names {
		if n == "" || n[0] < 'A' || n[0] > 'Z' {
			t.Errorf("code %d has name %q", c, n)
		}
	}
}

// TestAppendStatus: code, codeName, errmsg, then the extra fields, in
// Status::serialize's order.
func TestAppendStatus(t *testing.T) {
	e := &Error{Code: DuplicateKey, Msg: "dup", Extra: bson.D{{Key: "keyValue", Value: bson.D{{Key: "u", Value: int32(1)}}}}}
	start, d := bsoncore.AppendDocumentStart(nil)
	d, err := e.AppendStatus(d)
	if err != nil {
		t.Fatal(err)
	}
	d, _ = bsoncore.AppendDocumentEnd(d, start)
	want, _ := bson.Marshal(bson.D{{Key: "code", Value: int32(11000)}, {Key: "codeName", Value: "DuplicateKey"}, {Key: "errmsg", Value: "dup"}, {Key: "keyValue", Value: bson.D{{Key: "u", Value: int32(1)}}}})
	if !bytes.Equal(d, want) {
		t.Fatalf("%v, want %v", bson.Raw(d), bson.Raw(want))
	}
	if _, err := (&Error{Extra: bson.D{{Key: "x", Value: make(chan int)}}}).AppendStatus(nil); err == nil {
		t.Fatal("an extra field that does not marshal gave no error")
	}
}
