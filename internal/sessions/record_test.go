package sessions

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// record commits, in one transaction, what a retryable write's statements
// did.
func record(t *testing.T, kv storage.KV, s *Session, stmts []int32, writes []engine.Write, result func(engine.Write) Result) {
	t.Helper()
	rec := s.RecordStatements(stmts, result)
	b, err := kv.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Rollback()
	if err := rec.Stage(b, writes); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	rec.Committed()
}

func countKeys(t *testing.T, kv storage.KV) int {
	t.Helper()
	it, err := kv.NewIter([]byte{KeySpace}, []byte{KeySpace + 1})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.First(); it.Valid(); it.Next() {
		n++
	}
	return n
}

// memStore opens an in-memory store, closed when the test ends.
func memStore(t *testing.T) *pebblekv.DB {
	t.Helper()
	kv, err := pebblekv.Open("", pebblekv.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return kv
}

// loadRegistry returns a registry that loaded kv's records, as at startup.
func loadRegistry(t *testing.T, kv storage.KV) *Registry {
	t.Helper()
	r := NewRegistry()
	if err := r.Load(kv); err != nil {
		t.Fatal(err)
	}
	return r
}

// sharedRegistries returns two registries over kv, as two frontends of a
// shared store have, each having loaded its records.
func sharedRegistries(t *testing.T, kv storage.KV) [2]*Registry {
	t.Helper()
	regs := [2]*Registry{NewRegistry(), NewRegistry()}
	for _, r := range regs {
		r.Shared = true
		if err := r.Load(kv); err != nil {
			t.Fatal(err)
		}
	}
	return regs
}

// one is the result of a statement that wrote one document.
func one(engine.Write) Result { return Result{N: 1} }

// TestRecordLoadAndExpire checks that a session's record and statement
// results load into a new registry (as at startup), that a higher
// txnNumber's first write replaces the earlier results, that a committed
// transaction loads as committed, and that the reaper deletes the records
// of sessions idle past the timeout.
func TestRecordLoadAndExpire(t *testing.T) {
	kv := memStore(t)
	r := loadRegistry(t, kv)
	start := time.Now()
	upsertID := bson.RawValue{Type: bson.TypeInt32, Value: []byte{7, 0, 0, 0}}
	a := r.Acquire("aaaaaaaaaaaaaaaa", start)
	a.Advance(3)
	record(t, kv, a, []int32{4, 5}, []engine.Write{{Index: 0}, {Index: 1}}, func(w engine.Write) Result {
		if w.Index == 1 {
			return Result{N: 1, Upserted: upsertID}
		}
		return Result{N: 1, NModified: 1}
	})
	a.Unlock()
	b := r.Acquire("bbbbbbbbbbbbbbbb", start)
	b.Advance(1)
	record(t, kv, b, []int32{0}, []engine.Write{{}}, one)
	b.Advance(2)
	record(t, kv, b, []int32{0}, []engine.Write{{}}, func(engine.Write) Result { return Result{N: 1, NModified: 1} })
	b.Unlock()
	c := r.Acquire("cccccccccccccccc", start)
	c.Advance(9)
	rec := c.RecordCommit()
	batch, err := kv.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Stage(batch, nil); err != nil {
		t.Fatal(err)
	}
	if err := batch.Commit(); err != nil {
		t.Fatal(err)
	}
	rec.Committed()
	c.Unlock()
	// Three records, a's holding its statement 4 and b's the statement of
	// its txnNumber 2, and a's statement 5 under its own key.
	if n := countKeys(t, kv); n != 4 {
		t.Fatalf("%d keys stored, want 4", n)
	}

	loaded := loadRegistry(t, kv)
	la := loaded.Get("aaaaaaaaaaaaaaaa")
	if res, ok := la.Executed(5); la.TxnNumber != 3 || !ok || res.Upserted.Type != bson.TypeInt32 || res.N != 1 {
		t.Errorf("a loaded: txnNumber %d, stmt 5 %+v %v", la.TxnNumber, res, ok)
	}
	if res, ok := la.Executed(4); !ok || res.NModified != 1 {
		t.Errorf("a loaded: stmt 4 %+v %v", res, ok)
	}
	lb := loaded.Get("bbbbbbbbbbbbbbbb")
	if res, ok := lb.Executed(0); lb.TxnNumber != 2 || !ok || res.NModified != 1 {
		t.Errorf("b loaded: txnNumber %d, stmt 0 %+v %v", lb.TxnNumber, res, ok)
	}
	if lc := loaded.Get("cccccccccccccccc"); lc.TxnNumber != 9 || lc.State != TxnCommitted {
		t.Errorf("c loaded: txnNumber %d state %v, want 9 committed", lc.TxnNumber, lc.State)
	}

	// Expiry counts from the last write: nothing goes before the timeout.
	loaded.Reap(time.Now().Add(DefaultTimeout/2), DefaultTimeout)
	if n := countKeys(t, kv); n != 4 || loaded.Len() != 3 {
		t.Fatalf("before the timeout: %d keys, %d sessions", n, loaded.Len())
	}
	loaded.Reap(time.Now().Add(DefaultTimeout+time.Minute), DefaultTimeout)
	if n := countKeys(t, kv); n != 0 || loaded.Len() != 0 {
		t.Fatalf("after the timeout: %d keys, %d sessions left", n, loaded.Len())
	}
	if again := loadRegistry(t, kv); again.Len() != 0 {
		t.Fatalf("reloaded after expiry: %d sessions", again.Len())
	}
	// A forgotten session's id gets a fresh session.
	if s := loaded.Acquire("aaaaaaaaaaaaaaaa", time.Now()); s.TxnNumber != -1 {
		t.Errorf("a new session under an expired id has txnNumber %d", s.TxnNumber)
	} else {
		s.Unlock()
	}
}

// TestSharedRecords: two registries over one store (two frontends). A
// session written through one is refreshed by the other with its number
// and results; a write staged on a stale image fails with ErrMoved; a
// frontend that expires a session another frontend wrote since leaves the
// record alone, and the last writer's expiry deletes it.
func TestSharedRecords(t *testing.T) {
	kv := memStore(t)
	regs := sharedRegistries(t, kv)
	a, b := regs[0].Get("s1"), regs[1].Get("s1")
	a.Advance(3)
	record(t, kv, a, []int32{0, 1}, []engine.Write{{Index: 0}, {Index: 1}}, one)
	// b still sees no record: its stage fails, and a refresh brings the
	// number and the results over.
	b.Advance(3)
	rec := b.RecordStatements([]int32{2}, one)
	tx, _ := kv.Begin()
	if err := rec.Stage(tx, []engine.Write{{Index: 0}}); err != ErrMoved {
		t.Fatalf("stage on a stale session: %v", err)
	}
	tx.Rollback()
	if err := regs[1].Refresh(b); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Executed(1); !ok || b.TxnNumber != 3 {
		t.Fatalf("after refresh: txnNumber %d, executed %v", b.TxnNumber, b.executed)
	}
	record(t, kv, b, []int32{2}, []engine.Write{{Index: 0}}, one)
	// a's image is now stale: expiring it there keeps b's record.
	regs[0].End("s1")
	if n := countKeys(t, kv); n != 1 {
		t.Fatalf("%d keys after the stale frontend's expiry, want the record, holding the run of statements 0 to 2", n)
	}
	regs[1].End("s1")
	if n := countKeys(t, kv); n != 0 {
		t.Fatalf("%d keys after the last writer's expiry", n)
	}
}

// TestRecordRunsAgainstModel commits random retryable writes of one
// session (statement ids in runs and gaps, results that may repeat, a
// txnNumber that sometimes moves on) and checks after each that the
// session and a registry loaded from storage answer Executed as a plain
// map of the statements committed does, and that storage holds the record,
// which holds the txnNumber's first run, and one key per other run.
func TestRecordRunsAgainstModel(t *testing.T) {
	kv := memStore(t)
	reg := loadRegistry(t, kv)
	rng := rand.New(rand.NewPCG(1, 2))
	s := reg.Acquire("rrrrrrrrrrrrrrrr", time.Now())
	defer s.Unlock()
	results := []Result{{N: 1}, {N: 1, NModified: 1}, {N: 0}, {N: 1, UpdatedExisting: true},
		{Op: OpInsert, N: 1}, {Op: OpDelete, N: 1}, {Op: OpUpdate, N: 1, NModified: 1}}
	upserted := func(i int) Result {
		return Result{N: 1, Upserted: bson.RawValue{Type: bson.TypeInt32, Value: []byte{byte(i), 0, 0, 0}}}
	}
	model := map[int32]Result{}
	shared := false // some run held several statements
	txn := int64(0)
	s.Advance(txn)
	for step := range 300 {
		if rng.IntN(10) == 0 {
			txn++
			s.Advance(txn)
			clear(model)
		}
		// Statements from a random start not yet executed, some skipped
		// (failed writes), with results from a small set.
		var stmts []int32
		var writes []engine.Write
		var res []Result
		for id := int32(rng.IntN(40)); len(stmts) < 1+rng.IntN(8) && id < 60; id++ {
			if _, done := model[id]; done || rng.IntN(5) == 0 {
				continue
			}
			r := results[rng.IntN(len(results))]
			if rng.IntN(8) == 0 {
				r = upserted(step)
			}
			writes = append(writes, engine.Write{Index: len(stmts)})
			stmts, res = append(stmts, id), append(res, r)
		}
		record(t, kv, s, stmts, writes, func(w engine.Write) Result { return res[w.Index] })
		for i, id := range stmts {
			model[id] = res[i]
		}
		loaded := loadRegistry(t, kv)
		l := loaded.Get(s.ID)
		for id := int32(-1); id <= 61; id++ {
			want, wok := model[id]
			for name, sess := range map[string]*Session{"live": s, "loaded": l} {
				if got, ok := sess.Executed(id); ok != wok || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("step %d, %s session, statement %d: %+v %v, want %+v %v (runs %+v)", step, name, id, got, ok, want, wok, sess.executed)
				}
			}
		}
		if held := len(s.executed) > 0; s.stored.held != held || l.stored.held != held {
			t.Fatalf("step %d: the record holds a run: live %v, loaded %v, want %v", step, s.stored.held, l.stored.held, held)
		}
		if n := countKeys(t, kv); n != max(1, len(s.executed)) {
			t.Fatalf("step %d: %d keys stored for %d runs", step, n, len(s.executed))
		}
		shared = shared || len(model) > len(s.executed)
	}
	if !shared {
		t.Fatal("no run held more than one statement")
	}
}

