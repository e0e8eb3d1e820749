package crash

import (
	"context"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/tests/folioproc"
)

// exitGuard bounds the wait for a signalled server to exit, so a shutdown
// that hangs fails the test instead of hanging it.
const exitGuard = 2 * time.Minute

// TestSignalShutdownIsClean proves that SIGTERM, SIGINT and the shutdown
// command stop folio with exit code 0 while a client is connected with an
// open cursor, and that every acknowledged write is there after a restart
// — also with -durability=never, where only the clean shutdown puts the
// writes on disk.
func TestSignalShutdownIsClean(t *testing.T) {
	cases := []struct {
		name  string
		sig   syscall.Signal
		flags []string
	}{
		{"SIGTERM", syscall.SIGTERM, nil},
		{"SIGTERM-durability-never", syscall.SIGTERM, []string{"--durability=never"}},
		{"SIGINT", syscall.SIGINT, nil},
		{"shutdown-command-durability-never", 0, []string{"--durability=never"}},
	}
	const n = 200
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbpath := t.TempDir()
			p := folioproc.Start(t, dbpath, tc.flags...)
			ctx := context.Background()
			coll := connect(t, p.URI()).Database(dbName).Collection(collFor(0))
			docs := make([]any, n)
			for seq := range n {
				docs[seq] = docFor(0, 0, seq)
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				t.Fatalf("insert: %v", err)
			}
			cur, err := coll.Find(ctx, bson.D{}, options.Find().SetBatchSize(5))
			if err != nil || !cur.Next(ctx) {
				t.Fatalf("open cursor: %v", err)
			}

			if tc.sig == 0 {
				if err := connect(t, p.URI()).Database("admin").RunCommand(ctx, bson.D{{Key: "shutdown", Value: 1}}).Err(); err != nil {
					t.Fatalf("shutdown command: %v", err)
				}
			} else if err := p.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, exitGuard)
			defer cancel()
			code, err := p.Wait(wctx)
			if err != nil {
				t.Fatalf("waiting for exit after %v: %v", tc.sig, err)
			}
			if code != 0 {
				t.Fatalf("exit code after %v = %d, want 0", tc.sig, code)
			}

			p = folioproc.Start(t, dbpath, tc.flags...)
			verify(t, p.URI(), [][]tally{{{acked: n, attempted: n}}})
		})
	}
}
