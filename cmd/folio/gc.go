package main

import (
	"os"
	"runtime/debug"

	"github.com/folio-db/folio/internal/sorter"
)

// tuneGC puts the collector under a soft limit of half the machine's
// memory (when known), near which it runs as often as it must, unless the
// operator set GOMEMLIMIT. GOGC stays at the runtime's default (100): with
// the row cache's 128 MB live, GOGC=200 let the heap grow to three times
// that, and each page it touched for the first time cost the server a
// page fault (about 10 µs on the benchmark machine); see docs/benchmarks.md.
func tuneGC() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		if mem := sorter.PhysicalMemory(); mem > 0 {
			debug.SetMemoryLimit(mem / 2)
		}
	}
}
