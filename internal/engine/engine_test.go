package engine

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// newTestEngine returns an engine over an in-memory store.
func newTestEngine(tb testing.TB) *Engine {
	tb.Helper()
	kv, err := pebblekv.Open("", pebblekv.Options{InMemory: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { kv.Close() })
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
