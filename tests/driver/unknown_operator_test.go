package driver_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestUnknownTopLevelOperatorHint: MongoDB's message for an unknown
// top-level operator points at $nor for $not, else at $getField/$setField.
func TestUnknownTopLevelOperatorHint(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("unknown_top_level")
	ctx := context.Background()
	for _, tc := range []struct{ op, msg string }{
		{"$not", "unknown top level operator: $not. If you are trying to negate an entire expression, use $nor."},
		{"$in", "unknown top level operator: $in. If you have a field name that starts with a '$' symbol, consider using $getField or $setField."},
	} {
		cur, err := coll.Find(ctx, bson.D{{Key: tc.op, Value: bson.D{{Key: "a", Value: 1}}}})
		if err == nil {
			cur.Close(ctx)
		}
		var ce mongo.CommandError
		if !errors.As(err, &ce) || ce.Code != 2 || ce.Message != tc.msg {
			t.Errorf("%s: got %v, want BadValue %q", tc.op, err, tc.msg)
		}
	}
}
