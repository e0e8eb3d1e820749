package tikvkv

import (
	"context"
	"errors"

	tikverr "github.com/tikv/client-go/v2/error"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/folio-db/folio/internal/mongoerr"
)

// unavailable returns err as the error a client sees when the cluster did
// not answer a request in time or at all: HostUnreachable, one of the
// codes after which drivers retry a retryable write or read, as they do
// when a replica set's primary is lost. A commit whose outcome client-go
// could not learn (it sent the primary key's commit and lost the reply)
// may have been applied; a retried retryable write is then answered from
// the session's record, which commits with the write, so it still
// applies once. Other errors are returned as they are.
func unavailable(err error) error {
	switch {
	case err == nil:
		return nil
	case tikverr.IsErrorUndetermined(err):
		return mongoerr.New(mongoerr.HostUnreachable,
			"the storage cluster did not confirm the commit, which may or may not have been applied: %v", err)
	case transient(err):
		return mongoerr.New(mongoerr.HostUnreachable, "the storage cluster did not answer: %v", err)
	}
	return err
}

// transient reports whether err is client-go's report of a cluster that
// could not serve the request for now: a region without a leader or not
// ready, a busy or timed-out store, a lock that could not be resolved in
// time, a store that could not be reached (gRPC's Unavailable, which
// client-go returns once its retries ran out) or did not answer in time,
// or the store's own deadline (Store.ctx) passing.
func transient(err error) bool {
	if st, ok := status.FromError(err); ok && (st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded) {
		return true
	}
	for _, e := range []error{
		tikverr.ErrRegionUnavailable, tikverr.ErrRegionDataNotReady, tikverr.ErrRegionNotInitialized,
		tikverr.ErrRegionRecoveryInProgress, tikverr.ErrTiKVServerTimeout, tikverr.ErrTiKVServerBusy,
		tikverr.ErrTiKVStaleCommand, tikverr.ErrTiKVMaxTimestampNotSynced, tikverr.ErrResolveLockTimeout,
		context.DeadlineExceeded,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
