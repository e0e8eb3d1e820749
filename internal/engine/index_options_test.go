package engine

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestIndexChangeKeepsCollModOptions: an index built, modified or dropped
// after a collMod of the collection's options (its validator, validation
// level) keeps those options, in the catalog the engine reads and in the
// one stored; the index change rewrote the entry with the options the
// collection was loaded with.
func TestIndexChangeKeepsCollModOptions(t *testing.T) {
	kv := testkv.Open(t)
	e, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateCollection("test", "c", CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	level := "moderate"
	validator := ext(t, `{"a": {"$gt": 1}}`)
	if err := e.ModifyValidation("test", "c", ValidationChange{Validator: validator, Level: &level}); err != nil {
		t.Fatal(err)
	}
	check := func(e *Engine, after string) {
		t.Helper()
		o := e.Collection("test", "c").CurrentOptions()
		if !bytes.Equal(o.Validator, validator) || o.ValidationLevel != level {
			t.Fatalf("after %s: validator %s, level %q; want %s, %q", after, bson.Raw(o.Validator), o.ValidationLevel, validator, level)
		}
	}
	if _, err := e.CreateIndexes("test", "c", []IndexSpec{{Name: "b_1", Key: ext(t, `{"b": 1}`), ExpireAfter: -1}}, nil); err != nil {
		t.Fatal(err)
	}
	check(e, "createIndexes")
	hidden := true
	if _, _, err := e.ModifyIndex("test", "c", "b_1", nil, IndexChange{Hidden: &hidden}); err != nil {
		t.Fatal(err)
	}
	check(e, "collMod of an index")
	if _, err := e.DropIndexes("test", "c", []string{"b_1"}, nil); err != nil {
		t.Fatal(err)
	}
	check(e, "dropIndexes")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	check(again, "reopening")
}
