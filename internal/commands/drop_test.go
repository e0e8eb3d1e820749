package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestDropSystemCollections: the drop command refuses an existing system
// collection that MongoDB's DatabaseImpl::dropCollection does not list as
// droppable (IllegalOperation), and leaves it in place; the droppable
// ones go.
func TestDropSystemCollections(t *testing.T) {
	for _, tc := range []struct {
		db, coll string
		code     int32
		msg      string
	}{
		{"admin", "system.version", 20, "can't drop system collection admin.system.version"},
		{"admin", "system.users", 20, "can't drop system collection admin.system.users"},
		{"admin", "system.roles", 20, "can't drop system collection admin.system.roles"},
		{"test", "system.js", 0, ""},
	} {
		t.Run(tc.db+"."+tc.coll, func(t *testing.T) {
			s := argsService(t)
			seed := bson.D{{Key: "insert", Value: tc.coll}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: "seeded"}}}}}
			if c := code(runCmdOn(t, s, tc.db, seed)); c != 0 {
				t.Fatalf("seeding: code %d", c)
			}
			reply := runCmdOn(t, s, tc.db, bson.D{{Key: "drop", Value: tc.coll}})
			if got, msg := code(reply), errmsg(reply); got != tc.code || msg != tc.msg {
				t.Fatalf("drop: %d %q, want %d %q", got, msg, tc.code, tc.msg)
			}
			if exists := s.Engine.Collection(tc.db, tc.coll) != nil; exists != (tc.code != 0) {
				t.Errorf("collection exists after the drop: %v", exists)
			}
		})
	}
}

// TestDropSystemViewsWithTimeseries: system.views is not dropped while a
// time series collection is defined in it (CommandFailed).
func TestDropSystemViewsWithTimeseries(t *testing.T) {
	s := argsService(t)
	ts := bson.D{{Key: "create", Value: "ts"}, {Key: "timeseries", Value: bson.D{{Key: "timeField", Value: "t"}}}}
	if c := code(runCmd(t, s, ts)); c != 0 {
		t.Fatalf("create: code %d", c)
	}
	reply := runCmd(t, s, bson.D{{Key: "drop", Value: "system.views"}})
	if got, msg := code(reply), errmsg(reply); got != 125 || msg != "cannot drop collection test.system.views when time-series collections are present." {
		t.Fatalf("drop: %d %q", got, msg)
	}
}

// TestDropDatabaseForgetsProfiling: dropDatabase clears the database's
// profiling level, as MongoDB's DatabaseHolderImpl::dropDb clears its
// profile settings: the drop is not profiled, no system.profile comes
// back, and the database, made again, profiles at the default level.
func TestDropDatabaseForgetsProfiling(t *testing.T) {
	s := argsService(t)
	run := func(cmd string) bson.Raw {
		t.Helper()
		var raw bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(cmd), true, &raw); err != nil {
			t.Fatal(err)
		}
		reply := runIn(t, s, "pq", raw)
		if code(reply) != 0 {
			t.Fatalf("%s: %s", cmd, reply)
		}
		return reply
	}
	run(`{"profile": 2}`)
	run(`{"insert": "c", "documents": [{"_id": 1}]}`)
	run(`{"dropDatabase": 1}`)
	if got := run(`{"listCollections": 1, "nameOnly": true}`).Lookup("cursor", "firstBatch"); got.String() != `[]` {
		t.Fatalf("collections after dropDatabase: %s", got)
	}
	if was := run(`{"profile": -1}`).Lookup("was"); was.Int32() != 0 {
		t.Fatalf("profiling level after dropDatabase: %s", was)
	}
}
