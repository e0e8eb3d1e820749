package engine

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestTransactionsUnderLoad runs transactional transfers next to plain
// writers and readers on a collection with a unique and a multikey index:
// conflicts abort with WriteConflict and are retried, the total never
// changes, and afterwards every index entry matches its document.
func TestTransactionsUnderLoad(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "acct", `{"owner": 1}`, true)
	mustCreateIndex(t, e, "acct", `{"tags": 1}`, false)
	const accounts, start = 12, 100
	var docs []bson.Raw
	for i := range accounts {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "owner": "o%d", "balance": %d, "tags": ["t%d"]}`, i, i, start, i%3)))
	}
	if _, _, err := e.Insert("test", "acct", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	inc := func(id, by int) UpdateSpec {
		return UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, fmt.Sprintf(`{"$inc": {"balance": %d}, "$push": {"tags": "x%d"}}`, by, id))}
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			for done := 0; done < 40; {
				from, to := rng.IntN(accounts), rng.IntN(accounts)
				if from == to {
					continue
				}
				txn := mustBegin(t, e)
				err := func() error {
					for _, step := range []UpdateSpec{inc(from, -5), inc(to, 5)} {
						step.Txn = txn
						if _, err := e.Update("test", "acct", step); err != nil {
							return err
						}
					}
					return txn.Commit()
				}()
				if err != nil {
					txn.Abort()
					if !mongoerr.Is(err, mongoerr.WriteConflict) {
						t.Error(err)
						return
					}
					continue
				}
				done++
			}
		})
	}
	// Plain writers touch other fields of the same documents; they wait for
	// the transactions holding them.
	for w := range 2 {
		wg.Go(func() {
			for i := range 60 {
				id := (i*5 + w) % accounts
				spec := UpdateSpec{Filter: ext(t, fmt.Sprintf(`{"_id": %d}`, id)), Update: ext(t, `{"$inc": {"touched": 1}}`)}
				if _, err := e.Update("test", "acct", spec); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	cur, err := e.Find("test", "acct", FindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	total, touched := 0, 0
	for {
		doc, err := cur.Next()
		if err != nil {
			t.Fatal(err)
		}
		if doc == nil {
			break
		}
		total += int(doc.Lookup("balance").Int32())
		if v, ok := doc.Lookup("touched").Int32OK(); ok {
			touched += int(v)
		}
	}
	if total != accounts*start || touched != 120 {
		t.Fatalf("total %d, touched %d; want %d and 120", total, touched, accounts*start)
	}
	mustValidate(t, e, "acct")
}

// TestTransactionUniqueKeyTakenMeanwhile checks that a unique key a
// transaction added is checked again at commit: taken by a plain insert in
// between, the commit fails with DuplicateKey and nothing of the
// transaction is applied.
func TestTransactionUniqueKeyTakenMeanwhile(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "u", `{"email": 1}`, true)
	txn := mustBegin(t, e)
	if _, _, err := e.Insert("test", "u", []bson.Raw{ext(t, `{"_id": 1, "email": "a"}`), ext(t, `{"_id": 2, "email": "b"}`)}, true, WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Insert("test", "u", []bson.Raw{ext(t, `{"_id": 3, "email": "a"}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); !mongoerr.Is(err, mongoerr.DuplicateKey) {
		t.Fatalf("commit: %v, want DuplicateKey", err)
	}
	if n, err := e.Count("test", "u", FindOptions{}); err != nil || n != 1 {
		t.Fatalf("%d documents (%v), want only the plain insert", n, err)
	}
	mustValidate(t, e, "u")
}

// TestTransactionUniqueKeyConflicts checks that two transactions adding
// one key to a unique index conflict at the second's write, as in MongoDB
// (jstests/core/txns/transactions_write_conflicts_unique_indexes.js):
// with WriteConflict whether the first is open or committed since the
// second's snapshot, while a transaction may give a key it removed to
// another document.
func TestTransactionUniqueKeyConflicts(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "u", `{"x": 1}`, true)
	insert := func(txn *Txn, doc string) error {
		_, werrs, err := e.Insert("test", "u", []bson.Raw{ext(t, doc)}, true, WriteOptions{Txn: txn})
		if err == nil && len(werrs) > 0 {
			err = werrs[0].Err
		}
		return err
	}
	// T1 writes first and is open.
	t1, t2 := mustBegin(t, e), mustBegin(t, e)
	if err := insert(t1, `{"_id": 1, "x": 1}`); err != nil {
		t.Fatal(err)
	}
	if err := insert(t2, `{"_id": 2, "x": 1}`); !mongoerr.Is(err, mongoerr.WriteConflict) {
		t.Fatalf("second transaction's insert: %v, want WriteConflict", err)
	}
	t2.Abort()
	if err := t1.Commit(); err != nil {
		t.Fatal(err)
	}
	// T2 began before T1's commit gave the key away.
	t3 := mustBegin(t, e)
	if _, err := e.Delete("test", "u", ext(t, `{}`), 0, bson.RawValue{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	t1, t2 = mustBegin(t, e), mustBegin(t, e)
	if err := insert(t2, `{"_id": 2, "x": 2}`); err != nil {
		t.Fatal(err)
	}
	if err := t2.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := insert(t1, `{"_id": 1, "x": 2}`); !mongoerr.Is(err, mongoerr.WriteConflict) {
		t.Fatalf("insert of a key committed since the snapshot: %v, want WriteConflict", err)
	}
	t1.Abort()
	t3.Abort()
	// A key the transaction removed goes to another document.
	t4 := mustBegin(t, e)
	if _, err := e.Delete("test", "u", ext(t, `{"_id": 2}`), 1, bson.RawValue{}, WriteOptions{Txn: t4}); err != nil {
		t.Fatal(err)
	}
	if err := insert(t4, `{"_id": 3, "x": 2}`); err != nil {
		t.Fatal(err)
	}
	if err := t4.Commit(); err != nil {
		t.Fatal(err)
	}
	mustValidate(t, e, "u")
}
