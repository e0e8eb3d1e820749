package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/storagetest"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestInsertRefsDifferential runs one random sequence of writes on two
// engines: one logs its inserts by reference (oplog.NewRef), the other,
// over a store wrapper that cannot write stamp references, logs them
// whole. The oplogs they read must be the same entry for entry, but for
// times and UUIDs; and the first must have had references to resolve.
// The writes change and remove inserted documents in every way there is:
// updates, replacements, deletes, findAndModify, transactions, a move to
// another shard key value, renames and drops.
func TestInsertRefsDifferential(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV joins a commit's entries and logs inserts whole")
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			byRef, err := Open(testkv.Open(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { byRef.Close() })
			whole, err := Open(storagetest.Conflicting(testkv.Open(t), 0), Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { whole.Close() })
			r := rand.New(rand.NewPCG(seed, 7))
			ops := refOps(t, r, 300)
			failed := 0
			for i, op := range ops {
				err1, err2 := op(byRef), op(whole)
				if fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("op %d: %v by reference, %v whole", i, err1, err2)
				}
				if err1 != nil {
					failed++
				}
			}
			if failed > len(ops)/10 {
				t.Fatalf("%d of %d writes failed", failed, len(ops))
			}
			got, refs := oplogOf(t, byRef)
			want, wholeRefs := oplogOf(t, whole)
			t.Logf("%d entries, %d by reference, %d failed", len(got), refs, failed)
			if refs == 0 || wholeRefs != 0 {
				t.Fatalf("%d references stored by reference, %d without", refs, wholeRefs)
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries by reference, %d whole", len(got), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("entry %d by reference:\n%v\nwhole:\n%v", i, got[i], want[i])
				}
			}
			// the oplog's stats count references whole, without reading
			// their documents
			st1, err1 := byRef.OplogStats()
			st2, err2 := whole.OplogStats()
			if err1 != nil || err2 != nil || st1.Count != st2.Count || st1.Size != st2.Size {
				t.Fatalf("stats by reference %d entries, %d bytes (%v); whole %d, %d (%v)", st1.Count, st1.Size, err1, st2.Count, st2.Size, err2)
			}
		})
	}
}

