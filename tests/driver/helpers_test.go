// Package driver_test drives an in-process Folio with the official MongoDB Go
// driver (and, for the wire tests, raw TCP) and checks that it behaves as
// MongoDB does.
package driver_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// testDB is the database the tests use unless they need another.
const testDB = "test"

// startServer starts an in-memory Folio on a random loopback port and
// connects a driver client to it; both are closed when the test ends.
func startServer(t testing.TB) (*mongo.Client, *instance.Instance) {
	t.Helper()
	in := startInstance(t, defaultConfig())
	return connect(t, in), in
}

// defaultConfig is an in-memory Folio on a random loopback port.
func defaultConfig() instance.Config {
	return instance.Config{Addr: "127.0.0.1:0", InMemory: true}
}

// replSetConfig is defaultConfig as the primary of a one-member replica
// set, the folio command's default: only a replica set member takes a
// txnNumber (retryable writes and transactions).
func replSetConfig() instance.Config {
	cfg := defaultConfig()
	cfg.ReplSetName = "folio"
	return cfg
}

// testAuth reports FOLIO_TEST_AUTH=1: the suite then runs with access
// control on, every server started with a root user and every client
// (dial) logged in as it. It reads the variable while a test runs, so that
// go test's cache knows the results depend on it (a read during package
// initialization is not recorded, and a run with the variable set would
// replay the results of one without it).
func testAuth() bool { return os.Getenv("FOLIO_TEST_AUTH") == "1" }

// startInstance starts a Folio with cfg and closes it when the test ends.
// Under FOLIO_TEST_AUTH=1 a config without access control gets it, and a
// root user.
func startInstance(t testing.TB, cfg instance.Config) *instance.Instance {
	t.Helper()
	withRoot := testAuth() && !cfg.Auth
	cfg.Auth = cfg.Auth || testAuth()
	if testkv.TiKV() && cfg.Shared == nil {
		// FOLIO_TEST_STORAGE=tikv: an in-memory server runs on a mock
		// TiKV cluster with forced region splits; one on a data
		// directory tests Pebble's own durability.
		if !cfg.InMemory {
			testkv.SkipOnTiKV(t, "the test restarts a server on its Pebble data directory")
		}
		cfg.Shared = testkv.Open(t)
	}
	in, err := instance.Start(cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	if withRoot {
		// a restarted server keeps its root user: the localhost
		// exception is then closed, and the creation refused
		defer ensureRootUser(t, in)
	}
	t.Cleanup(func() {
		if err := in.Close(context.Background()); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return in
}

// connect returns a driver client for in, with opts applied after the URI,
// disconnected when the test ends.
func connect(t testing.TB, in *instance.Instance, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	client := dial(t, in, opts...)
	t.Cleanup(func() {
		if err := client.Disconnect(context.Background()); err != nil {
			t.Errorf("disconnect: %v", err)
		}
	})
	return client
}

// sessionCtx is t's context in one explicit session of c, the same for
// every call until the test that first asked for it ends. Raw commands
// that open a cursor and then page it need it: MongoDB ties a cursor to
// the session that opened it, and the driver may give each command
// another implicit session (its pool, for one, drops a returned session
// when the topology description it last read has no session timeout).
func sessionCtx(t testing.TB, c *mongo.Client) context.Context {
	t.Helper()
	if s, ok := pinnedSessions.Load(c); ok {
		return mongo.NewSessionContext(t.Context(), s.(*mongo.Session))
	}
	s, err := c.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	pinnedSessions.Store(c, s)
	t.Cleanup(func() {
		pinnedSessions.Delete(c)
		s.EndSession(context.Background())
	})
	return mongo.NewSessionContext(t.Context(), s)
}

// pinnedSessions holds sessionCtx's session of each client.
var pinnedSessions sync.Map

// restart closes in and starts a server again on cfg (its data
// directory), closed when the test ends.
func restart(t testing.TB, in *instance.Instance, cfg instance.Config) *instance.Instance {
	t.Helper()
	if err := in.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := instance.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close(context.Background()) })
	return again
}

// dial returns a driver client for in that has answered a ping; the caller
// disconnects it, before in closes (after, Disconnect waits for server
// selection to time out).
func dial(t testing.TB, in *instance.Instance, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	all := append([]*options.ClientOptions{clientOptions(in).SetDirect(true)}, opts...)
	client, err := mongo.Connect(all...)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if err := client.Ping(context.Background(), nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	return client
}

// commandCounter counts the commands a client starts, by name.
type commandCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// newCommandCounter returns a counter and the client option that feeds it.
func newCommandCounter() (*commandCounter, *options.ClientOptions) {
	c := &commandCounter{counts: map[string]int{}}
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		c.mu.Lock()
		c.counts[e.CommandName]++
		c.mu.Unlock()
	}}
	return c, options.Client().SetMonitor(mon)
}

