package engine

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/oplog"
)

// TestOplogWriteJoin: writes joined under one stamp (TiKV) make one
// applyOps entry of their operations in order, without a session, with
// each pre-image at its operation's index; the stamp lands in its ts; the
// first write is left as it was.
func TestOplogWriteJoin(t *testing.T) {
	doc := func(v int) bson.Raw {
		b, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: v}})
		return b
	}
	sess := &oplog.Session{LSID: doc(0), TxnNumber: 3, StmtID: 0}
	wall := time.UnixMilli(1_700_000_000_000)
	ins := &oplogWrite{ops: []oplog.Op{{Kind: oplog.Insert, NS: "db.c", O: doc(1)}}, sess: sess, wall: wall}
	upd := &oplogWrite{ops: []oplog.Op{{Kind: oplog.Update, NS: "db.c", O: doc(2), O2: doc(0)}}, pre: []txnPreImage{{doc: doc(1)}}, sess: sess, wall: wall}
	del := &oplogWrite{ops: []oplog.Op{{Kind: oplog.Delete, NS: "db.c", O: doc(0)}}, pre: []txnPreImage{{doc: doc(2)}}, wall: wall}

	joined := ins.Join(upd).Join(del)
	v, at := joined.Value()
	const stamp = uint64(1_700_000_000)<<32 | 7
	binary.LittleEndian.PutUint64(v[at:], stamp)
	stored := oplog.Stored(v)
	e := oplog.Parse(stored.Entry())
	if e.Kind != oplog.Command || e.NS != "admin.$cmd" || e.HasTxn || e.LSID != nil {
		t.Fatalf("joined entry: %+v", e)
	}
	if got := uint64(e.TS.T)<<32 | uint64(e.TS.I); got != stamp {
		t.Fatalf("ts %v, want the stamp %x", e.TS, stamp)
	}
	ops, _ := e.O.Lookup("applyOps").Array().Values()
	if len(ops) != 3 {
		t.Fatalf("%d operations", len(ops))
	}
	for i, want := range []string{oplog.Insert, oplog.Update, oplog.Delete} {
		if k := oplog.Parse(ops[i].Document()).Kind; k != want {
			t.Errorf("operation %d is %q, want %q", i, k, want)
		}
	}
	if stored.PreImage(0) != nil || !bytes.Equal(stored.PreImage(1), doc(1)) || !bytes.Equal(stored.PreImage(2), doc(2)) {
		t.Errorf("pre-images %v %v %v", stored.PreImage(0), stored.PreImage(1), stored.PreImage(2))
	}

	v, _ = ins.Value()
	if e := oplog.Parse(oplog.Stored(v).Entry()); e.Kind != oplog.Insert || !e.HasTxn {
		t.Fatalf("the first write after the join: %+v", e)
	}
}
