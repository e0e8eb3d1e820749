package commands

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestSecondaryRules: every command says whether a secondary runs it, and
// every rule names a command.
func TestSecondaryRules(t *testing.T) {
	for name := range handlers {
		if _, ok := secondaryRules[name]; !ok {
			t.Errorf("%s: no rule in secondaryRules", name)
		}
	}
	for name := range secondaryRules {
		if _, ok := handlers[name]; !ok {
			t.Errorf("%s: a rule for no command", name)
		}
	}
}

// TestTransactionAcrossStepDown: a transaction whose session was busy
// when the member stepped down (so not aborted then) is aborted at its
// next command, here its commit after the member is primary again.
func TestTransactionAcrossStepDown(t *testing.T) {
	s := newReplSetService(t, time.Unix(1_700_000_000, 0))
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: make([]byte, 16)}}}
	txn := bson.D{{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}
	reply := runCmd(t, s, append(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "startTransaction", Value: true}}, txn...))
	if code(reply) != 0 {
		t.Fatalf("insert in transaction: %v", reply)
	}
	s.topo.downs.Add(1) // a step down, the session's abort missed
	reply = runCmdOn(t, s, "admin", append(bson.D{{Key: "commitTransaction", Value: 1}}, txn...))
	if code(reply) != 251 {
		t.Fatalf("commit after a step down: %v, want NoSuchTransaction", reply)
	}
	if n, _ := runCmd(t, s, bson.D{{Key: "count", Value: "c"}}).Lookup("n").AsInt64OK(); n != 0 {
		t.Errorf("%d documents after the aborted transaction", n)
	}
}