// TestRecordAfterAnotherFrontendExpiredIt: a frontend whose session's
// record another frontend deleted (the session expired there) keeps what
// it knows and records anew; the runs it then writes under keys, including
// one continuing a run it knew, are deleted by its next txnNumber's first
// write.
func TestRecordAfterAnotherFrontendExpiredIt(t *testing.T) {
	kv := memStore(t)
	regs := sharedRegistries(t, kv)
	a := regs[0].Get("s2")
	a.Advance(5)
	record(t, kv, a, []int32{0, 2}, []engine.Write{{Index: 0}, {Index: 1}}, one)
	if err := regs[1].Refresh(regs[1].Get("s2")); err != nil {
		t.Fatal(err)
	}
	regs[1].End("s2")
	if n := countKeys(t, kv); n != 0 {
		t.Fatalf("%d keys after the other frontend's expiry", n)
	}
	if err := regs[0].Refresh(a); err != nil {
		t.Fatal(err)
	}
	// Statement 1 continues the run of 0, held in the new record; 3 the
	// run of 2, under its key again.
	record(t, kv, a, []int32{1, 3}, []engine.Write{{Index: 0}, {Index: 1}}, one)
	if n := countKeys(t, kv); n != 2 {
		t.Fatalf("%d keys, want the record and the run of statements 2 to 3", n)
	}
	a.Advance(6)
	record(t, kv, a, []int32{0}, []engine.Write{{Index: 0}}, one)
	if n := countKeys(t, kv); n != 1 {
		t.Fatalf("%d keys after txnNumber 6's first write, want its record only", n)
	}
}

