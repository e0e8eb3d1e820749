package main

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestCmdBuf checks the hand-built documents against the driver's encoding
// of the same bson.D, a longer value before a shorter one so that reused
// buffers must be cut.
func TestCmdBuf(t *testing.T) {
	var b cmdBuf
	for _, tt := range []struct{ key, field, value string }{
		{"user6284781860667377211", "field9", "a longer value than the next one"},
		{"u1", "field0", ""},
		{"", "f", "x"},
	} {
		want, err := bson.Marshal(bson.D{{Key: "_id", Value: tt.key}})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.idFilter(tt.key); !bytes.Equal(got, want) {
			t.Errorf("idFilter(%q) = %v, want %v", tt.key, got, bson.Raw(want))
		}
		want, err = bson.Marshal(bson.D{{Key: "$set", Value: bson.D{{Key: tt.field, Value: tt.value}}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.setOne(tt.field, tt.value); !bytes.Equal(got, want) {
			t.Errorf("setOne(%q, %q) = %v, want %v", tt.field, tt.value, got, bson.Raw(want))
		}
	}
}
