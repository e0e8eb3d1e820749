package commands

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestMapReduceSpills: emitted values past the memory bound spill to disk
// (MongoDB runs mapReduce as an aggregation that may use the disk), and the
// results are those of a run that fits in memory.
func TestMapReduceSpills(t *testing.T) {
	s := argsService(t)
	cmd, _ := bson.Marshal(bson.D{{Key: "mapReduce", Value: "c"},
		{Key: "map", Value: "function() { for (var i = 0; i < 40; i++) emit(i % 7, {n: 1, s: 'x'.repeat(100)}); }"},
		{Key: "reduce", Value: "function(k, vs) { var n = 0; vs.forEach(function(v) { n += v.n; }); return {n: n, s: vs[0].s}; }"},
		{Key: "finalize", Value: "function(k, v) { return v.n; }"},
		{Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}})
	want := runArgs(t, s, cmd)
	defer func(n int64) { maxEmitted = n }(maxEmitted)
	maxEmitted = 1000
	got := runArgs(t, s, cmd)
	if code(got) != 0 || !bytes.Equal(got.Lookup("results").Value, want.Lookup("results").Value) {
		t.Fatalf("spilled: %s\nin memory: %s", got, want)
	}
	if vals, _ := want.Lookup("results").Array().Values(); len(vals) != 7 {
		t.Fatalf("want 7 keys: %s", want)
	}
}
