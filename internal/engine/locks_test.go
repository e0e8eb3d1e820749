package engine

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestLockTable checks that writers of a common key exclude each other,
// that writers of disjoint keys do not wait for one another, that repeated
// keys in one lock are allowed, and that overlapping multi-key writers taken
// in opposite orders do not deadlock.
func TestLockTable(t *testing.T) {
	var lt lockTable
	k := func(s string) []byte { return []byte(s) }

	// Disjoint keys: the second lock does not wait for the first.
	heldA := lt.lock(k("a"), k("b"), k("a"))
	done := make(chan struct{})
	go func() { lt.lock(k("c"), k("d")).unlock(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a lock of disjoint keys waited")
	}
	// A common key: the second lock waits until the first is released.
	got := make(chan struct{})
	go func() { lt.lock(k("z"), k("b")).unlock(); close(got) }()
	select {
	case <-got:
		t.Fatal("a lock of a held key did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	heldA.unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("a lock of a released key still waits")
	}

	// Mutual exclusion and no deadlock under contention: writers of
	// overlapping key sets, listed in different orders, each increment the
	// counters of their keys without synchronisation of their own (the race
	// detector reports two writers inside at once).
	counters := map[string]*int{}
	for i := range 8 {
		counters[fmt.Sprint(i)] = new(int)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 200 {
				a, b := fmt.Sprint((w+n)%8), fmt.Sprint((w+n+3)%8)
				if n%2 == 1 {
					a, b = b, a
				}
				held := lt.lock(k(a), k(b))
				*counters[a]++
				*counters[b]++
				held.unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, c := range counters {
		total += *c
	}
	if total != 8*200*2 {
		t.Errorf("counters total %d, want %d: an increment was lost", total, 8*200*2)
	}
	if len(lt.held) != 0 {
		t.Errorf("%d keys still held after every unlock", len(lt.held))
	}
}
