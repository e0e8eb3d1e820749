package driver_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// startFrontends starts n in-memory Folio servers over one store (several
// frontends of one database) with a short schema lease, and connects a
// client to each.
func startFrontends(t *testing.T, n int) []*mongo.Client {
	t.Helper()
	return startFrontendsWith(t, n, func(*instance.Config) {})
}

// startFrontendsWith is startFrontends with each server's config changed
// by set.
func startFrontendsWith(t *testing.T, n int, set func(*instance.Config)) []*mongo.Client {
	t.Helper()
	kvs := testkv.OpenShared(t, n) // closed after the servers: cleanups run last first
	var clients []*mongo.Client
	for i := range n {
		cfg := replSetConfig()
		cfg.Shared, cfg.FrontendID, cfg.SchemaLease = kvs[i], fmt.Sprintf("frontend-%d", i), time.Second
		set(&cfg)
		clients = append(clients, connect(t, startInstance(t, cfg)))
	}
	return clients
}

// TestFrontendsIndexBuildThroughDriver builds an index through one
// frontend while two others insert and update through the driver; then
// validate, run through every frontend, finds the index exactly consistent
// with the documents, and every frontend's plan uses the index.
func TestFrontendsIndexBuildThroughDriver(t *testing.T) {
	// A lease of 3 s: under CI's load a frontend's renewal was once late
	// past 1 s on TiKV, and the build it held was retired as abandoned.
	clients := startFrontendsWith(t, 3, func(cfg *instance.Config) { cfg.SchemaLease = 3 * time.Second })
	ctx := context.Background()
	colls := make([]*mongo.Collection, len(clients))
	for i, c := range clients {
		colls[i] = c.Database(testDB).Collection("fe")
	}
	var docs []any
	for i := range 2000 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "a", Value: i % 100}, {Key: "tags", Value: bson.A{i % 7}}})
	}
	if _, err := colls[0].InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w, coll := range colls[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if i%2 == 0 {
					_, err = coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("w%d-%d", w, i)}, {Key: "a", Value: rng.IntN(100)}, {Key: "tags", Value: bson.A{rng.IntN(7), rng.IntN(7)}}})
				} else {
					_, err = coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: rng.IntN(2000)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "a", Value: rng.IntN(100)}, {Key: "tags", Value: bson.A{rng.IntN(7)}}}}})
				}
				if err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	before := writes.Load()
	_, err := colls[0].Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "tags", Value: 1}, {Key: "a", Value: 1}}})
	during := writes.Load() - before
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if during == 0 {
		t.Fatal("no write ran during the build")
	}
	for i, c := range clients {
		var res bson.M
		if err := c.Database(testDB).RunCommand(ctx, bson.D{{Key: "validate", Value: "fe"}, {Key: "full", Value: true}}).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if res["valid"] != true || len(res["errors"].(bson.A)) != 0 {
			t.Errorf("frontend %d: validate %v", i, res)
		}
		var plan bson.M
		cmd := bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "fe"}, {Key: "filter", Value: bson.D{{Key: "tags", Value: 3}, {Key: "a", Value: 5}}}}}}
		if err := c.Database(testDB).RunCommand(ctx, cmd).Decode(&plan); err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(plan["queryPlanner"]); !strings.Contains(s, "IXSCAN") || !strings.Contains(s, "tags_1_a_1") {
			t.Errorf("frontend %d does not plan with the new index: %s", i, s)
		}
	}
}

// TestFrontendsSeeEachOthersCollections creates a collection through one
// frontend and reads and drops it through another.
func TestFrontendsSeeEachOthersCollections(t *testing.T) {
	clients := startFrontends(t, 2)
	ctx := context.Background()
	if _, err := clients[0].Database(testDB).Collection("seen").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	n, err := clients[1].Database(testDB).Collection("seen").CountDocuments(ctx, bson.D{})
	if err != nil || n != 1 {
		t.Fatalf("count through the other frontend: %d, %v", n, err)
	}
	names, err := clients[1].Database(testDB).ListCollectionNames(ctx, bson.D{})
	if err != nil || len(names) != 1 || names[0] != "seen" {
		t.Fatalf("listCollections through the other frontend: %v, %v", names, err)
	}
	if err := clients[1].Database(testDB).Collection("seen").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	// The drop returns once every frontend has loaded it.
	names, err = clients[0].Database(testDB).ListCollectionNames(ctx, bson.D{})
	if err != nil || len(names) != 0 {
		t.Fatalf("listCollections after the drop: %v, %v", names, err)
	}
}

