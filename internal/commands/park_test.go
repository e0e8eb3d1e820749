package commands

import (
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/cursors"
)

// TestCursorsPark: the cursors of a find, of an aggregate that is all
// query and of one with further stages park through their wrappers down
// to the engine's scan (Park reports an iterator given up) after their
// first batch, and return what they return read through when parked
// before every getMore.
func TestCursorsPark(t *testing.T) {
	s := newReplSetService(t, time.Now())
	var docs bson.A
	for i := range 40 {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "a", Value: int32(i % 4)}})
	}
	if c := code(runCmd(t, s, bson.D{{Key: "insert", Value: "p"}, {Key: "documents", Value: docs}})); c != 0 {
		t.Fatalf("insert: code %d", c)
	}
	pipeline := func(stages ...bson.D) bson.E {
		a := bson.A{}
		for _, st := range stages {
			a = append(a, st)
		}
		return bson.E{Key: "pipeline", Value: a}
	}
	match := bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$ne", Value: 2}}}}}}
	cmds := []struct {
		name string
		cmd  bson.D
	}{
		{"find", bson.D{{Key: "find", Value: "p"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$ne", Value: 2}}}}}, {Key: "batchSize", Value: 4}}},
		{"aggregate of a $match", bson.D{{Key: "aggregate", Value: "p"}, pipeline(match), {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 4}}}}},
		{"aggregate with $addFields", bson.D{{Key: "aggregate", Value: "p"}, pipeline(match, bson.D{{Key: "$addFields", Value: bson.D{{Key: "b", Value: 1}}}}), {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: 4}}}}},
	}
	// read returns the _ids of the whole result, parking the cursor
	// before each getMore when park is set.
	read := func(cmd bson.D, park bool) []int32 {
		reply := runCmd(t, s, cmd)
		var ids []int32
		collect := func(batch string) {
			vals, _ := reply.Lookup("cursor", batch).Array().Values()
			for _, v := range vals {
				ids = append(ids, v.Document().Lookup("_id").Int32())
			}
		}
		collect("firstBatch")
		for id := reply.Lookup("cursor", "id").Int64(); id != 0; id = reply.Lookup("cursor", "id").Int64() {
			if park {
				c, err := s.Cursors.Checkout(id, nil)
				if err != nil {
					t.Fatal(err)
				}
				// A pipeline's scan read to its end in its first 4 MiB
				// parks once: nothing reads it again.
				p, ok := c.Source().(cursors.Parker)
				if parked := ok && p.Park(); !parked && len(ids) == 4 {
					t.Fatalf("%v: the cursor did not park (a Parker: %v)", cmd, ok)
				}
				s.Cursors.Return(c)
			}
			reply = runCmd(t, s, bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "p"}, {Key: "batchSize", Value: 4}})
			if c := code(reply); c != 0 {
				t.Fatalf("getMore: %s", reply)
			}
			collect("nextBatch")
		}
		return ids
	}
	for _, c := range cmds {
		want, got := read(c.cmd, false), read(c.cmd, true)
		if len(want) != 30 || !slices.Equal(got, want) {
			t.Errorf("%s: parked %v, read through %v", c.name, got, want)
		}
	}
}
