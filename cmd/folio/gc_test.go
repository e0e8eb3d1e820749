package main

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/folio-db/folio/internal/sorter"
)

// TestTuneGC: the server's soft memory limit applies only where the
// environment sets none, and GOGC is left as the runtime has it.
func TestTuneGC(t *testing.T) {
	if sorter.PhysicalMemory() <= 0 {
		t.Skip("the machine's memory is unknown")
	}
	pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) }()
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		defer os.Setenv("GOMEMLIMIT", v)
		os.Unsetenv("GOMEMLIMIT")
	}
	const unlimited = 1<<63 - 1
	debug.SetMemoryLimit(unlimited)
	tuneGC()
	if got, want := debug.SetMemoryLimit(-1), sorter.PhysicalMemory()/2; got != want {
		t.Errorf("GOMEMLIMIT unset: limit %d, want %d", got, want)
	}
	if got := debug.SetGCPercent(-1); got != 100 {
		t.Errorf("GC percent %d, want the runtime's 100", got)
	}
	debug.SetGCPercent(100)
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(unlimited)
	tuneGC()
	if got := debug.SetMemoryLimit(-1); got != unlimited {
		t.Errorf("GOMEMLIMIT set: limit %d, want it untouched", got)
	}
}
