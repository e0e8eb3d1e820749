package tikvkv

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/pingcap/failpoint"
	"github.com/pingcap/kvproto/pkg/kvrpcpb"
	"github.com/tikv/client-go/v2/testutils"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
	"github.com/tikv/client-go/v2/util"
	pd "github.com/tikv/pd/client"
	"go.uber.org/zap/zapcore"
)

// MockCluster is client-go's in-process TiKV cluster (mocktikv: regions,
// stores, leaders and a Percolator MVCC store in memory, a PD with a
// timestamp oracle) on which any number of Stores can be opened, as
// frontends of one distributed database.
type MockCluster struct {
	Cluster *testutils.MockCluster
	client  *testutils.MockClient
	gate    *clusterGate
	pd      pd.Client
	// Stores are the ids of the cluster's stores; each region has a peer
	// on every store.
	Stores []uint64
	// Log receives the warnings of the Stores opened later; nil discards
	// them.
	Log *slog.Logger
	// Timeout bounds each call of the Stores opened later to the
	// cluster; 0 is DefaultTimeout.
	Timeout time.Duration
}

// NewMockCluster starts an in-memory cluster with the given number of
// stores and one region.
// mocktikv logs its own quirks as errors (a reverse scan of an empty
// range), so its logs are off below fatal.
func NewMockCluster(stores int) (*MockCluster, error) {
	quietLogs(zapcore.FatalLevel)
	if err := storesReachable(); err != nil {
		return nil, err
	}
	client, cluster, pdClient, err := testutils.NewMockTiKV("", nil)
	if err != nil {
		return nil, err
	}
	ids, _, _, _ := testutils.BootstrapWithMultiStores(cluster, max(stores, 1))
	return &MockCluster{Cluster: cluster, client: client, gate: &clusterGate{}, pd: pdClient, Stores: ids}, nil
}

// Open opens a Store on the cluster: its own client-go store (region
// cache, lock resolver, oracle client) over the shared cluster.
func (m *MockCluster) Open() (*Store, error) {
	kv, err := tikv.NewTestTiKVStore(sharedClient{m.client, m.gate}, m.pd, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	s := newStore(kv, m.Log)
	if m.Timeout > 0 {
		s.timeout = m.Timeout
	}
	return s, nil
}

// Close stops the cluster; its Stores must be closed first. A request
// a Store's background work (client-go resolves locks asynchronously)
// sends afterwards fails instead of reaching the closed MVCC store.
func (m *MockCluster) Close() error {
	m.gate.mu.Lock()
	defer m.gate.mu.Unlock()
	m.gate.closed = true
	return m.client.Close()
}

// Fault makes every request the cluster's Stores send pass through f
// first, for tests of a cluster that fails: the request reaches the
// cluster only if f says deliver, and an error f returns is the request's,
// a lost reply when it was delivered (a request not delivered fails
// anyway). nil removes the fault.
func (m *MockCluster) Fault(f func(*tikvrpc.Request) (deliver bool, err error)) {
	m.gate.mu.Lock()
	defer m.gate.mu.Unlock()
	m.gate.fault = f
}

// storesReachable makes client-go find every store reachable (its
// failpoint injectLiveness), as a mock cluster's in-process stores are: a
// store that failed a request (a Fault's) is one client-go checks before
// it sends it more, with a status request to its address, which no mock
// store answers, so it would never be used again. It runs once, before the
// first mock cluster's stores start: client-go reads the flag that turns
// its failpoints on without synchronization.
var storesReachable = sync.OnceValue(func() error {
	util.EnableFailpoints()
	return failpoint.Enable("tikvclient/injectLiveness", `return("reachable")`)
})

// clusterGate keeps requests off a closed cluster: they hold mu for
// reading while they use it. fault is MockCluster.Fault's.
type clusterGate struct {
	mu     sync.RWMutex
	closed bool
	fault  func(*tikvrpc.Request) (bool, error)
}

// errClusterClosed is the error of a request sent once the cluster closed.
var errClusterClosed = errors.New("tikvkv: the mock cluster is closed")

// sharedClient keeps one Store's Close from closing the cluster's RPC
// client (and its MVCC store) under the others.
type sharedClient struct {
	*testutils.MockClient
	gate *clusterGate
}

func (sharedClient) Close() error { return nil }

// SendRequest resolves a lock resolution that lists its keys (client-go's
// "lite" resolution of a small transaction's lock, which a reader meeting
// a committed transaction's not yet committed secondary keys sends) on
// those keys only, as TiKV does: mocktikv ignores the list and scans the
// whole region under its store's single mutex, which made every contended
// write path (queue pops above all) stall the cluster. Resolution is the
// same per key (commit or roll back the lock of the request's start
// version, if the key still holds it), so nothing else changes.
func (c sharedClient) SendRequest(ctx context.Context, addr string, req *tikvrpc.Request, timeout time.Duration) (*tikvrpc.Response, error) {
	c.gate.mu.RLock()
	defer c.gate.mu.RUnlock()
	if c.gate.closed {
		return nil, errClusterClosed
	}
	if c.gate.fault == nil {
		return c.send(ctx, addr, req, timeout)
	}
	deliver, err := c.gate.fault(req)
	if !deliver {
		return nil, cmp.Or(err, errDropped)
	}
	resp, sendErr := c.send(ctx, addr, req, timeout)
	if err != nil {
		return nil, err // the reply is lost
	}
	return resp, sendErr
}

// errDropped is the error of a request a fault kept from the cluster
// without naming an error.
var errDropped = errors.New("tikvkv: request dropped by a fault")

func (c sharedClient) send(ctx context.Context, addr string, req *tikvrpc.Request, timeout time.Duration) (*tikvrpc.Response, error) {
	if req.Type != tikvrpc.CmdResolveLock || len(req.ResolveLock().GetKeys()) == 0 {
		return c.MockClient.SendRequest(ctx, addr, req, timeout)
	}
	r := req.ResolveLock()
	resp := &kvrpcpb.ResolveLockResponse{}
	for _, k := range r.GetKeys() {
		end := append(append(make([]byte, 0, len(k)+1), k...), 0)
		if err := c.MvccStore.ResolveLock(k, end, r.GetStartVersion(), r.GetCommitVersion()); err != nil {
			resp.Error = &kvrpcpb.KeyError{Abort: err.Error()}
			break
		}
	}
	return &tikvrpc.Response{Resp: resp}, nil
}
