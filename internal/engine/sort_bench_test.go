package engine

import (
	"testing"
)

// BenchmarkBlockingSort measures finds whose sort no index provides over
// 20k documents: a full sort, a top-20, and a full sort spilling under a
// 256 KiB limit.
func BenchmarkBlockingSort(b *testing.B) {
	e := benchEngine(b, 20000)
	for _, c := range []struct {
		name  string
		limit int64
		mem   int64
	}{
		{"full", 0, DefaultSortMemoryLimit},
		{"top20", 20, DefaultSortMemoryLimit},
		{"spilled", 0, 256 << 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			e.SetSortMemoryLimit(c.mem)
			defer e.SetSortMemoryLimit(DefaultSortMemoryLimit)
			o := FindOptions{Sort: ext(b, `{"pad": 1, "a": -1}`), Limit: c.limit, AllowDiskUse: true}
			for b.Loop() {
				drain(b, e, o)
			}
		})
	}
}
