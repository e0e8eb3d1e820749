package crash

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/tests/folioproc"
)

const (
	rounds  = 3   // SIGKILL/restart cycles on one data directory
	writers = 4   // concurrent clients per round
	killAt  = 250 // acknowledged inserts per round before the SIGKILL
	// maxPerWriter bounds a writer's inserts should the kill never come.
	maxPerWriter = 20000
)

// TestSIGKILLKeepsAcknowledgedWrites proves that every insert acknowledged
// with j:true survives the server being SIGKILLed while several clients are
// writing, over repeated crash/restart cycles on the same data directory,
// and that recovery leaves no torn or invented documents.
func TestSIGKILLKeepsAcknowledgedWrites(t *testing.T) {
	dbpath := t.TempDir()
	var history [][]tally
	var since bson.Timestamp
	for round := range rounds {
		p := folioproc.Start(t, dbpath)
		if round == 0 {
			since = operationTime(t, p.URI())
		}
		verify(t, p.URI(), history)
		verifyOplog(t, p.URI(), since)
		if t.Failed() {
			t.FailNow()
		}
		history = append(history, writeUntilKilled(t, p, round))
	}
	p := folioproc.Start(t, dbpath)
	verify(t, p.URI(), history)
	verifyOplog(t, p.URI(), since)
}

// writeUntilKilled runs the writers against p, SIGKILLs p once killAt
// inserts are acknowledged, and returns what each writer did.
func writeUntilKilled(t *testing.T, p *folioproc.Proc, round int) []tally {
	t.Helper()
	client := connect(t, p.URI())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked atomic.Int64
	enough := make(chan struct{})
	tallies := make([]tally, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			coll := client.Database(dbName).Collection(collFor(w))
			tl := &tallies[w]
			for tl.attempted < maxPerWriter && ctx.Err() == nil {
				tl.attempted++
				if _, err := coll.InsertOne(ctx, docFor(round, w, tl.attempted-1)); err != nil {
					tl.err = err
					return
				}
				tl.acked++
				if acked.Add(1) == killAt {
					close(enough)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-enough:
	case <-done:
		for w, tl := range tallies {
			t.Errorf("round %d: writer %d stopped after %v inserts acknowledged/sent: %v", round, w, tl, tl.err)
		}
		t.FailNow()
	}
	p.Kill()
	cancel()
	<-done
	t.Logf("round %d: SIGKILL after %d acknowledged inserts; acknowledged/sent per writer: %v", round, acked.Load(), tallies)
	return tallies
}
