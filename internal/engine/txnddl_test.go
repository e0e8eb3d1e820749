package engine

import (
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestTxnCreatedCollectionPersists proves a committed transaction's
// collection, its indexes and documents are in the stored catalog (read
// back on reload, index entries matching), an aborted one's left nothing,
// and collection ids stay unique across the reload.
func TestTxnCreatedCollectionPersists(t *testing.T) {
	kv := testkv.Open(t)
	e, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	txn := mustBegin(t, e)
	if err := txn.CreateCollection("test", "t1", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := IndexSpec{Name: "a_1", Key: ext(t, `{"a": 1}`), Unique: true, ExpireAfter: -1}
	if _, err := txn.CreateIndexes("test", "t1", []IndexSpec{spec}); err != nil {
		t.Fatal(err)
	}
	docs := []bson.Raw{ext(t, `{"_id": 1, "a": [1, 2]}`), ext(t, `{"_id": 2, "a": 3}`)}
	if _, _, err := e.Insert("test", "t1", docs, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	if e.Collection("test", "t1") != nil {
		t.Fatal("uncommitted collection in the catalog")
	}
	ghost := mustBegin(t, e)
	if _, _, err := e.Insert("test", "ghost", docs, true, WriteOptions{Txn: ghost}); err != nil {
		t.Fatal(err)
	}
	ghost.Abort()
	// Created outside after the transaction's collection got its id.
	if err := e.CreateCollection("test", "outside", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	c := again.Collection("test", "t1")
	if c == nil || c.FindIndex("a_1") == nil || !c.FindIndex("a_1").Multikey() {
		t.Fatalf("after reload: %+v", c)
	}
	if res := mustValidate(t, again, "t1"); res.Records != 2 {
		t.Fatalf("%d documents after reload, want 2", res.Records)
	}
	if again.Collection("test", "ghost") != nil {
		t.Fatal("the aborted transaction's collection exists")
	}
	if err := again.CreateCollection("test", "later", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	ids := map[uint32]string{}
	for _, c := range again.Collections("test") {
		if other, dup := ids[c.ID]; dup {
			t.Fatalf("collections %s and %s share id %d", other, c.Name, c.ID)
		}
		ids[c.ID] = c.Name
	}
}

// TestTxnCreateRaces has transactions that each created the same
// collection commit while a plain writer creates it too: the name ends up
// created once, at most one transaction commits, every other fails with
// WriteConflict labelled for a retry, and no loser's document survives.
func TestTxnCreateRaces(t *testing.T) {
	e := newTestEngine(t)
	doc := []bson.Raw{ext(t, `{"w": 1}`)}
	for round := range 20 {
		coll := "race" + string(rune('a'+round))
		var txns []*Txn
		for range 3 {
			txn := mustBegin(t, e)
			if _, _, err := e.Insert("test", coll, doc, true, WriteOptions{Txn: txn}); err != nil {
				t.Fatal(err)
			}
			txns = append(txns, txn)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		committed := 0
		wg.Go(func() {
			if _, _, err := e.Insert("test", coll, doc, true, WriteOptions{}); err != nil {
				t.Error(err)
			}
		})
		for _, txn := range txns {
			wg.Go(func() {
				err := txn.Commit()
				if err == nil {
					mu.Lock()
					committed++
					mu.Unlock()
					return
				}
				if me := mongoerr.As(err); me.Code != mongoerr.WriteConflict || len(me.Labels) != 1 {
					t.Errorf("losing commit: %v", err)
				}
			})
		}
		wg.Wait()
		n, err := e.Count("test", coll, FindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if int(n) != 1+committed || committed > 1 {
			t.Fatalf("%s: %d documents, %d transactions committed", coll, n, committed)
		}
	}
}

// TestTxnWriteAfterCatalogChange proves a transaction writes only to the
// collections its snapshot holds, as MongoDB acquires them for a write in
// a transaction (jstests/core/txns/concurrent_drops_and_creates.js): one
// dropped, or dropped and created again, since the snapshot fails the
// write with WriteConflict labelled for a retry; one created since is not
// the transaction's, so its write creates its own and the commit fails
// with WriteConflict, leaving the other's collection as it was.
func TestTxnWriteAfterCatalogChange(t *testing.T) {
	e := newTestEngine(t)
	doc := []bson.Raw{ext(t, `{"w": 1}`)}
	conflict := func(what string, err error) {
		t.Helper()
		if !mongoerr.Is(err, mongoerr.WriteConflict) || len(mongoerr.As(err).Labels) != 1 {
			t.Fatalf("%s: %v, want WriteConflict", what, err)
		}
	}
	for _, recreate := range []bool{false, true} {
		if _, _, err := e.Insert("test", "b", doc, true, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		txn := mustBegin(t, e)
		if _, _, err := e.Insert("test", "a", doc, true, WriteOptions{Txn: txn}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DropCollection("test", "b"); err != nil {
			t.Fatal(err)
		}
		if recreate {
			if err := e.CreateCollection("test", "b", CollectionOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := e.Insert("test", "b", doc, true, WriteOptions{Txn: txn})
		conflict("insert after the drop", err)
		txn.Abort()
		if _, err := e.DropCollection("test", "b"); err != nil {
			t.Fatal(err)
		}
	}
	txn := mustBegin(t, e)
	if _, _, err := e.Insert("test", "a", doc, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateCollection("test", "b", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Insert("test", "b", doc, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	conflict("commit", txn.Commit())
	if n, err := e.Count("test", "b", FindOptions{}); err != nil || n != 0 {
		t.Fatalf("test.b holds %d documents (%v), want 0", n, err)
	}
}

// TestTxnCreateIndexesAfterCatalogChange proves createIndexes in a
// transaction sees the collections its snapshot holds, as the
// transaction's writes do (jstests/core/txns/create_indexes_parallel.js):
// a collection created since, with a conflicting index of the same name,
// is missing to it, so the build goes on a collection of its own and the
// commit fails with WriteConflict, leaving the other's as it was; one
// dropped since fails the build with WriteConflict.
func TestTxnCreateIndexesAfterCatalogChange(t *testing.T) {
	e := newTestEngine(t)
	doc := []bson.Raw{ext(t, `{"w": 1}`)}
	asc := IndexSpec{Name: "a_1", Key: ext(t, `{"a": 1}`), ExpireAfter: -1}
	desc := IndexSpec{Name: "a_1", Key: ext(t, `{"a": -1}`), ExpireAfter: -1}
	conflict := func(what string, err error) {
		t.Helper()
		if !mongoerr.Is(err, mongoerr.WriteConflict) || len(mongoerr.As(err).Labels) != 1 {
			t.Fatalf("%s: %v, want WriteConflict", what, err)
		}
	}
	txn := mustBegin(t, e)
	if _, _, err := e.Insert("test", "a", doc, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateIndexes("test", "b", []IndexSpec{asc}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := txn.CreateIndexes("test", "b", []IndexSpec{desc})
	if err != nil || !res.CreatedCollection {
		t.Fatalf("createIndexes on a collection created since the snapshot: %+v, %v", res, err)
	}
	conflict("commit", txn.Commit())
	if ix := e.Collection("test", "b").FindIndex("a_1"); ix == nil || string(ix.Spec.Lookup("key").Value) != string(asc.Key) {
		t.Fatalf("test.b's a_1 after the conflict: %+v", ix)
	}
	txn = mustBegin(t, e)
	if _, _, err := e.Insert("test", "a", doc, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DropCollection("test", "b"); err != nil {
		t.Fatal(err)
	}
	_, err = txn.CreateIndexes("test", "b", []IndexSpec{asc})
	conflict("createIndexes after the drop", err)
	txn.Abort()
}