// TestFrontendsRetryThroughAnotherFrontend: a retryable write retried
// through another frontend of the same store is answered from the first
// one's result and applied once, for every kind of write; a retried
// commitTransaction succeeds there; an older txnNumber is refused there.
func TestFrontendsRetryThroughAnotherFrontend(t *testing.T) {
	clients := startFrontends(t, 2)
	dbs := []*mongo.Database{clients[0].Database(testDB), clients[1].Database(testDB)}
	for i, tc := range retryCases("") {
		t.Run(tc.name, func(t *testing.T) {
			coll := "fe_retry_" + string(rune('a'+i))
			cmd := append(bson.D{{Key: tc.cmd[0].Key, Value: coll}}, tc.cmd[1:]...)
			if tc.seed != nil {
				if _, err := dbs[0].Collection(coll).InsertMany(t.Context(), tc.seed); err != nil {
					t.Fatal(err)
				}
			}
			lsid := lsidFor(fmt.Sprintf("fe%d", i))
			first := mustRunRaw(t, dbs[0], inSession(cmd, lsid, 1))
			after := findAll(t, dbs[0].Collection(coll), bson.D{})
			retry := mustRunRaw(t, dbs[1], inSession(cmd, lsid, 1))
			if got, want := withoutRetried(t, retry), withoutRetried(t, first); got != want {
				t.Errorf("retry answered %s, first %s", got, want)
			}
			if got := retriedOf(retry); got != tc.retried {
				t.Errorf("retried ids %s, want %s", got, tc.retried)
			}
			if got := findAll(t, dbs[1].Collection(coll), bson.D{}); fmt.Sprint(got) != fmt.Sprint(after) {
				t.Errorf("the retry changed the collection: %v, was %v", got, after)
			}
			// The first frontend now refuses the older number.
			next := mustRunRaw(t, dbs[1], inSession(bson.D{{Key: "insert", Value: coll}, {Key: "documents", Value: bson.A{bson.D{}}}}, lsid, 2))
			if n, _ := next.Lookup("n").Int32OK(); n != 1 {
				t.Fatalf("txnNumber 2: %s", next)
			}
			err := dbs[0].RunCommand(t.Context(), inSession(cmd, lsid, 1)).Err()
			requireCode(t, err, 225, "TransactionTooOld")
		})
	}
	t.Run("commitTransaction", func(t *testing.T) {
		lsid := lsidFor("fecommit")
		txn := func(cmd bson.D) bson.D {
			return append(inSession(cmd, lsid, 5), bson.E{Key: "autocommit", Value: false})
		}
		ins := append(txn(bson.D{{Key: "insert", Value: "fe_txn"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}}), bson.E{Key: "startTransaction", Value: true})
		mustRunRaw(t, dbs[0], ins)
		admin := []*mongo.Database{clients[0].Database("admin"), clients[1].Database("admin")}
		mustRunRaw(t, admin[0], txn(bson.D{{Key: "commitTransaction", Value: 1}}))
		mustRunRaw(t, admin[1], txn(bson.D{{Key: "commitTransaction", Value: 1}}))
		err := admin[1].RunCommand(t.Context(), txn(bson.D{{Key: "abortTransaction", Value: 1}})).Err()
		requireCode(t, err, 256, "TransactionCommitted")
	})
}

