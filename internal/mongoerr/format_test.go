package mongoerr

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestNewShowsBSONAsMongoDB: BSON among New's arguments is shown as
// MongoDB's messages show it, and the caller's arguments are left alone.
func TestNewShowsBSONAsMongoDB(t *testing.T) {
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: int32(1)}, {Key: "b", Value: "x"}})
	args := []any{bson.Raw(doc), bson.RawValue{Type: bson.TypeInt32, Value: []byte{7, 0, 0, 0}}, bson.D{{Key: "c", Value: true}}, 3}
	got := New(BadValue, "%s %s %s %d", args...).Msg
	if want := `{ a: 1, b: "x" } 7 { c: true } 3`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if _, ok := args[0].(bson.Raw); !ok {
		t.Errorf("New changed its caller's arguments: %v", args)
	}
}
