package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestOplogWriteJoin: writes joined under one stamp (TiKV) make one
// applyOps entry of their operations in order, without a session, with
// each pre-image at its operation's index, appended to what the store's
// buffer held; the stamp lands in its ts; the first write is left as it
// was.
func TestOplogWriteJoin(t *testing.T) {
	doc := func(v int) bson.Raw {
		b, _ := bson.Marshal(bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: v}})
		return b
	}
	sess := oplog.Session{LSID: doc(0), TxnNumber: 3, StmtID: 0}
	wall := time.UnixMilli(1_700_000_000_000)
	ins := &oplogWrite{ops: []oplog.Op{{Kind: oplog.Insert, NS: "db.c", O: doc(1)}}, sess: sess, wall: wall}
	upd := &oplogWrite{ops: []oplog.Op{{Kind: oplog.Update, NS: "db.c", O: doc(2), O2: doc(0)}}, pre: []txnPreImage{{doc: doc(1)}}, sess: sess, wall: wall}
	del := &oplogWrite{ops: []oplog.Op{{Kind: oplog.Delete, NS: "db.c", O: doc(0)}}, pre: []txnPreImage{{doc: doc(2)}}, wall: wall}

	joined := ins.Join(upd).Join(del)
	// appended after what the buffer held (a store's other values)
	v, at := joined.AppendValue([]byte("held"))
	if string(v[:4]) != "held" {
		t.Fatalf("the value overwrote what its buffer held: %q", v[:4])
	}
	v = v[4:]
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

	v, _ = ins.AppendValue(nil)
	if e := oplog.Parse(oplog.Stored(v).Entry()); e.Kind != oplog.Insert || !e.HasTxn {
		t.Fatalf("the first write after the join: %+v", e)
	}
}

// TestOplogTruncatedForOtherWriters: on a shared store, the engine that
// truncates the oplog truncates the entries other engines write, which
// its own count of staged bytes never sees.
func TestOplogTruncatedForOtherWriters(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	const limit = 64 << 10
	var engines []*Engine
	for _, kv := range kvs {
		e, err := Open(kv, Options{FrontendID: fmt.Sprintf("engine-%d", engineIDs.Add(1)), OplogSize: limit})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		engines = append(engines, e)
	}
	leader, writer := engines[0], engines[1]
	if !leader.RunsJobs() {
		leader, writer = writer, leader
	}
	if !leader.RunsJobs() || writer.RunsJobs() {
		t.Fatalf("jobs run on %v and %v", engines[0].RunsJobs(), engines[1].RunsJobs())
	}
	// the first pass measures the oplog: it is small
	if n, err := leader.MaintainOplog(); err != nil || n != 0 {
		t.Fatalf("first pass: removed %d, %v", n, err)
	}
	// each insert's entry refers to its document (oplog.NewRef): about
	// 100 bytes an entry
	for i := range 4 * limit / 100 {
		if _, _, err := writer.Insert("test", "c", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, i))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := writer.MaintainOplog(); err != nil || n != 0 {
		t.Fatalf("the writer's pass: removed %d, %v", n, err)
	}
	removed, err := leader.MaintainOplog()
	if err != nil || removed == 0 {
		t.Fatalf("the leader's pass: removed %d, %v", removed, err)
	}
	var total int64
	if err := leader.oplogSizes(func(_ uint64, size int64) bool {
		total += size
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if total > limit {
		t.Fatalf("%d bytes of oplog left, bound %d", total, limit)
	}
}

// TestOplogTruncationTrustsTheCount writes rounds of inserts into an
// oplog bounded at 64 KB, one housekeeping pass after each: every pass
// that removes entries leaves between 80% of the bound and the bound
// (measured by reading the oplog). On Pebble, whose commits count exactly
// here, the count always equals the entries' bytes, and only the first
// pass and every remeasureEvery-th truncation read the whole oplog.
func TestOplogTruncationTrustsTheCount(t *testing.T) {
	const limit = 64 << 10
	e, err := Open(testkv.Open(t), Options{OplogSize: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	measured := func() int64 {
		var total int64
		if err := e.oplogSizes(func(_ uint64, size int64) bool {
			total += size
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return total
	}
	pad := strings.Repeat("x", 500)
	id := 0
	for round := range 60 {
		// 100 inserts, each entry a reference to its document (oplog.NewRef)
		for range 100 {
			id++
			if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d, "pad": %q}`, id, pad))}, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		removed, err := e.MaintainOplog()
		if err != nil {
			t.Fatal(err)
		}
		size := measured()
		if removed > 0 && (size > limit || size < limit*8/10) {
			t.Fatalf("round %d: removed %d, %d bytes left, want between %d and %d", round, removed, size, limit*8/10, limit)
		}
		if testkv.TiKV() {
			continue // the count adds the entries staged, TiKV joins a commit's
		}
		v, _, err := e.kv.Get(keyOplogSize)
		if err != nil || len(v) != 8 {
			t.Fatalf("count %x, %v", v, err)
		}
		if n := int64(binary.BigEndian.Uint64(v)); n != size {
			t.Fatalf("round %d: count %d, oplog %d bytes", round, n, size)
		}
	}
	o := e.oplog
	if o.truncations < 2*remeasureEvery {
		t.Fatalf("%d truncations", o.truncations)
	}
	if testkv.TiKV() {
		return // its entries are counted by a bound: every truncation measures
	}
	if want := 1 + o.truncations/remeasureEvery + 1; o.measurements > want {
		t.Fatalf("%d measurements for %d truncations, want at most %d", o.measurements, o.truncations, want)
	}
}
