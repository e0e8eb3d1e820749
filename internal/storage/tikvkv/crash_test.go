package tikvkv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/failpoint"
	"github.com/pingcap/kvproto/pkg/kvrpcpb"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
	"github.com/tikv/client-go/v2/util"

	"github.com/folio-db/folio/internal/storage"
)

// TestFrontendDiesMidCommit: a frontend that stops in the middle of
// Percolator's commit leaves locks behind; another frontend's reads and
// writes resolve them as TiKV prescribes. Stopped after the prewrite (the
// primary uncommitted), the transaction is rolled back once its locks'
// TTL runs out: its writes never appear, and the keys take new writes.
// Stopped after committing the primary only, it is rolled forward: every
// key shows its write at once. Its stamped write (an oplog entry) holds
// the stamps' horizon below its start until its lock is resolved, then
// shows at its commit's stamp (at once once the primary committed), or
// never.
func TestFrontendDiesMidCommit(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failpoints  map[string]string
		wantWritten bool
	}{
		{"after prewrite", map[string]string{"beforeCommit": `return("fail")`, "commitFailedSkipCleanup": `return(true)`}, false},
		{"after the primary", map[string]string{"beforeCommitSecondaries": `return("skip")`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The keys span regions (openMock splits at b, d, f, ...).
			keys := [][]byte{[]byte("a1"), []byte("c1"), []byte("e1"), []byte("q1")}
			// interrupt runs the commit the failpoints cut short, and
			// reports whether it left locks: under -race the dying store's
			// background work now and then finishes the commit first, and
			// the test then tries again on fresh stores.
			var startTS uint64 // of the interrupted commit
			interrupt := func() (*Store, bool) {
				dying, m := openMock(t)
				other, err := m.Open()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { other.Close() })
				tx, _ := other.Begin()
				for _, k := range keys {
					must(t, tx.Set(k, []byte("old")))
				}
				must(t, tx.Commit())
				for name, term := range tc.failpoints {
					if err := failpoint.Enable("tikvclient/"+name, term); err != nil {
						t.Fatal(err)
					}
				}
				defer func() {
					for name := range tc.failpoints {
						_ = failpoint.Disable("tikvclient/" + name)
					}
				}()
				kt, err := dying.KVStore().Begin()
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range keys {
					must(t, kt.Set(k, []byte{valuePrefix, 'n', 'e', 'w'}))
				}
				// as txn.stage writes a stamped value
				startTS = kt.StartTS()
				must(t, kt.Set(stagedKey(startTS), append([]byte{valuePrefix}, stageValue(testPrefix, []byte("\x00\x00\x00\x00\x00\x00\x00\x00new"), 0)...)))
				// The failpoints act only on a commit carrying a session id.
				err = kt.Commit(context.WithValue(context.Background(), util.SessionID, uint64(1)))
				if tc.wantWritten != (err == nil) {
					t.Fatalf("commit: %v", err)
				}
				return other, countLocks(t, other, keys) > 0
			}
			var other *Store
			locked := false
			for attempt := 0; attempt < 5 && !locked; attempt++ {
				other, locked = interrupt()
			}
			if !locked {
				t.Fatal("the interrupted commit left no lock in 5 attempts: the test does not test")
			}
			// Any hold is worth a warning here (the mock cluster resolves
			// a dead writer's lock within a second); the default waits
			// longer.
			var warnings bytes.Buffer
			other.log = slog.New(slog.NewTextHandler(&warnings, nil))
			other.stamps.holdWarning = 0
			// The staged key's lock, which no read meets, is resolved by
			// the stamps' horizon: at once when the primary committed
			// (the write was acknowledged, its entry must be readable),
			// else once the primary's time to live has passed; until
			// then it holds the horizon back.
			h, _ := other.LastStamp()
			if tc.wantWritten && h <= stampOf(startTS) {
				t.Fatalf("the first horizon %x is below the stamp %x of the committed start", h, stampOf(startTS))
			}
			for deadline := time.Now().Add(10 * time.Second); h <= stampOf(startTS); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the horizon stays at %x, below the stamp %x of the interrupted start", h, stampOf(startTS))
				}
				h, _ = other.LastStamp()
			}
			// The warning names the transaction that held the horizon.
			if warned := strings.Contains(warnings.String(), fmt.Sprintf("startTS=%d ", startTS)); warned == tc.wantWritten {
				t.Errorf("held-horizon warning %v, want %v: %q", warned, !tc.wantWritten, warnings.String())
			}
			seqs := 0
			it, err := other.NewIter(testPrefix, []byte("p"))
			must(t, err)
			for ok := it.First(); ok; ok = it.Next() {
				if stamp := binary.BigEndian.Uint64(it.Key()[1:]); stamp <= stampOf(startTS) || string(it.Value()[8:]) != "new" {
					t.Errorf("stamped key %x = %q", it.Key(), it.Value())
				}
				seqs++
			}
			must(t, it.Close())
			if want := map[bool]int{true: 1, false: 0}[tc.wantWritten]; seqs != want {
				t.Errorf("%d stamped values, want %d", seqs, want)
			}
			want := "old"
			if tc.wantWritten {
				want = "new"
			}
			start := time.Now()
			for _, k := range keys {
				v, ok, err := other.Get(k)
				if err != nil || !ok || string(v) != want {
					t.Fatalf("%s through the other frontend: %q %v %v, want %q", k, v, ok, err, want)
				}
			}
			t.Logf("read in %v", time.Since(start))
			tx, _ := other.Begin()
			for _, k := range keys {
				must(t, tx.Set(k, []byte("later")))
			}
			if err := tx.Commit(); err != nil {
				t.Fatalf("a write over the resolved locks: %v", err)
			}
			// The later write's own secondaries commit in the background.
			for deadline := time.Now().Add(5 * time.Second); countLocks(t, other, keys) != 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d locks left after the later write", countLocks(t, other, keys))
				}
			}
			var st storage.Reader = other
			for _, k := range keys {
				if v, _, _ := st.Get(k); string(v) != "later" {
					t.Errorf("%s = %q after the later write", k, v)
				}
			}
		})
	}
}

// countLocks counts the locks TiKV holds on keys.
func countLocks(t *testing.T, s *Store, keys [][]byte) int {
	t.Helper()
	n := 0
	for _, k := range keys {
		bo := tikv.NewBackofferWithVars(context.Background(), 2000, nil)
		loc, err := s.KVStore().GetRegionCache().LocateKey(bo, k)
		if err != nil {
			t.Fatal(err)
		}
		req := tikvrpc.NewRequest(tikvrpc.CmdScanLock, &kvrpcpb.ScanLockRequest{MaxVersion: math.MaxUint64, StartKey: k, EndKey: append(slices.Clone(k), 0), Limit: 10})
		resp, err := s.KVStore().SendReq(bo, req, loc.Region, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		n += len(resp.Resp.(*kvrpcpb.ScanLockResponse).Locks)
	}
	return n
}
