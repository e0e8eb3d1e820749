package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestHasEmptyTimestamp: only a top-level Timestamp(0, 0) other than _id
// counts; a 0x11 byte elsewhere (the Timestamp type's) is not one.
func TestHasEmptyTimestamp(t *testing.T) {
	zero := bson.Timestamp{}
	for _, tc := range []struct {
		name string
		doc  bson.D
		want bool
	}{
		{"no timestamp", bson.D{{Key: "a", Value: "x"}}, false},
		{"0x11 in a value", bson.D{{Key: "a", Value: int32(0x11)}, {Key: "b", Value: "\x11"}}, false},
		{"empty timestamp", bson.D{{Key: "a", Value: 1}, {Key: "ts", Value: zero}}, true},
		{"empty _id", bson.D{{Key: "_id", Value: zero}}, false},
		{"nested", bson.D{{Key: "a", Value: bson.D{{Key: "ts", Value: zero}}}}, false},
		{"set timestamp", bson.D{{Key: "ts", Value: bson.Timestamp{T: 1}}}, false},
	} {
		doc, err := bson.Marshal(tc.doc)
		if err != nil {
			t.Fatal(err)
		}
		if got := hasEmptyTimestamp(doc); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
