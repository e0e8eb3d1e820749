package commands

import (
	"errors"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestFailsBatch: which statement errors fail a whole write command (an
// error reply a driver may retry) rather than become writeErrors.
func TestFailsBatch(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{mongoerr.New(mongoerr.WriteConflict, "conflict"), true},
		{mongoerr.New(mongoerr.Interrupted, "killed"), true},
		{mongoerr.New(mongoerr.MaxTimeMSExpired, "too long"), true},
		{mongoerr.New(mongoerr.NotWritablePrimary, "a lapsed schema lease"), true},
		{mongoerr.New(mongoerr.InterruptedDueToReplStateChange, "stepped down"), true},
		{mongoerr.New(mongoerr.DuplicateKey, "dup"), false},
		{mongoerr.New(mongoerr.DocumentValidationFailure, "invalid"), false},
		{errors.New("not a MongoDB error"), false},
	} {
		if got := failsBatch(tt.err); got != tt.want {
			t.Errorf("failsBatch(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
