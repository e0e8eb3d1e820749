package main

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// TestAppendStringBytes checks the bulk workload's string element encoder
// against bsoncore's.
func TestAppendStringBytes(t *testing.T) {
	for _, v := range []string{"", "x", "a longer value with spaces"} {
		got := appendStringBytes([]byte{1}, "field3", []byte(v))
		want := bsoncore.AppendStringElement([]byte{1}, "field3", v)
		if !bytes.Equal(got, want) {
			t.Errorf("%q: got %x, want %x", v, got, want)
		}
	}
}
