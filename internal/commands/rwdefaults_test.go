package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestDefaultWriteConcern: on a replica set member a write command sent
// without a write concern, or with an empty one, runs with the default:
// the implicit w: "majority" (which waits for the journal), then the one
// setDefaultRWConcern stored; a given write concern, a statement in a
// transaction, a command that takes none and a standalone keep theirs.
func TestDefaultWriteConcern(t *testing.T) {
	s := newTestService(t)
	s.ReplSetName = "rs"
	run := func(cmd bson.D) *Request {
		t.Helper()
		db := "db"
		if handlers[cmd[0].Key].admin {
			db = "admin"
		}
		r := &Request{DB: db, Cmd: marshal(cmd), Conn: &Conn{}}
		if reply := s.Run(r); bson.Raw(reply).Lookup("ok").Double() != 1 {
			t.Fatalf("%v: %v", cmd, bson.Raw(reply))
		}
		return r
	}
	insert := bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}}
	for _, tc := range []struct {
		name    string
		cmd     bson.D
		mode    string
		w       int64
		journal bool
		prov    string
	}{
		{"none", insert, "majority", 0, true, "implicitDefault"},
		{"empty", append(insert[:2:2], bson.E{Key: "writeConcern", Value: bson.D{}}), "majority", 0, true, "implicitDefault"},
		{"given", append(insert[:2:2], bson.E{Key: "writeConcern", Value: bson.D{{Key: "w", Value: 1}}}), "", 1, false, "clientSupplied"},
		{"no write concern taken", bson.D{{Key: "find", Value: "c"}}, "", 0, false, ""},
	} {
		wc := run(tc.cmd).Args.WriteConcern
		if wc.WMode != tc.mode || wc.W != tc.w || wc.Journal() != tc.journal || wc.Provenance != tc.prov {
			t.Errorf("%s: %+v", tc.name, wc)
		}
	}
	run(bson.D{{Key: "setDefaultRWConcern", Value: 1}, {Key: "defaultWriteConcern", Value: bson.D{{Key: "w", Value: 1}, {Key: "j", Value: false}}}})
	if wc := run(insert).Args.WriteConcern; wc.WMode != "" || wc.W != 1 || wc.Journal() || wc.Provenance != "customDefault" {
		t.Errorf("after setDefaultRWConcern w: 1: %+v", wc)
	}
	s.ReplSetName = ""
	if wc := run(insert).Args.WriteConcern; wc.Journal() || wc.Provenance != "" {
		t.Errorf("standalone: %+v", wc)
	}
}