// TestRecordOfTheEarlierFormat loads a record written before records held
// a run (every run under its own key), continues the run, and checks the
// next txnNumber's first write deletes its key.
func TestRecordOfTheEarlierFormat(t *testing.T) {
	kv := memStore(t)
	id := "eeeeeeeeeeeeeeee"
	tx, err := kv.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		tx.Set(recordKey(id), appendRecord(nil, 4, false, nil, time.Now())),
		tx.Set(stmtKey(id, 4, 0), run{first: 0, last: 1, res: Result{N: 1}}.append(nil)),
		tx.Commit(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := loadRegistry(t, kv).Get(id)
	if res, ok := s.Executed(1); !ok || res.N != 1 || s.stored.held {
		t.Fatalf("loaded: statement 1 %+v %v, record holds a run: %v", res, ok, s.stored.held)
	}
	record(t, kv, s, []int32{2}, []engine.Write{{Index: 0}}, one) // continues the keyed run
	if n := countKeys(t, kv); n != 2 {
		t.Fatalf("%d keys after continuing the keyed run, want the record and the run", n)
	}
	if res, ok := loadRegistry(t, kv).Get(id).Executed(2); !ok || res.N != 1 {
		t.Fatalf("reloaded: statement 2 %+v %v", res, ok)
	}
	s.Advance(5)
	record(t, kv, s, []int32{0}, []engine.Write{{Index: 0}}, one)
	if n := countKeys(t, kv); n != 1 {
		t.Fatalf("%d keys after txnNumber 5's first write, want its record only", n)
	}
}

// TestRecordWithItsLSID loads a record of the format that held the lsid
// as its _id (as MongoDB's config.transactions does), before the key
// alone held it, and checks the next write's record leaves it out.
func TestRecordWithItsLSID(t *testing.T) {
	kv := memStore(t)
	id := "ffffffffffffffff"
	old, err := bson.Marshal(bson.D{
		{Key: "_id", Value: bson.D{{Key: "id", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: []byte(id)}}, {Key: "uid", Value: bson.Binary{Data: make([]byte, 32)}}}},
		{Key: "txnNum", Value: int64(7)},
		{Key: "lastWriteOpTime", Value: bson.D{{Key: "ts", Value: bson.Timestamp{T: 1, I: 1}}, {Key: "t", Value: int64(1)}}},
		{Key: "lastWriteDate", Value: bson.DateTime(time.Now().UnixMilli())},
		{Key: "run", Value: bson.D{{Key: "stmtId", Value: int32(0)}, {Key: "op", Value: "u"}, {Key: "n", Value: int32(1)}, {Key: "nModified", Value: int32(1)}}},
		{Key: "writeId", Value: int64(5)},
	})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := kv.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Set(recordKey(id), old); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	s := loadRegistry(t, kv).Get(id)
	if res, ok := s.Executed(0); !ok || s.TxnNumber != 7 || res.Op != OpUpdate || res.N != 1 || res.NModified != 1 {
		t.Fatalf("loaded: txnNumber %d, statement 0 %+v %v", s.TxnNumber, res, ok)
	}
	record(t, kv, s, []int32{1}, []engine.Write{{Index: 0}}, one)
	s = loadRegistry(t, kv).Get(id)
	if _, err := bson.Raw(s.stored.raw).LookupErr("_id"); err == nil {
		t.Fatalf("the rewritten record still holds the lsid: %v", bson.Raw(s.stored.raw))
	}
	for stmt, want := range []int32{1, 1} {
		if res, ok := s.Executed(int32(stmt)); !ok || res.N != want {
			t.Fatalf("reloaded: statement %d %+v %v", stmt, res, ok)
		}
	}
}
