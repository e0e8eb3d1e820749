// Package testkv opens the store the test suites run on: an in-memory
// Pebble, or with FOLIO_TEST_STORAGE=tikv a mock TiKV cluster (three
// stores) whose regions are split while the test runs, so the engine's and
// the driver's suites run on both backends.
package testkv

import (
	"bytes"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/pebblekv"
	"github.com/folio-db/folio/internal/storage/tikvkv"
)

// TiKV reports FOLIO_TEST_STORAGE=tikv.
func TiKV() bool { return os.Getenv("FOLIO_TEST_STORAGE") == "tikv" }

// SplitKeys and SplitPeriod are the forced splits of a test cluster: every
// SplitPeriod, a region holding more than SplitKeys keys is split.
const (
	SplitKeys   = 16
	SplitPeriod = 20 * time.Millisecond
)

// Open returns an empty store, closed when the test ends.
func Open(tb testing.TB) storage.KV { return OpenShared(tb, 1)[0] }

// OpenShared returns n views of one empty store, for n engines sharing it
// (frontends): on Pebble one store n times, on TiKV n client-go stores on
// one cluster. They are closed when the test ends, after the cleanups
// registered later (engines, servers).
func OpenShared(tb testing.TB, n int) []storage.KV {
	tb.Helper()
	kvs := make([]storage.KV, n)
	if !TiKV() {
		db, err := pebblekv.Open("", pebblekv.Options{InMemory: true})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		for i := range kvs {
			kvs[i] = db
		}
		return kvs
	}
	m, err := tikvkv.NewMockCluster(3)
	if err != nil {
		tb.Fatal(err)
	}
	warnings := &testLog{tb: tb}
	m.Log = slog.New(slog.NewTextHandler(warnings, &slog.HandlerOptions{Level: slog.LevelWarn}))
	splitter, err := m.Open()
	if err != nil {
		tb.Fatal(err)
	}
	stop := m.AutoSplit(splitter, SplitPeriod, SplitKeys)
	var stores []*tikvkv.Store
	tb.Cleanup(func() {
		warnings.close()
		stop()
		splitter.Close()
		for _, s := range stores {
			s.Close()
		}
		m.Close()
	})
	for i := range kvs {
		s, err := m.Open()
		if err != nil {
			tb.Fatal(err)
		}
		stores = append(stores, s)
		kvs[i] = s
	}
	return kvs
}

// testLog writes the stores' warnings to the test's log, shown when it
// fails, until the test's cleanup closes it.
type testLog struct {
	tb     testing.TB
	mu     sync.Mutex
	closed bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.tb.Logf("tikv: %s", bytes.TrimSuffix(p, []byte("\n")))
	}
	return len(p), nil
}

func (l *testLog) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// SkipOnTiKV skips a test that depends on Pebble (its data directory, the
// disk) when the suite runs on TiKV, saying why.
func SkipOnTiKV(tb testing.TB, why string) {
	tb.Helper()
	if TiKV() {
		tb.Skip("FOLIO_TEST_STORAGE=tikv: Pebble-specific: " + why)
	}
}