// TestFrontendsConcurrentRetriesApplyOnce sends each retryable $inc to two
// frontends at the same time, as a driver retrying through another server
// might: every statement is applied exactly once.
func TestFrontendsConcurrentRetriesApplyOnce(t *testing.T) {
	clients := startFrontends(t, 2)
	dbs := []*mongo.Database{clients[0].Database(testDB), clients[1].Database(testDB)}
	const writes = 40
	for s := range 4 {
		lsid := lsidFor(fmt.Sprintf("feconc%d", s))
		for n := int64(1); n <= writes; n++ {
			cmd := inSession(bson.D{{Key: "update", Value: "fe_conc"}, {Key: "updates", Value: bson.A{bson.D{
				{Key: "q", Value: bson.D{{Key: "_id", Value: s}}},
				{Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}},
				{Key: "upsert", Value: true}}}}}, lsid, n)
			var wg sync.WaitGroup
			replies := make([]bson.Raw, 2)
			for i, db := range dbs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					raw, err := db.RunCommand(context.Background(), cmd).Raw()
					if err != nil {
						t.Errorf("frontend %d: %v", i, err)
					}
					replies[i] = raw
				}()
			}
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			if withoutRetried(t, replies[0]) != withoutRetried(t, replies[1]) {
				t.Errorf("the two frontends answered %s and %s", replies[0], replies[1])
			}
		}
	}
	for _, d := range findAll(t, dbs[0].Collection("fe_conc"), bson.D{}) {
		if n, _ := d.Lookup("n").AsInt64OK(); n != writes {
			t.Errorf("%s: %d statements applied %d times", d, writes, n)
		}
	}
}

// TestFrontendsSeeUserChanges: with access control, a role revoked through
// one frontend stops a user's writes through that frontend at once and
// through another within its userCacheInvalidationIntervalSecs, as a
// mongos polls for user changes.
func TestFrontendsSeeUserChanges(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	var ins []*instance.Instance
	for i := range 2 {
		cfg := defaultConfig()
		cfg.Auth = true
		cfg.Shared, cfg.FrontendID, cfg.SchemaLease = kvs[i], fmt.Sprintf("frontend-%d", i), time.Second
		ins = append(ins, startInstance(t, cfg))
	}
	ensureRootUser(t, ins[0])
	ctx := context.Background()
	root := []*mongo.Client{connectAs(t, ins[0], rootUser, rootPassword, "admin", ""), connectAs(t, ins[1], rootUser, rootPassword, "admin", "")}
	mustRunRaw(t, root[1].Database("admin"), bson.D{{Key: "setParameter", Value: 1}, {Key: "userCacheInvalidationIntervalSecs", Value: 1}})
	mustRunRaw(t, root[0].Database("app"), bson.D{{Key: "createUser", Value: "ann"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{"readWrite"}}})
	var colls []*mongo.Collection
	for _, in := range ins {
		colls = append(colls, connectAs(t, in, "ann", "pw", "app", "").Database("app").Collection("c"))
	}
	for i, c := range colls {
		if _, err := c.InsertOne(ctx, bson.D{}); err != nil {
			t.Fatalf("frontend %d before the revoke: %v", i, err)
		}
	}
	mustRunRaw(t, root[0].Database("app"), bson.D{{Key: "revokeRolesFromUser", Value: "ann"}, {Key: "roles", Value: bson.A{"readWrite"}}})
	_, err := colls[0].InsertOne(ctx, bson.D{})
	requireCode(t, err, 13, "Unauthorized")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := colls[1].InsertOne(ctx, bson.D{})
		if serverCode(err) == 13 {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("the other frontend still lets the revoked user write (%v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFrontendStoppedMidTransaction: a frontend that stops with a
// transaction open leaves nothing of it behind: its writes are buffered on
// it until the commit, so another frontend finds the documents as they
// were and writes them at once.
func TestFrontendStoppedMidTransaction(t *testing.T) {
	kvs := testkv.OpenShared(t, 2)
	var ins []*instance.Instance
	for i := range 2 {
		cfg := replSetConfig()
		cfg.Shared, cfg.FrontendID, cfg.SchemaLease = kvs[i], fmt.Sprintf("frontend-%d", i), time.Second
		ins = append(ins, startInstance(t, cfg))
	}
	ctx := context.Background()
	dying, other := connect(t, ins[0]).Database(testDB), connect(t, ins[1]).Database(testDB)
	if _, err := other.Collection("midtxn").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: 0}}); err != nil {
		t.Fatal(err)
	}
	lsid := lsidFor("midtxn")
	txn := func(cmd bson.D) bson.D {
		return append(inSession(cmd, lsid, 1), bson.E{Key: "autocommit", Value: false})
	}
	mustRunRaw(t, dying, append(txn(bson.D{{Key: "insert", Value: "midtxn"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 2}}}}}), bson.E{Key: "startTransaction", Value: true}))
	mustRunRaw(t, dying, txn(bson.D{{Key: "update", Value: "midtxn"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "n", Value: 99}}}}}}}}}))
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := ins[0].Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Collection("midtxn").UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
		t.Fatalf("a write of the document the stopped transaction changed: %v", err)
	}
	got := findAll(t, other.Collection("midtxn"), bson.D{})
	if len(got) != 1 || got[0].Lookup("n").Int32() != 1 {
		t.Errorf("documents after the frontend stopped: %v, want only {_id: 1, n: 1}", got)
	}
}

