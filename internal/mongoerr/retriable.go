package mongoerr

// Retriable reports whether c is in MongoDB's RetriableError category as
// the retryable writes specification lists it: errors of a node stepping
// down or shutting down, or of the network, after which a write may be
// retried on the (new) primary.
func Retriable(c Code) bool {
	switch c {
	case HostUnreachable, HostNotFound, NetworkTimeout, ShutdownInProgress, PrimarySteppedDown,
		ExceededTimeLimit, SocketException, NotWritablePrimary, InterruptedAtShutdown,
		InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary:
		return true
	}
	return false
}

// NotPrimary reports whether c is in MongoDB's NotPrimaryError category:
// the node was not (or stopped being) a writable primary while it
// processed the request.
func NotPrimary(c Code) bool {
	switch c {
	case NotWritablePrimary, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary, InterruptedDueToReplStateChange,
		PrimarySteppedDown, LegacyNotPrimary:
		return true
	}
	return false
}
