package main

import (
	"os"
	"runtime/debug"
)

// clientGCPercent is folio-bench's GOGC when every server it measures runs
// in another process and the environment sets none.
const clientGCPercent = 400

// tuneClientGC trades the load generator's memory for CPU when no server
// shares its process: the driver allocates per document it encodes, and on
// a machine the server shares, the CPU the client's collector takes is the
// server's to lose. A bulk run at 16 clients spent 7.6 µs of client CPU per
// document with GOGC=100 and 6.4 µs with 400 (docs/benchmarks.md). An
// in-process server keeps the runtime's setting, as the folio binary's own
// tuning is not applied to it either.
func tuneClientGC(uris ...string) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	for _, u := range uris {
		if inProcess(u) {
			return
		}
	}
	debug.SetGCPercent(clientGCPercent)
}