// TestFrontendsChangeStream: while clients of three frontends insert,
// insertMany and $inc shared counters, a change stream opened on one of
// them delivers every insert exactly once and each counter's updates in
// the order they were applied (n = 1, 2, 3, ...), at cluster times that
// never go back; resumed on another frontend from a token in the middle,
// it delivers the same events after that token.
func TestFrontendsChangeStream(t *testing.T) {
	clients := startFrontendsWith(t, 3, func(cfg *instance.Config) { cfg.ReplSetName = "folio" })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	coll := func(i int) *mongo.Collection { return clients[i].Database(testDB).Collection("feed") }
	stream, err := coll(2).Watch(ctx, mongo.Pipeline{})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close(ctx)
	const counters, writers, rounds, batch = 3, 3, 10, 5
	for k := range counters {
		if _, err := coll(0).InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("c%d", k)}, {Key: "n", Value: 0}}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := coll(w)
			rng := rand.New(rand.NewPCG(uint64(w), 5))
			for i := range rounds {
				if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("w%d-%d", w, i)}}); err != nil {
					t.Error(err)
					return
				}
				var many []any
				for j := range batch {
					many = append(many, bson.D{{Key: "_id", Value: fmt.Sprintf("w%d-%d-%d", w, i, j)}})
				}
				if _, err := c.InsertMany(ctx, many); err != nil {
					t.Error(err)
					return
				}
				counter := fmt.Sprintf("c%d", rng.IntN(counters))
				if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: counter}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	type event struct {
		op, id string
		n      int32
		at     bson.Timestamp
		token  bson.Raw
	}
	total := counters + writers*rounds*(2+batch)
	read := func(s *mongo.ChangeStream, n int) []event {
		var evs []event
		for len(evs) < n && s.Next(ctx) {
			var e struct {
				ID  bson.Raw       `bson:"_id"`
				Op  string         `bson:"operationType"`
				At  bson.Timestamp `bson:"clusterTime"`
				Key struct {
					ID string `bson:"_id"`
				} `bson:"documentKey"`
				Desc struct {
					Fields struct {
						N int32 `bson:"n"`
					} `bson:"updatedFields"`
				} `bson:"updateDescription"`
			}
			if err := s.Decode(&e); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, event{op: e.Op, id: e.Key.ID, n: e.Desc.Fields.N, at: e.At, token: e.ID})
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	evs := read(stream, total)
	if len(evs) != total {
		t.Fatalf("%d events, want %d", len(evs), total)
	}
	inserted := map[string]int{}
	applied := map[string]int32{}
	for i, e := range evs {
		if i > 0 && e.at.Before(evs[i-1].at) {
			t.Fatalf("event %d at %v, after one at %v", i, e.at, evs[i-1].at)
		}
		switch e.op {
		case "insert":
			inserted[e.id]++
		case "update":
			if e.n != applied[e.id]+1 {
				t.Fatalf("event %d: %s's n is %d after %d", i, e.id, e.n, applied[e.id])
			}
			applied[e.id] = e.n
		default:
			t.Fatalf("event %d: %s", i, e.op)
		}
	}
	for id, n := range inserted {
		if n != 1 {
			t.Fatalf("%s inserted %d times", id, n)
		}
	}
	if len(inserted) != counters+writers*rounds*(1+batch) {
		t.Fatalf("%d documents inserted", len(inserted))
	}

	half := total / 2
	resumed, err := coll(0).Watch(ctx, mongo.Pipeline{}, options.ChangeStream().SetResumeAfter(evs[half].token))
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close(ctx)
	rest := read(resumed, total-half-1)
	for i, e := range rest {
		if want := evs[half+1+i]; e.op != want.op || e.id != want.id || e.n != want.n || !bytes.Equal(e.token, want.token) {
			t.Fatalf("resumed event %d: %+v, want %+v", i, e, want)
		}
	}
}