// refOps draws n writes over test.c0 and test.c1 (sharded on k, so that
// an update of k moves a document to another key).
func refOps(t *testing.T, r *rand.Rand, n int) []func(*Engine) error {
	nextID := 0
	id := func() int { return r.IntN(nextID + 1) }
	var ops []func(*Engine) error
	for i := range n {
		if i == n/3 {
			ops = append(ops, func(e *Engine) error {
				if _, _, err := e.Insert("test", "c1", []bson.Raw{ext(t, `{"_id": -1, "k": 0}`)}, false, WriteOptions{}); err != nil {
					return err
				}
				return e.ShardCollection(context.Background(), "test", "c1", ext(t, `{"k": 1}`))
			})
		}
		coll := fmt.Sprintf("c%d", r.IntN(2))
		filter := ext(t, fmt.Sprintf(`{"_id": %d}`, id()))
		var op func(*Engine) error
		switch p := r.IntN(100); {
		case p < 35:
			var docs []bson.Raw
			for range 1 + r.IntN(5) {
				nextID++
				docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "k": %d, "x": %d}`, nextID, r.IntN(3), r.IntN(100))))
			}
			op = func(e *Engine) error { _, _, err := e.Insert("test", coll, docs, false, WriteOptions{}); return err }
		case p < 50:
			// with the full shard key, an update may move the document
			full := ext(t, fmt.Sprintf(`{"_id": %d, "k": %d}`, id(), r.IntN(3)))
			upd := ext(t, fmt.Sprintf(`{"$inc": {"x": 1}, "$set": {"k": %d}}`, r.IntN(3)))
			op = func(e *Engine) error {
				_, err := e.Update("test", coll, UpdateSpec{Filter: full, Update: upd})
				return err
			}
		case p < 57:
			upd := ext(t, fmt.Sprintf(`{"y": %d}`, r.IntN(100)))
			op = func(e *Engine) error {
				_, err := e.Update("test", coll, UpdateSpec{Filter: filter, Update: upd})
				return err
			}
		case p < 65:
			multi := ext(t, fmt.Sprintf(`{"x": {"$lt": %d}}`, r.IntN(100)))
			op = func(e *Engine) error {
				_, err := e.Update("test", coll, UpdateSpec{Filter: multi, Update: ext(t, `{"$inc": {"x": 100}}`), Multi: true})
				return err
			}
		case p < 75:
			op = func(e *Engine) error {
				_, err := e.Delete("test", coll, filter, 1, bson.RawValue{}, WriteOptions{})
				return err
			}
		case p < 80:
			op = func(e *Engine) error {
				_, err := e.FindAndModify("test", coll, FindAndModifySpec{Filter: filter, Remove: true})
				return err
			}
		case p < 90:
			other := ext(t, fmt.Sprintf(`{"_id": %d}`, id()))
			op = func(e *Engine) error {
				txn, err := e.Begin()
				if err != nil {
					return err
				}
				wo := WriteOptions{Txn: txn}
				if _, err := e.Update("test", coll, UpdateSpec{Filter: filter, Update: ext(t, `{"$set": {"t": 1}}`), WriteOptions: wo}); err != nil {
					return err
				}
				if _, err := e.Delete("test", coll, other, 1, bson.RawValue{}, wo); err != nil {
					return err
				}
				return txn.Commit()
			}
		case p < 95:
			op = func(e *Engine) error {
				if e.Collection("test", "c0") == nil {
					return nil
				}
				if err := e.RenameCollection("test", "c0", "test", "renamed", false); err != nil {
					return err
				}
				return e.RenameCollection("test", "renamed", "test", "c0", false)
			}
		case p < 98:
			op = func(e *Engine) error { _, err := e.DropCollection("test", "c0"); return err }
		default:
			// a database of two collections inserted into, dropped
			docs := []bson.Raw{ext(t, `{"_id": 1}`), ext(t, `{"_id": 2}`)}
			op = func(e *Engine) error {
				for _, c := range []string{"a", "b"} {
					if _, _, err := e.Insert("d2", c, docs, true, WriteOptions{}); err != nil {
						return err
					}
				}
				return e.DropDatabase("d2")
			}
		}
		ops = append(ops, op)
	}
	return ops
}

// oplogOf is e's oplog as read, each entry without its times and with its
// UUIDs blanked, and how many entries stored by reference still find
// their documents only where they were inserted (none beside them).
func oplogOf(t *testing.T, e *Engine) ([]bson.D, int) {
	var out []bson.D
	err := e.ReadOplog(0, ^uint64(0), func(_ uint64, stored oplog.Stored) (bool, error) {
		var d bson.D
		if err := bson.Unmarshal(stored.Entry(), &d); err != nil {
			return false, err
		}
		out = append(out, blankTimes(d))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	err = scanOplogKeys(e.kv, 0, ^uint64(0), false, true, func(_ uint64, it storage.Iter) (bool, error) {
		switch _, ok := oplog.Stored(it.Value()).Ref(); {
		case isOplogDocKey(it.Key()):
			refs-- // its entry's document is beside it
		case ok:
			refs++
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, refs
}

// blankTimes removes ts and wall from d and blanks its UUIDs, at every
// depth.
func blankTimes(d bson.D) bson.D {
	out := d[:0]
	for _, el := range d {
		switch v := el.Value.(type) {
		case bson.D:
			el.Value = blankTimes(v)
		case bson.A:
			for i, x := range v {
				if sub, ok := x.(bson.D); ok {
					v[i] = blankTimes(sub)
				}
			}
		case bson.Binary:
			if v.Subtype == bson.TypeBinaryUUID {
				el.Value = "uuid"
			}
		}
		if el.Key != "ts" && el.Key != "wall" {
			out = append(out, el)
		}
	}
	return out
}

// TestInsertRefTruncated: a document whose insert entry the oplog's
// truncation removed keeps its mark, and its first change writes nothing
// below the oplog's start, on the engine that truncated (which moved the
// floor) and on one opened after (which reads it from the oplog).
func TestInsertRefTruncated(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV logs inserts whole")
	kv := testkv.Open(t)
	e, err := Open(kv, Options{OplogSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.MaintainOplog(); err != nil {
		t.Fatal(err)
	}
	if _, whole, err := e.OplogOldest(); err != nil || !whole {
		t.Fatalf("a new oplog is not whole (%v)", err)
	}
	for i := range 1000 {
		if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, i))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if removed, err := e.MaintainOplog(); err != nil || removed == 0 {
		t.Fatalf("removed %d, %v", removed, err)
	}
	oldest, whole, err := e.OplogOldest()
	if err != nil || whole {
		t.Fatalf("the oplog truncated is whole: %v (%v)", whole, err)
	}
	for id := range int32(2) {
		if id == 1 {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if e, err = Open(kv, Options{OplogSize: 16 << 10}); err != nil {
				t.Fatal(err)
			}
		}
		key := docKey(e.Collection("test", "c").ID, bson.RawValue{Type: bson.TypeInt32, Value: binary.LittleEndian.AppendUint32(nil, uint32(id))})
		v, _, err := e.kv.Get(key)
		if _, mark, ok := insertMark(v); err != nil || !ok || mark >= oldest {
			t.Fatalf("document %d's mark %d (%v, %v), the oplog starts at %d", id, mark, ok, err, oldest)
		}
		if _, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, `{"$set": {"x": 1}}`)}); err != nil {
			t.Fatal(err)
		}
		if now, _, err := e.OplogOldest(); err != nil || now != oldest {
			t.Fatalf("the oplog starts at %d after the update, %d before (%v)", now, oldest, err)
		}
		v, _, err = e.kv.Get(key)
		if _, _, ok := insertMark(v); err != nil || ok {
			t.Fatalf("document %d changed is still marked (%v)", id, err)
		}
		var below int
		if err := scanOplogKeys(e.kv, 0, oldest-1, false, true, func(uint64, storage.Iter) (bool, error) {
			below++
			return true, nil
		}); err != nil || below != 0 {
			t.Fatalf("%d keys below the oplog's start after document %d's update (%v)", below, id, err)
		}
	}
	// the oplog reads whole: every reference resolves
	if _, refs := oplogOf(t, e); refs == 0 {
		t.Fatal("no entry left by reference")
	}
}

// TestInsertRefsOfAnotherFrontend: on one Pebble store, a frontend drops a
// collection another inserted into by reference: the removal of its data
// makes those entries whole first (the floor is in the store, not in the
// inserting frontend's memory), and both read the oplog whole.
func TestInsertRefsOfAnotherFrontend(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV logs inserts whole")
	fe := openFrontends(t, 2, 300*time.Millisecond)
	for i := range 50 {
		if _, _, err := fe[1].Insert("test", "c", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, i))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, refs := oplogOf(t, fe[0]); refs != 50 {
		t.Fatalf("%d entries by reference, want 50", refs)
	}
	for deadline := time.Now().Add(5 * time.Second); fe[0].Collection("test", "c") == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the other frontend never saw the collection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ok, err := fe[0].DropCollection("test", "c"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	awaitGarbage(t, fe[0])
	for _, e := range fe {
		got, refs := oplogOf(t, e)
		inserts := 0
		for _, ent := range got {
			if ent[0].Value == "i" {
				inserts++
			}
		}
		if refs != 0 || inserts != 50 {
			t.Fatalf("%d entries by reference and %d inserts after the drop", refs, inserts)
		}
	}
}

// TestInsertRefsSharded: shardCollection's copy of a collection inserted
// by reference is stored unmarked (the entries name the documents under
// the old id), the removal of the old id's data makes the entries whole,
// and a change of a copied document writes no entry.
func TestInsertRefsSharded(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV logs inserts whole")
	e, err := Open(testkv.Open(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for i := range 20 {
		if _, _, err := e.Insert("test", "s", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d, "k": %d}`, i, i%3))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ShardCollection(context.Background(), "test", "s", ext(t, `{"k": 1}`)); err != nil {
		t.Fatal(err)
	}
	awaitGarbage(t, e)
	lo, hi := docSpan(e.Collection("test", "s").ID)
	it, err := e.kv.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if _, _, marked := insertMark(it.Value()); marked {
			t.Errorf("the copy at %x is marked", it.Key())
		}
		n++
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil || n != 20 {
		t.Fatalf("%d documents copied, %v", n, err)
	}
	if _, err := e.Update("test", "s", UpdateSpec{Filter: ext(t, `{"_id": 4, "k": 1}`), Update: ext(t, `{"$set": {"x": 1}}`)}); err != nil {
		t.Fatal(err)
	}
	if got, refs := oplogOf(t, e); refs != 0 || len(got) == 0 {
		t.Fatalf("%d entries by reference left of %d", refs, len(got))
	}
}

