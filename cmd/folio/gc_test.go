package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC: the server's collector defaults apply only where the
// environment sets none.
func TestTuneGC(t *testing.T) {
	pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) }()
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			defer os.Setenv(name, v)
			os.Unsetenv(name)
		}
	}
	tuneGC()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, gcPercent)
	}
	t.Setenv("GOGC", "100")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=100 set: GC percent %d, want 100", got)
	}
}
