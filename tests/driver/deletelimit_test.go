package driver_test

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestDeleteLimitAsDouble: a delete statement's limit is read as a double
// (readMultiDeleteProperty): any other type reads as 0, a delete of every
// match; a number other than 0 or 1 is FailedToParse.
func TestDeleteLimitAsDouble(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	db := client.Database(testDB)
	for _, tc := range []struct {
		name    string
		limit   any
		deleted int32
		code    int // of the command's failure
	}{
		{"one", int32(1), 1, 0},
		{"one as a decimal", bson.NewDecimal128(0x3040000000000000, 1), 1, 0},
		{"zero", 0.0, 3, 0},
		{"a string", "1", 3, 0},
		{"null", nil, 3, 0},
		{"a fraction", 42.13, 0, 9},
		{"two", int64(2), 0, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := db.Collection("dl")
			_ = c.Drop(ctx)
			if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "v", Value: 1}}, bson.D{{Key: "v", Value: 1}}, bson.D{{Key: "v", Value: 1}}}); err != nil {
				t.Fatal(err)
			}
			reply, err := db.RunCommand(ctx, bson.D{{Key: "delete", Value: "dl"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "limit", Value: tc.limit}}}}}).Raw()
			if tc.code != 0 {
				requireCode(t, err, tc.code, "") // the command's parse fails
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := reply.Lookup("n").Int32(); n != tc.deleted {
				t.Errorf("%s: n %d, want %d", reply, n, tc.deleted)
			}
		})
	}
}