// TestInsertRefsReadByAnEngineThatWritesNone: an engine whose
// transactions cannot write references (a test's store wrapper) over a
// store that holds some still reads them whole and makes them whole when
// it changes their documents.
func TestInsertRefsReadByAnEngineThatWritesNone(t *testing.T) {
	testkv.SkipOnTiKV(t, "TiKV logs inserts whole")
	kv := testkv.Open(t)
	e, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, _, err := e.Insert("test", "w", []bson.Raw{ext(t, fmt.Sprintf(`{"_id": %d}`, i))}, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := Open(storagetest.Conflicting(kv, 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if _, err := other.Update("test", "w", UpdateSpec{Filter: ext(t, `{"_id": 1}`), Update: ext(t, `{"$set": {"x": 1}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Delete("test", "w", ext(t, `{"_id": 2}`), 1, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Insert("test", "w", []bson.Raw{ext(t, `{"_id": 9}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, refs := oplogOf(t, other)
	if refs != 3 {
		t.Fatalf("%d entries by reference, want the 3 inserts not changed", refs)
	}
	inserts := 0
	for _, ent := range got {
		if ent[0].Value == "i" {
			inserts++
		}
	}
	if inserts != 6 {
		t.Fatalf("%d inserts read, want 6", inserts)
	}
}
