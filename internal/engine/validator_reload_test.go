package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestStoredValidatorThatNoLongerParses stores a validator this version
// refuses ($rand, which an older one accepted) as an older version would
// have: the engine that wrote it and one opened afterwards load the
// catalog, every write to the collection fails with the parse error
// (bypassing validation too, as MongoDB's checkValidation returns the
// parse status first), and collMod replacing the validator mends it.
func TestStoredValidatorThatNoLongerParses(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	open := func(i int) *Engine {
		e, err := Open(kvs[i], Options{FrontendID: fmt.Sprintf("f%d", i), SchemaLease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	first := open(0)
	if err := first.CreateCollection("test", "v", CollectionOptions{Validator: ext(t, `{"a": {"$gt": 1}}`)}); err != nil {
		t.Fatal(err)
	}
	first.cat.mu.Lock()
	_, err := first.catalogChange(func(tx storage.Txn) error {
		raw, ok, err := tx.Get(catalogKey("test", "v"))
		if err != nil || !ok {
			t.Fatalf("catalog entry: %v %v", ok, err)
		}
		var ent catalogEntry
		if err := bson.Unmarshal(raw, &ent); err != nil {
			return err
		}
		ent.Options.Validator = ext(t, `{"$expr": {"$lt": [{"$rand": {}}, 2]}}`)
		return putEntry(tx, "test", "v", ent)
	})
	first.cat.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.reloadCatalog(); err != nil {
		t.Fatal(err)
	}
	second := open(1)
	for _, e := range []*Engine{first, second} {
		for _, bypass := range []bool{false, true} {
			_, werrs, err := e.Insert("test", "v", []bson.Raw{ext(t, `{"a": 5}`)}, true, WriteOptions{BypassValidation: bypass})
			if err != nil || len(werrs) != 1 || werrs[0].Err.Code != mongoerr.RandInValidator ||
				!strings.HasPrefix(werrs[0].Err.Msg, ValidatorParseContext+" :: caused by :: ") {
				t.Fatalf("insert (bypass %v): %v %v, want the validator's parse error", bypass, werrs, err)
			}
		}
	}
	if err := second.ModifyValidation("test", "v", ValidationChange{Validator: ext(t, `{"a": {"$gt": 1}}`)}); err != nil {
		t.Fatal(err)
	}
	if n, werrs, err := first.Insert("test", "v", []bson.Raw{ext(t, `{"a": 5}`)}, true, WriteOptions{}); n != 1 || werrs != nil || err != nil {
		t.Fatalf("insert after collMod: %d %v %v", n, werrs, err)
	}
}
