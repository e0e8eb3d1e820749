package pebblekv

import (
	"testing"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/storagetest"
)

// TestConformance runs the suite on an in-memory store (no write-ahead
// log) and on one in a directory.
func TestConformance(t *testing.T) {
	for _, inMemory := range []bool{true, false} {
		t.Run(map[bool]string{true: "memory", false: "disk"}[inMemory], func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T) storage.KV {
				dir := ""
				if !inMemory {
					dir = t.TempDir()
				}
				db, err := Open(dir, Options{InMemory: inMemory})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			})
		})
	}
}
