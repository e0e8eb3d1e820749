package commands

import (
	"errors"
	"testing"

	"github.com/folio-db/folio/internal/engine"
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
		{&mongoerr.Error{Code: mongoerr.NotWritablePrimary, Msg: "a lapsed schema lease", Labels: []string{engine.RetryableWriteError}}, true},
		{mongoerr.New(mongoerr.HostUnreachable, "the storage cluster did not answer"), true},
		// a fail point's not-primary error is the statement's, as in MongoDB
		{mongoerr.New(mongoerr.NotWritablePrimary, "failBeforeCommitExceptionCode"), false},
		{mongoerr.New(mongoerr.DuplicateKey, "dup"), false},
		{mongoerr.New(mongoerr.DocumentValidationFailure, "invalid"), false},
		{errors.New("not a MongoDB error"), false},
	} {
		if got := failsBatch(tt.err); got != tt.want {
			t.Errorf("failsBatch(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
