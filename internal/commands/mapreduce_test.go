package commands

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestMapReduceEmitLimit: the values a mapReduce emits are bounded (they
// are grouped in memory), with ExceededMemoryLimit past the bound.
func TestMapReduceEmitLimit(t *testing.T) {
	defer func(n int64) { maxEmitted = n }(maxEmitted)
	maxEmitted = 1000
	s := argsService(t)
	for _, tc := range []struct {
		mapF string
		code int32
	}{
		{"function() { emit(this._id, 'x'.repeat(100)); }", 0},
		{"function() { for (var i = 0; i < 20; i++) emit(i, 'x'.repeat(100)); }", 146},
	} {
		cmd, _ := bson.Marshal(bson.D{{Key: "mapReduce", Value: "c"}, {Key: "map", Value: tc.mapF},
			{Key: "reduce", Value: "function(k, v) { return v[0]; }"}, {Key: "out", Value: bson.D{{Key: "inline", Value: 1}}}})
		if got := code(runArgs(t, s, cmd)); got != tc.code {
			t.Errorf("%s: code %d, want %d", tc.mapF, got, tc.code)
		}
	}
}
