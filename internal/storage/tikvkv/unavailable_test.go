package tikvkv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pingcaperr "github.com/pingcap/errors"
	tikverr "github.com/tikv/client-go/v2/error"
	"github.com/tikv/client-go/v2/tikvrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestLostCommitReply: every reply to a transaction's commit is lost (the
// cluster applies it), so client-go resends it until the store's timeout
// and cannot learn the outcome. Commit fails with HostUnreachable, saying
// the outcome is unknown, and the write is there: the cluster committed
// it, and the next read finds it.
func TestLostCommitReply(t *testing.T) {
	s, m := openMock(t)
	s.timeout = 2 * time.Second
	var lost atomic.Int32
	m.Fault(func(req *tikvrpc.Request) (bool, error) {
		if req.Type == tikvrpc.CmdCommit {
			lost.Add(1)
			return true, errors.New("connection reset by peer")
		}
		return true, nil
	})
	tx, err := s.Begin()
	must(t, err)
	must(t, tx.Set([]byte("c"), []byte("v")))
	err = tx.Commit()
	m.Fault(nil)
	if !mongoerr.Is(err, mongoerr.HostUnreachable) || !strings.Contains(err.Error(), "may or may not have been applied") {
		t.Fatalf("commit with its replies lost (%d): %v, want HostUnreachable saying the outcome is unknown", lost.Load(), err)
	}
	v, ok, err := s.Get([]byte("c"))
	if err != nil || !ok || string(v) != "v" {
		t.Fatalf("after the lost reply: %q, %v, %v; want the value committed", v, ok, err)
	}
}

// TestUnavailable: client-go's errors of a cluster that could not serve a
// request, wrapped as client-go wraps them, are HostUnreachable; other
// errors stay as they are.
func TestUnavailable(t *testing.T) {
	other := errors.New("tikv: value without Folio's prefix (3 bytes)")
	for _, tc := range []struct {
		err  error
		code mongoerr.Code // OK: unchanged
	}{
		{tikverr.ErrResultUndetermined, mongoerr.HostUnreachable},
		{pingcaperr.WithStack(tikverr.ErrResultUndetermined), mongoerr.HostUnreachable},
		{pingcaperr.WithStack(tikverr.ErrRegionUnavailable), mongoerr.HostUnreachable},
		{tikverr.ErrTiKVServerTimeout, mongoerr.HostUnreachable},
		{tikverr.ErrTiKVServerBusy, mongoerr.HostUnreachable},
		{fmt.Errorf("tikv: timestamp: %w", context.DeadlineExceeded), mongoerr.HostUnreachable},
		{pingcaperr.WithStack(status.Error(codes.Unavailable, "connection refused")), mongoerr.HostUnreachable},
		{status.Error(codes.DeadlineExceeded, "deadline exceeded"), mongoerr.HostUnreachable},
		{status.Error(codes.InvalidArgument, "bad request"), mongoerr.OK},
		{other, mongoerr.OK},
		{&tikverr.ErrWriteConflictInLatch{StartTS: 1}, mongoerr.OK},
	} {
		got := unavailable(tc.err)
		if tc.code == mongoerr.OK {
			if got != tc.err {
				t.Errorf("unavailable(%v) = %v, want it unchanged", tc.err, got)
			}
			continue
		}
		if !mongoerr.Is(got, tc.code) || !strings.Contains(got.Error(), tc.err.Error()) {
			t.Errorf("unavailable(%v) = %v, want code %d naming the cause", tc.err, got, tc.code)
		}
	}
	if unavailable(nil) != nil {
		t.Error("unavailable(nil) is not nil")
	}
}