// count is how many name commands were started since the last reset.
func (c *commandCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[name]
}

// reset forgets every count.
func (c *commandCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
}

// serverCode is the server error code carried by err, or 0 when err is not a
// server error.
func serverCode(err error) int {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return int(ce.Code)
	}
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && len(bwe.WriteErrors) > 0 {
		return bwe.WriteErrors[0].Code
	}
	var we mongo.WriteException
	if errors.As(err, &we) {
		if len(we.WriteErrors) > 0 {
			return we.WriteErrors[0].Code
		}
		if we.WriteConcernError != nil {
			return we.WriteConcernError.Code
		}
	}
	// Any other server error: the interruption codes, which tests of
	// killed and timed-out operations look for.
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, c := range []int{11600, 11601, 50, 279} {
			if se.HasErrorCode(c) {
				return c
			}
		}
	}
	return 0
}

// requireCode fails the test unless err is a server error with code and,
// when codeName is not empty, that codeName.
func requireCode(t testing.TB, err error, code int, codeName string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want code %d (%s)", code, codeName)
	}
	if got := serverCode(err); got != code {
		t.Fatalf("got error %v (code %d), want code %d (%s)", err, got, code, codeName)
	}
	var ce mongo.CommandError
	if codeName != "" && errors.As(err, &ce) && ce.Name != codeName {
		t.Fatalf("got codeName %q, want %q (error %v)", ce.Name, codeName, err)
	}
}

// requireError fails the test unless err is a command error with code,
// codeName and exactly the message msg.
func requireError(t testing.TB, err error, code int, codeName, msg string) {
	t.Helper()
	requireCode(t, err, code, codeName)
	var ce mongo.CommandError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a command error", err)
	}
	if ce.Message != msg {
		t.Fatalf("got message %q, want %q", ce.Message, msg)
	}
}

// mustRaw marshals v to BSON bytes.
func mustRaw(t testing.TB, v any) bson.Raw {
	t.Helper()
	b, err := bson.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return b
}

// loadExtJSON reads testdata/name, a canonical Extended JSON array of
// documents.
func loadExtJSON(t testing.TB, name string) []bson.Raw {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var wrapper struct {
		Docs []bson.Raw `bson:"docs"`
	}
	if err := bson.UnmarshalExtJSON(append(append([]byte(`{"docs":`), data...), '}'), true, &wrapper); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return wrapper.Docs
}

// seed inserts docs into coll.
func seed(t testing.TB, coll *mongo.Collection, docs []bson.Raw) {
	t.Helper()
	if _, err := coll.InsertMany(context.Background(), docs); err != nil {
		t.Fatalf("seed %s: %v", coll.Name(), err)
	}
}

// findAll returns the documents coll.Find(filter, opts) yields.
func findAll(t testing.TB, coll *mongo.Collection, filter any, opts ...options.Lister[options.FindOptions]) []bson.Raw {
	t.Helper()
	cur, err := coll.Find(context.Background(), filter, opts...)
	return cursorDocs(t, cur, err, "find", filter)
}

// aggregateAll returns the documents coll.Aggregate(pipeline, opts)
// yields.
func aggregateAll(t testing.TB, coll *mongo.Collection, pipeline any, opts ...options.Lister[options.AggregateOptions]) []bson.Raw {
	t.Helper()
	cur, err := coll.Aggregate(context.Background(), pipeline, opts...)
	return cursorDocs(t, cur, err, "aggregate", pipeline)
}

// aggregateResult is what coll.Aggregate(pipeline, opts) yields, or the
// error of the command or of a getMore.
func aggregateResult(coll *mongo.Collection, pipeline any, opts ...options.Lister[options.AggregateOptions]) ([]bson.Raw, error) {
	cur, err := coll.Aggregate(context.Background(), pipeline, opts...)
	var out []bson.Raw
	if err == nil {
		err = cur.All(context.Background(), &out)
	}
	return out, err
}

// docsString is docs in extended JSON, separated by spaces, for
// comparing a result with the one expected as text.
func docsString(docs []bson.Raw) string {
	var out []string
	for _, d := range docs {
		out = append(out, d.String())
	}
	return strings.Join(out, " ")
}

// cursorDocs returns the documents of cur, the cursor (or error err) that the
// command op opened with arg; either failure fails t.
func cursorDocs(t testing.TB, cur *mongo.Cursor, err error, op string, arg any) []bson.Raw {
	t.Helper()
	if err != nil {
		t.Fatalf("%s %v: %v", op, arg, err)
	}
	var out []bson.Raw
	if err := cur.All(context.Background(), &out); err != nil {
		t.Fatalf("%s %v: %v", op, arg, err)
	}
	return out
}

