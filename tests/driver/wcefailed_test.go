package driver_test

import (
	"context"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// TestWriteConcernErrorOnFailedCommands: a replica set member waits for
// the write concern of every command that may write once it has run,
// failed or not, so a failed write command carries a writeConcernError
// beside its error; a read-only aggregate and a command refused while its
// document is parsed do not wait.
// https://www.mongodb.com/docs/v7.0/reference/write-concern/
func TestWriteConcernErrorOnFailedCommands(t *testing.T) {
	client := startReplSet(t)
	ctx := context.Background()
	db := client.Database(testDB)
	w2 := bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: 2}}}
	setup := []bson.D{
		{{Key: "insert", Value: "wcf"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}},
		{{Key: "createIndexes", Value: "wcf"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a"}}}}},
	}
	for _, c := range setup {
		if err := db.RunCommand(ctx, c).Err(); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		db   string // testDB when empty
		cmd  bson.D
		code int  // the command's error code, 0 when it succeeds
		wce  bool // a writeConcernError (100) is expected
	}{
		{"createIndexes conflicting", "", bson.D{{Key: "createIndexes", Value: "wcf"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "name", Value: "a"}}}}, w2}, 86, true},
		{"create existing with other options", "", bson.D{{Key: "create", Value: "wcf"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}, w2}, 48, true},
		{"rename a missing collection", "admin", bson.D{{Key: "renameCollection", Value: testDB + ".nope"}, {Key: "to", Value: testDB + ".other"}, w2}, 26, true},
		{"dropIndexes of a missing index", "", bson.D{{Key: "dropIndexes", Value: "wcf"}, {Key: "index", Value: "nope"}, w2}, 27, true},
		{"insert with a duplicate key", "", bson.D{{Key: "insert", Value: "wcf"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, w2}, 11000, true},
		{"insert refused by its parse", "", bson.D{{Key: "insert", Value: "wcf"}, {Key: "documents", Value: bson.A{}}, w2}, 16, false},
		{"rename outside admin", "", bson.D{{Key: "renameCollection", Value: testDB + ".wcf"}, {Key: "to", Value: testDB + ".other"}, w2}, 13, false},
		{"insert with an unknown field", "", bson.D{{Key: "insert", Value: "wcf"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "bogus", Value: 1}, w2}, 40415, false},
		{"read-only aggregate", "", bson.D{{Key: "aggregate", Value: "wcf"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, w2}, 0, false},
		{"aggregate with $out", "", bson.D{{Key: "aggregate", Value: "wcf"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$out", Value: "wcfout"}}}}, {Key: "cursor", Value: bson.D{}}, w2}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			on := db
			if tc.db != "" {
				on = client.Database(tc.db)
			}
			reply, err := on.RunCommand(ctx, tc.cmd).Raw()
			var ce mongo.CommandError
			var we mongo.WriteException
			switch {
			case errors.As(err, &ce):
				reply = ce.Raw
			case errors.As(err, &we):
				reply = we.Raw
			case err != nil:
				t.Fatal(err)
			}
			code, _ := reply.Lookup("code").AsInt64OK()
			if wcode, ok := reply.Lookup("writeErrors", "0", "code").AsInt64OK(); ok {
				code = wcode
			}
			if int(code) != tc.code {
				t.Fatalf("reply %s, want code %d", reply, tc.code)
			}
			wce, has := reply.Lookup("writeConcernError", "code").AsInt64OK()
			if has != tc.wce || (has && wce != 100) {
				t.Fatalf("reply %s, want writeConcernError %v", reply, tc.wce)
			}
		})
	}
}
