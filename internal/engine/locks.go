package engine

import (
	"bytes"
	"slices"
	"sync"
)

// lockTable serializes writers of the same key: a writer holds each of its
// keys exclusively, and only writers of a common key wait for one another,
// so writers of many keys (an insert of a thousand documents) run side by
// side. Several keys are locked one by one in key order, so two writers
// never deadlock.
type lockTable struct {
	mu sync.Mutex
	// held maps each locked key to a channel its holder closes on release.
	held map[string]chan struct{}
}

// lock locks keys (repeats allowed) and returns the unlock function.
func (t *lockTable) lock(keys ...[]byte) func() {
	if len(keys) > 1 {
		keys = slices.Clone(keys)
		slices.SortFunc(keys, bytes.Compare)
		keys = slices.CompactFunc(keys, bytes.Equal)
	}
	names := make([]string, len(keys))
	release := make(chan struct{})
	t.mu.Lock()
	if t.held == nil {
		t.held = map[string]chan struct{}{}
	}
	for i, k := range keys {
		for {
			busy, ok := t.held[string(k)]
			if !ok {
				break
			}
			t.mu.Unlock()
			<-busy
			t.mu.Lock()
		}
		names[i] = string(k)
		t.held[names[i]] = release
	}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		for _, n := range names {
			delete(t.held, n)
		}
		t.mu.Unlock()
		close(release)
	}
}
