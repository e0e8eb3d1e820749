package main

import (
	"os"
	"runtime/debug"

	"github.com/folio-db/folio/internal/sorter"
)

// gcPercent is the server's GOGC unless the environment sets one: the
// default 100 spent about a seventh of a YCSB-A server's CPU in the
// collector, and 200 gave 15% more operations per second (docs/benchmarks.md).
const gcPercent = 200

// tuneGC trades memory for CPU unless the operator tuned the collector
// (GOGC or GOMEMLIMIT set): the heap may grow to three times the live data
// before a collection, under a soft limit of half the machine's memory
// (when known), near which the collector runs as often as it must.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		if mem := sorter.PhysicalMemory(); mem > 0 {
			debug.SetMemoryLimit(mem / 2)
		}
	}
}
