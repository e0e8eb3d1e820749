package tikvkv

import (
	"testing"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/storagetest"
)

// openMock opens a Store on a new mock cluster of three stores whose keys
// are split into regions at every letter, so scans cross regions.
func openMock(t *testing.T) (*Store, *MockCluster) {
	t.Helper()
	m, err := NewMockCluster(3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		m.Close()
	})
	for _, k := range []string{"b", "d", "f", "p", "q", "x", "z"} {
		if err := m.SplitAt([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	return s, m
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.KV {
		s, _ := openMock(t)
		return s
	})
}
