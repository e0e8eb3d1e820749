package mongoerr

import (
	"context"
	"errors"
)

// Interruption is why an operation's context ended, as the MongoDB error
// the operation fails with, or nil while the context is live. The context's
// cancellation cause says which (Interrupted for killOp, ClientDisconnect,
// InterruptedAtShutdown, MaxTimeMSExpired); a context ended without a
// MongoDB cause is reported as a plain interruption, a passed deadline as
// MaxTimeMSExpired. A nil context never ends.
func Interruption(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	err := ctx.Err()
	if err == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if cause == nil {
		// a context whose Err ends it before its cancellation does (a
		// deadline read from the clock)
		cause = err
	}
	if me, ok := errors.AsType[*Error](cause); ok {
		return me
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return New(MaxTimeMSExpired, "operation exceeded time limit")
	}
	return New(Interrupted, "operation was interrupted")
}

// IsInterruption reports whether err is an interruption of its operation,
// one of MongoDB's ErrorCodes::isInterruption codes Folio raises.
func IsInterruption(err error) bool {
	me, ok := errors.AsType[*Error](err)
	if !ok {
		return false
	}
	switch me.Code {
	case Interrupted, InterruptedAtShutdown, MaxTimeMSExpired, ClientDisconnect:
		return true
	}
	return false
}
