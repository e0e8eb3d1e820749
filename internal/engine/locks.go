package engine

import (
	"hash/maphash"
	"slices"
	"sync"
)

// lockStripes is the number of document lock stripes; documents whose keys
// hash to the same stripe share a mutex.
const lockStripes = 1024

// lockTable serializes writers of the same document key. Several keys are
// locked in stripe order, so two writers never deadlock.
type lockTable struct {
	seed    maphash.Seed
	once    sync.Once
	stripes [lockStripes]sync.Mutex
}

func (t *lockTable) stripe(key []byte) int {
	t.once.Do(func() { t.seed = maphash.MakeSeed() })
	return int(maphash.Bytes(t.seed, key) % lockStripes)
}

// lock locks the stripes of keys and returns the unlock function.
func (t *lockTable) lock(keys ...[]byte) func() {
	if len(keys) == 1 {
		m := &t.stripes[t.stripe(keys[0])]
		m.Lock()
		return m.Unlock
	}
	idx := make([]int, len(keys))
	for i, k := range keys {
		idx[i] = t.stripe(k)
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		t.stripes[i].Lock()
	}
	return func() {
		for _, i := range idx {
			t.stripes[i].Unlock()
		}
	}
}
