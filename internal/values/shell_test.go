package values

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestShellDoc: documents as MongoDB's BSONObj::toString writes them
// (planSummary's key patterns, currentOp's truncated commands).
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
		{bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.A{int32(1), 2.0, bson.D{}}}}}, {Key: "e", Value: bson.A{}}}, `{ find: "c", filter: { a: [ 1, 2.0, {} ] }, e: [] }`},
		{bson.D{{Key: "s", Value: strings.Repeat("x", 159)}}, `{ s: "` + strings.Repeat("x", 159) + `" }`},
		{bson.D{{Key: "s", Value: strings.Repeat("x", 160)}}, `{ s: "` + strings.Repeat("x", 150) + `..." }`},
		{bson.D{{Key: "b", Value: bson.Binary{Data: make([]byte, 81)}}}, `{ b: BinData(0, ` + strings.Repeat("00", 70) + `...) }`},
	} {
		raw, err := bson.Marshal(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := ShellDoc(raw); got != tc.want {
			t.Errorf("ShellDoc(%v) = %s, want %s", tc.pattern, got, tc.want)
		}
	}
}