// ids returns the _id of each document for comparison: integers in
// decimal, other values as Extended JSON.
func ids(docs []bson.Raw) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		id := d.Lookup("_id")
		if n, ok := id.AsInt64OK(); ok {
			out[i] = strconv.FormatInt(n, 10)
		} else {
			out[i] = id.String()
		}
	}
	return out
}

// The root user FOLIO_TEST_AUTH=1 runs the suite as, and startAuthServer
// creates.
const (
	rootUser     = "root"
	rootPassword = "folio-root-pw"
)

// createRootUser creates the root user through the localhost exception.
func createRootUser(t testing.TB, in *instance.Instance) {
	t.Helper()
	if err := addRootUser(in); err != nil {
		t.Fatalf("create root user: %v", err)
	}
}

// ensureRootUser creates the root user unless users exist already.
func ensureRootUser(t testing.TB, in *instance.Instance) {
	t.Helper()
	if err := addRootUser(in); err != nil && serverCode(err) != 13 {
		t.Fatalf("create root user: %v", err)
	}
}

func addRootUser(in *instance.Instance) error {
	c, err := mongo.Connect(uriOptions(in.URI()).SetDirect(true))
	if err != nil {
		return err
	}
	defer func() { _ = c.Disconnect(context.Background()) }()
	return c.Database("admin").RunCommand(context.Background(), bson.D{
		{Key: "createUser", Value: rootUser}, {Key: "pwd", Value: rootPassword}, {Key: "roles", Value: bson.A{"root"}},
	}).Err()
}

// clientOptions are the options of a client of in: its URI, and under
// FOLIO_TEST_AUTH=1 the root user's credentials when in runs with access
// control.
func clientOptions(in *instance.Instance) *options.ClientOptions {
	o := uriOptions(in.URI())
	if testAuth() && in.AuthEnabled() {
		o.SetAuth(options.Credential{Username: rootUser, Password: rootPassword, AuthSource: "admin"})
	}
	return o
}

// uriOptions are the options of every test client: uri, and a monitor
// that polls. A streaming one (TestStreamingMonitor) keeps an awaitable
// hello waiting on the server, which a client disconnecting while its
// monitor reconnects waits out (heartbeatFrequencyMS, 10 s: the driver's
// race, the same against MongoDB), and which a state change error a fail
// point makes up does not end, as a real change would.
func uriOptions(uri string) *options.ClientOptions {
	return options.Client().ApplyURI(uri).SetServerMonitoringMode(options.ServerMonitoringModePoll)
}

// rawLogin authenticates a raw connection as the root user
// (SCRAM-SHA-256 through saslStart and saslContinue).
func rawLogin(t testing.TB, c net.Conn) {
	t.Helper()
	if reply := rawLoginAs(t, c, rootUser, rootPassword, "admin"); reply != nil {
		t.Fatalf("login: %s", reply)
	}
}

// rawLoginAs authenticates a raw connection as user of db by SCRAM-SHA-256,
// returning nil, or the reply of the step the server refused.
func rawLoginAs(t testing.TB, c net.Conn, user, pwd, db string) bson.Raw {
	t.Helper()
	client, err := scram.SHA256.NewClient(user, pwd, "")
	if err != nil {
		t.Fatal(err)
	}
	conv := client.NewConversation()
	step := func(id int32, cmd bson.D, in string) (bson.Raw, string) {
		out, err := conv.Step(in)
		if err != nil {
			t.Fatalf("scram: %v", err)
		}
		cmd = append(cmd, bson.E{Key: "payload", Value: bson.Binary{Data: []byte(out)}}, bson.E{Key: "$db", Value: db})
		doc, err := bson.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(message(id, opMsg, msgBody(0, doc))); err != nil {
			t.Fatal(err)
		}
		_, reply, err := readMsg(c)
		if err != nil {
			t.Fatal(err)
		}
		_, data, _ := reply.Lookup("payload").BinaryOK()
		return reply, string(data)
	}
	refused := func(reply bson.Raw) bool {
		ok, _ := reply.Lookup("ok").AsFloat64OK()
		return ok != 1
	}
	reply, s1 := step(-1, bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: "SCRAM-SHA-256"}, {Key: "options", Value: bson.D{{Key: "skipEmptyExchange", Value: true}}}}, "")
	if refused(reply) {
		return reply
	}
	reply, s2 := step(-2, bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: reply.Lookup("conversationId")}}, s1)
	if refused(reply) {
		return reply
	}
	if _, err := conv.Step(s2); err != nil || !reply.Lookup("done").Boolean() {
		t.Fatalf("login did not complete: %v %s", err, reply)
	}
	return nil
}
