package driver_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tikv/client-go/v2/tikvrpc"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/storage/tikvkv"
)

// lostCommit is a mock TiKV cluster that loses every reply to the commit
// of the first transaction, after arm, that writes a given session's
// record: the cluster applies the commit, and the frontend, its store's
// retries unanswered, cannot learn the outcome. With unsent, it drops
// that transaction's prewrites instead: nothing is applied.
type lostCommit struct {
	m      *tikvkv.MockCluster
	mu     sync.Mutex
	id     []byte // the session's lsid id, which its record keys start with; nil: disarmed
	unsent bool
	start  uint64 // the transaction's start timestamp, once prewritten
	lost   int
}

// startLostCommit starts a Folio on a mock cluster with lostCommit's fault,
// each call to the cluster bounded by 2 s, and connects a client to it.
func startLostCommit(t *testing.T) (*lostCommit, *mongo.Client) {
	t.Helper()
	m, err := tikvkv.NewMockCluster(1)
	if err != nil {
		t.Fatal(err)
	}
	m.Timeout = 2 * time.Second
	kv, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close(); m.Close() }) // after the server's
	l := &lostCommit{m: m}
	m.Fault(l.fault)
	cfg := replSetConfig()
	cfg.Shared, cfg.FrontendID = kv, "lost-commit"
	return l, connect(t, startInstance(t, cfg))
}

// arm makes the next commit of a record of sess lose its replies, or with
// unsent never reach the cluster.
func (l *lostCommit) arm(sess *mongo.Session, unsent bool) {
	_, id := sess.ID().Lookup("id").Binary()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id = id
	l.start, l.lost, l.unsent = 0, 0, unsent
}

func (l *lostCommit) fault(req *tikvrpc.Request) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.id == nil:
	case req.Type == tikvrpc.CmdPrewrite && l.start == 0:
		for _, mu := range req.Prewrite().GetMutations() {
			if l.recordKey(mu.GetKey()) {
				l.start = req.Prewrite().GetStartVersion()
			}
		}
		if l.start != 0 && l.unsent {
			l.lost++
			return false, status.Error(codes.Unavailable, "connection refused")
		}
	case req.Type == tikvrpc.CmdPrewrite && l.unsent && req.Prewrite().GetStartVersion() == l.start:
		l.lost++
		return false, status.Error(codes.Unavailable, "connection refused")
	case req.Type == tikvrpc.CmdCommit && l.start != 0 && req.Commit().GetStartVersion() == l.start:
		l.lost++
		return true, errors.New("connection reset by peer")
	}
	return true, nil
}

// disarm stops the fault and reports how many replies it lost.
func (l *lostCommit) disarm() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id = nil
	return l.lost
}

// recordKey reports whether k is a key of the armed session's record: the
// sessions' key space, the length of the session's key, then the key,
// which starts with the lsid's id (and, under access control, goes on with
// its user's digest).
func (l *lostCommit) recordKey(k []byte) bool {
	return len(k) > 2 && k[0] == sessions.KeySpace && bytes.HasPrefix(k[2:], l.id)
}

// TestRetryAfterLostCommitReply: on TiKV, a retryable write whose commit's
// outcome the frontend could not learn fails with HostUnreachable and the
// RetryableWriteError label, so the driver retries it; the commit had been
// applied, and the retry is answered from the session's record, which
// committed with it. Each kind of write applies once, and the driver sees
// the first attempt's result; a commitTransaction retried after its
// commit applied succeeds.
func TestRetryAfterLostCommitReply(t *testing.T) {
	l, client := startLostCommit(t)
	coll := client.Database(testDB).Collection("lostcommit")
	ctx := context.Background()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		write func(ctx context.Context) (any, error)
		want  any
	}{
		{"update", func(ctx context.Context) (any, error) {
			r, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
			if err != nil {
				return nil, err
			}
			return [2]int64{r.MatchedCount, r.ModifiedCount}, nil
		}, [2]int64{1, 1}},
		{"findAndModify", func(ctx context.Context) (any, error) {
			var d struct{ N int }
			err := coll.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 10}}}}).Decode(&d)
			return d.N, err
		}, 1},
		{"insert", func(ctx context.Context) (any, error) {
			r, err := coll.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "_id", Value: 3}}})
			if err != nil {
				return nil, err
			}
			return len(r.InsertedIDs), nil
		}, 2},
		{"delete", func(ctx context.Context) (any, error) {
			r, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: 3}})
			if err != nil {
				return nil, err
			}
			return r.DeletedCount, nil
		}, int64(1)},
		{"commitTransaction", func(ctx context.Context) (any, error) {
			sess := mongo.SessionFromContext(ctx)
			if err := sess.StartTransaction(); err != nil {
				return nil, err
			}
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 4}}); err != nil {
				return nil, err
			}
			if _, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 100}}}}); err != nil {
				return nil, err
			}
			return "committed", sess.CommitTransaction(ctx)
		}, "committed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess, err := client.StartSession()
			if err != nil {
				t.Fatal(err)
			}
			defer sess.EndSession(ctx)
			l.arm(sess, false)
			got, err := tc.write(mongo.NewSessionContext(ctx, sess))
			if lost := l.disarm(); lost == 0 {
				t.Fatal("no commit reply was lost")
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v, the first attempt's result", got, err, tc.want)
			}
		})
	}
	var docs []bson.M
	cur, err := coll.Find(ctx, bson.D{})
	if err == nil {
		err = cur.All(ctx, &docs)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 || docs[0]["n"] != int32(111) || docs[1]["_id"] != int32(2) || docs[2]["_id"] != int32(4) {
		t.Fatalf("documents %v, want {_id: 1, n: 111}, {_id: 2} and {_id: 4}: each write applied once", docs)
	}
}

// TestRetryAfterUnsentCommit: on TiKV, a retryable write whose commit
// never reached the cluster fails with HostUnreachable and the
// RetryableWriteError label; the driver's retry applies it, once.
func TestRetryAfterUnsentCommit(t *testing.T) {
	l, client := startLostCommit(t)
	coll := client.Database(testDB).Collection("unsentcommit")
	ctx := context.Background()
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	sess, err := client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	l.arm(sess, true)
	r, err := coll.UpdateOne(mongo.NewSessionContext(ctx, sess), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
	if lost := l.disarm(); lost == 0 {
		t.Fatal("no prewrite was dropped")
	}
	if err != nil || r.ModifiedCount != 1 {
		t.Fatalf("update: %v, %v; want one document modified by the retry", r, err)
	}
	var d struct{ N int }
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&d); err != nil || d.N != 1 {
		t.Fatalf("n = %d, %v; want 1: applied once", d.N, err)
	}
}
