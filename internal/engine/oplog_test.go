package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
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

// TestTxnOplogChain: a transaction whose operations pass 16 MB is logged,
// as MongoDB's onUnpreparedTransactionCommit logs it, in several applyOps
// entries of the commit, consecutive, with the session's lsid and
// txnNumber and one wall: o.partialTxn on all but the last, o.count on
// the last, prevOpTime null on the first and the entry before's optime
// after; each entry keeps the pre-images of its own operations by their
// index in it. A transaction that fits is one entry with a null
// prevOpTime. A store that gives a commit one stamp (TiKV), or a test's
// wrapper, keeps even the large one one entry.
func TestTxnOplogChain(t *testing.T) {
	e := newTestEngine(t)
	if e.oplog == nil {
		t.Skip("no oplog on this store")
	}
	if err := e.CreateCollection("test", "c", CollectionOptions{PreAndPostImages: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": "p", "v": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	probe, err := e.kv.Begin()
	if err != nil {
		t.Fatal(err)
	}
	_, chains := probe.(storage.StampChainTxn)
	probe.Rollback()

	commit := func(big int) []oplog.Stored {
		t.Helper()
		from := e.OplogLast() + 1
		txn := mustBegin(t, e)
		lsid := ext(t, `{"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}`)
		var docs []bson.Raw
		for i := range 4 {
			docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "s": %q}`, i, strings.Repeat("s", big))))
		}
		if _, _, err := e.Insert("test", "c", docs, true, WriteOptions{Txn: txn}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{"_id": "p"}`), Update: ext(t, `{"$inc": {"v": 1}}`), WriteOptions: WriteOptions{Txn: txn}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Delete("test", "c", ext(t, `{"_id": "p"}`), 1, bson.RawValue{}, WriteOptions{Txn: txn}); err != nil {
			t.Fatal(err)
		}
		if err := txn.CommitRecorded(context.Background(), testRecorder{lsid: lsid, txnNumber: 7}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.MaintainOplog(); err != nil {
			t.Fatal(err)
		}
		var got []oplog.Stored
		if err := e.ReadOplog(from, e.OplogLast(), func(_ uint64, s oplog.Stored) (bool, error) {
			got = append(got, bytes.Clone(s)) // the transaction's entries alone
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	nullPrev := ext(t, `{"ts": {"$timestamp": {"t": 0, "i": 0}}, "t": {"$numberLong": "-1"}}`)

	// small: one entry, null prevOpTime, o holding applyOps alone
	got := commit(10)
	if len(got) != 1 {
		t.Fatalf("a small transaction logged %d entries", len(got))
	}
	ent := got[0].Entry()
	if d, _ := ent.Lookup("prevOpTime").DocumentOK(); !bytes.Equal(d, nullPrev) {
		t.Errorf("small transaction's prevOpTime %v", ent.Lookup("prevOpTime"))
	}
	if elems, _ := ent.Lookup("o").Document().Elements(); len(elems) != 1 {
		t.Errorf("small transaction's o: %v", ent.Lookup("o"))
	}
	if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": "p", "v": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Delete("test", "c", ext(t, `{"_id": {"$type": "int"}}`), 0, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	// large: 4 documents of 4 MB, then an update and a delete
	got = commit(4 << 20)
	if !chains {
		if len(got) != 1 {
			t.Fatalf("a store without stamp chains logged %d entries", len(got))
		}
		return
	}
	if len(got) != 2 {
		t.Fatalf("a transaction of 16 MB logged %d entries, want 2", len(got))
	}
	first, last := oplog.Parse(got[0].Entry()), oplog.Parse(got[1].Entry())
	if first.NS != "admin.$cmd" || last.NS != "admin.$cmd" || first.TS.After(last.TS) || first.TS == last.TS {
		t.Errorf("entries %s at %v and %s at %v", first.NS, first.TS, last.NS, last.TS)
	}
	if ops, _ := first.O.Lookup("applyOps").Array().Values(); len(ops) != 3 {
		t.Errorf("first entry holds %d operations, want 3", len(ops))
	}
	if p, ok := first.O.Lookup("partialTxn").BooleanOK(); !ok || !p {
		t.Errorf("first entry's o.partialTxn: %v", first.O.Lookup("partialTxn"))
	}
	if _, err := first.O.LookupErr("count"); err == nil {
		t.Errorf("first entry has a count")
	}
	if _, err := last.O.LookupErr("partialTxn"); err == nil {
		t.Errorf("last entry has partialTxn")
	}
	if n, ok := last.O.Lookup("count").Int64OK(); !ok || n != 6 {
		t.Errorf("last entry's o.count: %v, want 6", last.O.Lookup("count"))
	}
	if d, _ := got[0].Entry().Lookup("prevOpTime").DocumentOK(); !bytes.Equal(d, nullPrev) {
		t.Errorf("first entry's prevOpTime %v", got[0].Entry().Lookup("prevOpTime"))
	}
	if last.Prev != first.TS || got[1].Entry().Lookup("prevOpTime", "t").Int64() != 1 {
		t.Errorf("last entry's prevOpTime %v, want the first's ts %v", got[1].Entry().Lookup("prevOpTime"), first.TS)
	}
	if !first.Wall.Equal(last.Wall) || first.TxnNumber != 7 || last.TxnNumber != 7 || !bytes.Equal(first.LSID, last.LSID) {
		t.Errorf("entries differ in wall, lsid or txnNumber: %+v %+v", first, last)
	}
	// pre-images by the operation's index in its own entry: the update
	// (1) and the delete (2) of the last
	for i := range 3 {
		if got[0].PreImage(i) != nil {
			t.Errorf("first entry has a pre-image at %d", i)
		}
	}
	if got[1].PreImage(0) != nil || got[1].PreImage(1).Lookup("v").Int32() != 1 || got[1].PreImage(2).Lookup("v").Int32() != 2 {
		t.Errorf("last entry's pre-images: %v %v %v", got[1].PreImage(0), got[1].PreImage(1), got[1].PreImage(2))
	}
}

// testRecorder stands for a transaction's session record: its entries
// carry lsid and txnNumber.
type testRecorder struct {
	lsid      bson.Raw
	txnNumber int64
}

func (testRecorder) Stage(storage.Txn, []Write) error { return nil }
func (testRecorder) Committed()                       {}
func (r testRecorder) OplogSession(int) oplog.Session {
	return oplog.Session{LSID: r.lsid, TxnNumber: r.txnNumber, StmtID: -1}
}

// TestOplogFindRecordIDs: a find on local.oplog.rs asked for record ids
// (showRecordId, {$meta: "recordId"}) gives each entry its stamp, the key
// it is stored under, as MongoDB gives each its ts; forward, backward and
// tailable scans alike, and none when not asked.
func TestOplogFindRecordIDs(t *testing.T) {
	e := newTestEngine(t)
	for id := range 3 {
		if _, _, err := e.Insert("test", "o", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, id))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(o FindOptions, tailable bool) (stamps []uint64, plain int) {
		t.Helper()
		o.Filter = ext(t, `{"ns": "test.o"}`)
		cur, err := e.FindOplog(o, tailable)
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		for {
			d, err := cur.Next()
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				return stamps, plain
			}
			rid := d.Lookup("$recordId")
			if rid.Type == 0 {
				rid = d.Lookup("r")
			}
			_, id, ok := rid.BinaryOK()
			if !ok {
				plain++
				continue
			}
			ts := d.Lookup("ts")
			tt, ti, _ := ts.TimestampOK()
			if len(id) != 8 || binary.BigEndian.Uint64(id) != uint64(tt)<<32|uint64(ti) {
				t.Fatalf("record id %x of the entry at %v", id, ts)
			}
			stamps = append(stamps, binary.BigEndian.Uint64(id))
		}
	}
	fwd, _ := read(FindOptions{ShowRecordID: true}, false)
	if len(fwd) != 3 || fwd[0] >= fwd[1] || fwd[1] >= fwd[2] {
		t.Fatalf("forward record ids %x", fwd)
	}
	back, _ := read(FindOptions{ShowRecordID: true, Sort: ext(t, `{"$natural": -1}`)}, false)
	if len(back) != 3 || back[0] != fwd[2] || back[2] != fwd[0] {
		t.Fatalf("backward record ids %x, forward %x", back, fwd)
	}
	if tail, _ := read(FindOptions{Projection: ext(t, `{"ts": 1, "r": {"$meta": "recordId"}}`)}, true); len(tail) != 3 || tail[2] != fwd[2] {
		t.Fatalf("tailable {$meta: \"recordId\"} %x, forward %x", tail, fwd)
	}
	if ids, plain := read(FindOptions{}, false); len(ids) != 0 || plain != 3 {
		t.Fatalf("record ids %x given unasked", ids)
	}
}
