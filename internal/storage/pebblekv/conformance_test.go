package pebblekv

import (
	"testing"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.KV {
		db, err := Open("", Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}
