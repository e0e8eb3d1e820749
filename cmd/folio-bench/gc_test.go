package main

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneClientGC: folio-bench raises its GOGC only when every server it
// measures runs in another process.
func TestTuneClientGC(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: tuneClientGC leaves the collector alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		uri, compare string
		want         int
	}{
		{"mongodb://127.0.0.1:27017", "", clientGCPercent},
		{"mongodb://a:1 mongodb://b:2", "mongodb+srv://c", clientGCPercent},
		{"inproc", "", 100},
		{"mongodb://127.0.0.1:27017", "inproc-never", 100},
		{"playground:2", "", 100},
	} {
		debug.SetGCPercent(100)
		tuneClientGC(tc.uri, tc.compare)
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("uri %q compare %q: GOGC %d, want %d", tc.uri, tc.compare, got, tc.want)
		}
	}
}
