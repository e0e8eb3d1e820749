package tikvkv

import (
	"bytes"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestKeyLimit: a transaction writes a key of maxKeySize bytes, with a
// value chunked or not, and refuses a longer one with NotImplemented
// before anything is sent to TiKV (which refuses keys over 8 KiB; the mock
// cluster does not and loses point reads of keys that long).
func TestKeyLimit(t *testing.T) {
	s, _ := openMock(t)
	big := bytes.Repeat([]byte("v"), chunkSize+1)
	for _, tc := range []struct {
		keyLen int
		value  []byte
		ok     bool
	}{
		{maxKeySize, []byte("v"), true},
		{maxKeySize, big, true},
		{maxKeySize + 1, []byte("v"), false},
	} {
		key := append([]byte("e"), bytes.Repeat([]byte("k"), tc.keyLen-1)...)
		tx, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		err = tx.Set(key, tc.value)
		if !tc.ok {
			if !mongoerr.Is(err, mongoerr.NotImplemented) {
				t.Fatalf("key of %d bytes: %v, want NotImplemented", tc.keyLen, err)
			}
			tx.Rollback()
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := s.Get(key); err != nil || !ok || !bytes.Equal(v, tc.value) {
			t.Fatalf("key of %d bytes read back: %d bytes, %v, %v", tc.keyLen, len(v), ok, err)
		}
	}
}
