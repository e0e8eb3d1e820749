package planner

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestShellDoc: key patterns as MongoDB's planSummary writes them.
func TestShellDoc(t *testing.T) {
	for _, tc := range []struct {
		pattern bson.D
		want    string
	}{
		{bson.D{}, "{}"},
		{bson.D{{Key: "a", Value: int32(1)}}, "{ a: 1 }"},
		{bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: int64(-1)}}, "{ a: 1, b: -1 }"},
		{bson.D{{Key: "h", Value: "hashed"}, {Key: "x", Value: 2.0}, {Key: "y", Value: -1.5}}, `{ h: "hashed", x: 2.0, y: -1.5 }`},
		{bson.D{{Key: "a.b", Value: int32(1)}}, "{ a.b: 1 }"},
	} {
		raw, err := bson.Marshal(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := shellDoc(raw); got != tc.want {
			t.Errorf("shellDoc(%v) = %s, want %s", tc.pattern, got, tc.want)
		}
	}
}
