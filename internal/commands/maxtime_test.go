package commands

import (
	"context"
	"testing"
	"time"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// TestDeadlineReadFromTheClock: an operation's context is over once its
// deadline passed, before the sweep ends it, and it ends with
// MaxTimeMSExpired, through the values bound on it too.
func TestDeadlineReadFromTheClock(t *testing.T) {
	live, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var stats engine.OpStats
	for _, tc := range []struct {
		name     string
		deadline time.Time
		code     mongoerr.Code
	}{
		{"before its deadline", time.Now().Add(time.Hour), 0},
		{"past its deadline", time.Now().Add(-time.Millisecond), mongoerr.MaxTimeMSExpired},
	} {
		ctx := engine.WithOpStats(deadlineCtx{live, tc.deadline}, &stats)
		err := mongoerr.Interruption(ctx)
		var got mongoerr.Code
		if me, ok := err.(*mongoerr.Error); ok {
			got = me.Code
		}
		if got != tc.code || (err == nil) != (tc.code == 0) {
			t.Errorf("%s: %v, want code %d", tc.name, err, tc.code)
		}
	}
}

// BenchmarkInterruption is the cost of the interrupt check every scan
// makes per candidate, for an operation without and with a maxTimeMS
// (whose check reads the clock).
func BenchmarkInterruption(b *testing.B) {
	live, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var stats engine.OpStats
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{
		{"without maxTimeMS", engine.WithOpStats(live, &stats)},
		{"with maxTimeMS", engine.WithOpStats(deadlineCtx{live, time.Now().Add(time.Hour)}, &stats)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if mongoerr.Interruption(bc.ctx) != nil {
					b.Fatal("the context ended")
				}
			}
		})
	}
}
