package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestPhaseCommands: -phase-start and -phase-end run around each timed
// phase, after the loading, with the run's name in FOLIO_BENCH_RUN; a
// failing command does not stop the run.
func TestPhaseCommands(t *testing.T) {
	out := filepath.Join(t.TempDir(), "phases")
	err := run([]string{"-workload", "pebble", "-records", "100", "-ops", "20", "-clients", "1", "-rounds", "2",
		"-phase-start", `echo "start $FOLIO_BENCH_RUN" >> ` + out,
		"-phase-end", `echo "end $FOLIO_BENCH_RUN" >> ` + out + `; exit 3`,
	}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "start pebble.local.1\nend pebble.local.1\nstart pebble.local.2\nend pebble.local.2\n"
	if string(got) != want {
		t.Errorf("phase commands ran as\n%s\nwant\n%s", got, want)
	}
}
