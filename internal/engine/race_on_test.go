//go:build race

package engine

// raceEnabled: the race detector's instrumentation (and Pebble's, which
// then allocates some buffers on the Go heap) changes allocation counts,
// so their bounds are not checked under it.
const raceEnabled = true
