package commands

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/logring"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// newTestService returns a Service over an in-memory store.
func newTestService(tb testing.TB) *Service {
	tb.Helper()
	s, _ := newServiceOnStore(tb)
	return s
}

// newServiceOnStore is newTestService, also returning its store.
func newServiceOnStore(tb testing.TB) (*Service, storage.KV) {
	tb.Helper()
	return newServiceWithClock(tb, clock.New(nil))
}

// newServiceWithClock is newServiceOnStore with c the cluster clock of
// the service and of its store, as the instance shares the store's.
func newServiceWithClock(tb testing.TB, c *clock.Clock) (*Service, storage.KV) {
	tb.Helper()
	kv, err := pebblekv.Open("", pebblekv.Options{InMemory: true, Uncached: []byte{sessions.KeySpace}, Clock: c})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { kv.Close() })
	eng, err := engine.Open(kv, engine.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	return &Service{
		Engine:  eng,
		Cursors: cursors.NewRegistry(time.Minute),
		Clock:   c,
		Recent:  logring.New(16),
		Started: time.Now(),
	}, kv
}

// seedCommands reads testdata/commands.jsonl: one command per line in
// MongoDB Extended JSON.
func seedCommands(tb testing.TB) []string {
	f, err := os.Open("testdata/commands.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// FuzzRun checks that no command document, however malformed its fields,
// panics the service, and that every reply is a valid BSON document with
// an ok field.
func FuzzRun(f *testing.F) {
	// a replica set member, so that the commands only a member runs are
	// reached too
	svc := newTestService(f)
	svc.ReplSetName, svc.Sessions = "fuzz", sessions.NewRegistry()
	for _, c := range seedCommands(f) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, ext string) {
		var cmd bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(ext), false, &cmd); err != nil {
			return
		}
		// the command's $db, so that admin commands reach their handlers
		db, ok := cmd.Lookup("$db").StringValueOK()
		if !ok {
			db = "fuzz"
		}
		reply := svc.Run(&Request{DB: db, Cmd: cmd, Conn: &Conn{}})
		if err := reply.Validate(); err != nil {
			t.Fatalf("invalid reply to %s: %v", ext, err)
		}
		if _, err := reply.LookupErr("ok"); err != nil {
			t.Fatalf("reply to %s has no ok: %s", ext, reply)
		}
	})
}
