package engine

import (
	"context"
	"os"
	"strconv"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/storagetest"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// newTestEngine returns an engine over an in-memory store. With
// FOLIO_TEST_CONFLICTS set to a fraction, that fraction of the store's
// transaction commits fail with a write conflict (storagetest.Conflicting):
// the engine's tests must pass all the same.
func newTestEngine(tb testing.TB) *Engine {
	tb.Helper()
	db := testkv.Open(tb)
	kv := db
	if p, err := strconv.ParseFloat(os.Getenv("FOLIO_TEST_CONFLICTS"), 64); err == nil && p > 0 {
		kv = storagetest.Conflicting(db, p)
	}
	e, err := Open(kv, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() }) // cleanups run last first: before the store closes
	return e
}

// ext parses Extended JSON into a document.
func ext(tb testing.TB, s string) bson.Raw {
	tb.Helper()
	var d bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(s), false, &d); err != nil {
		tb.Fatalf("bad test JSON %s: %v", s, err)
	}
	return d
}

// mustCreateIndex creates an index from an Extended JSON key pattern.
func mustCreateIndex(tb testing.TB, e *Engine, coll, key string, unique bool) {
	tb.Helper()
	if _, err := e.CreateIndexes("test", coll, []IndexSpec{{Key: ext(tb, key), Unique: unique, ExpireAfter: -1}}, nil); err != nil {
		tb.Fatal(err)
	}
}

// mustValidate fails the test when c's indexes disagree with its documents.
func mustValidate(tb testing.TB, e *Engine, coll string) ValidateResult {
	tb.Helper()
	res, err := e.Validate(e.Collection("test", coll))
	if err != nil {
		tb.Fatal(err)
	}
	for _, msg := range res.Errors {
		tb.Error(msg)
	}
	for _, m := range res.Missing {
		tb.Errorf("index %s misses the entry %v of document %v", m.Index, m.Key, m.ID)
	}
	for _, x := range res.Extra {
		tb.Errorf("index %s has an extra entry (document %v)", x.Index, x.ID)
	}
	return res
}

// mustBegin starts a transaction.
func mustBegin(tb testing.TB, e *Engine) *Txn {
	tb.Helper()
	txn, err := e.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	return txn
}

// rawWrite writes to e's store directly (a test's corruption or a legacy
// format), in a transaction run again while it conflicts.
func rawWrite(tb testing.TB, e *Engine, write func(tx storage.Txn) error) {
	tb.Helper()
	if err := e.retry(context.Background(), func(tx storage.Txn) error {
		if err := write(tx); err != nil {
			return err
		}
		return tx.Commit()
	}); err != nil {
		tb.Fatal(err)
	}
}
