package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// TestInterrupt checks that every read and multi-document write stops with
// its operation context's interruption: the cause the context was cancelled
// with (killOp's Interrupted, shutdown's InterruptedAtShutdown), or
// MaxTimeMSExpired for a passed deadline, and that a write stopped midway
// keeps the documents it already changed.
func TestInterrupt(t *testing.T) {
	const n = 256
	killed := func() context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(mongoerr.New(mongoerr.Interrupted, "operation was interrupted"))
		return ctx
	}
	expired := func() context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		t.Cleanup(cancel)
		return ctx
	}
	readAll := func(cur Cursor, err error) error {
		for err == nil {
			var doc bson.Raw
			if doc, err = cur.Next(); doc == nil && err == nil {
				return nil
			}
		}
		return err
	}
	ops := []struct {
		name string
		run  func(e *Engine, ctx context.Context) error
	}{
		{"find", func(e *Engine, ctx context.Context) error {
			return readAll(e.Find("test", "c", FindOptions{Ctx: ctx}))
		}},
		{"sorted find", func(e *Engine, ctx context.Context) error {
			return readAll(e.Find("test", "c", FindOptions{Ctx: ctx, Sort: ext(t, `{"x": 1}`)}))
		}},
		{"count", func(e *Engine, ctx context.Context) error {
			_, err := e.Count("test", "c", FindOptions{Ctx: ctx})
			return err
		}},
		{"distinct", func(e *Engine, ctx context.Context) error {
			_, err := e.Distinct("test", "c", "x", FindOptions{Ctx: ctx})
			return err
		}},
		{"multi update", func(e *Engine, ctx context.Context) error {
			_, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{}`), Update: ext(t, `{"$set": {"y": 1}}`), Multi: true, WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}},
		{"multi delete", func(e *Engine, ctx context.Context) error {
			_, err := e.Delete("test", "c", ext(t, `{}`), 0, bson.RawValue{}, WriteOptions{Ctx: ctx})
			return err
		}},
		{"findAndModify", func(e *Engine, ctx context.Context) error {
			_, err := e.FindAndModify("test", "c", FindAndModifySpec{Filter: ext(t, `{"x": -1}`), Update: ext(t, `{"$set": {"y": 1}}`), WriteOptions: WriteOptions{Ctx: ctx}})
			return err
		}},
		{"insert", func(e *Engine, ctx context.Context) error {
			_, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": -1}`)}, true, WriteOptions{Ctx: ctx})
			return err
		}},
	}
	causes := []struct {
		name string
		ctx  func() context.Context
		want mongoerr.Code
	}{
		{"killed", killed, mongoerr.Interrupted},
		{"maxTimeMS", expired, mongoerr.MaxTimeMSExpired},
	}
	for _, op := range ops {
		for _, c := range causes {
			t.Run(op.name+"/"+c.name, func(t *testing.T) {
				e := newTestEngine(t)
				var docs []bson.Raw
				for i := range n {
					docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "x": %d}`, i, i)))
				}
				if _, _, err := e.Insert("test", "c", docs, true, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := op.run(e, c.ctx()); !mongoerr.Is(err, c.want) {
					t.Fatalf("err %v, want %s", err, c.want.Name())
				}
				if left, err := e.Count("test", "c", FindOptions{}); err != nil || left != n {
					t.Fatalf("%d documents left (%v), want %d", left, err, n)
				}
				if err := op.run(e, context.Background()); err != nil {
					t.Fatalf("uninterrupted: %v", err)
				}
			})
		}
	}
}

// endsAfter is a context that ends, killed, at its checks-th look.
type endsAfter struct {
	context.Context
	checks int
}

func (c *endsAfter) Err() error {
	if c.checks--; c.checks < 0 {
		return mongoerr.New(mongoerr.Interrupted, "operation was interrupted")
	}
	return nil
}

// TestInterruptMidway checks that an update killed while it runs stops
// at the next document, and that those
// updated stay updated, as MongoDB leaves a multi-update interrupted by
// killOp or maxTimeMS partly applied.
func TestInterruptMidway(t *testing.T) {
	e := newTestEngine(t)
	const n = 1000
	var docs []bson.Raw
	for i := range n {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d}`, i)))
	}
	if _, _, err := e.Insert("test", "c", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx := &endsAfter{Context: context.Background(), checks: 100}
	upd := UpdateSpec{Filter: ext(t, `{}`), Update: ext(t, `{"$inc": {"v": 1}}`), Multi: true, WriteOptions: WriteOptions{Ctx: ctx}}
	if _, err := e.Update("test", "c", upd); !mongoerr.Is(err, mongoerr.Interrupted) {
		t.Fatalf("err %v, want Interrupted", err)
	}
	updated, _ := e.Count("test", "c", FindOptions{Filter: ext(t, `{"v": 1}`)})
	rest, _ := e.Count("test", "c", FindOptions{Filter: ext(t, `{"v": {"$exists": false}}`)})
	// The context ends at its 100th look: one per document, and one per
	// retry of a write that conflicted (FOLIO_TEST_CONFLICTS).
	if updated == 0 || updated > 100 || rest != n-updated {
		t.Fatalf("%d updated + %d untouched, want at most 100 (100 without conflicts) of %d", updated, rest, n)
	}
}

// TestInterruptSkippedKeys checks that an index scan passing over keys
// that fail the bounds of a later field (so that no document reaches the
// scan-and-match loop) still stops when its operation ends.
func TestInterruptSkippedKeys(t *testing.T) {
	e := newTestEngine(t)
	mustCreateIndex(t, e, "k", `{"a": 1, "b": 1}`, false)
	var docs []bson.Raw
	for i := range 1000 {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "a": %d, "b": 0}`, i, i)))
	}
	if _, _, err := e.Insert("test", "k", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx := &endsAfter{Context: context.Background(), checks: 10}
	cur, err := e.Find("test", "k", FindOptions{Filter: ext(t, `{"a": {"$gte": 0}, "b": 5}`), Hint: ext(t, `{"h": {"a": 1, "b": 1}}`).Lookup("h"), Ctx: ctx})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if doc, err := cur.Next(); !mongoerr.Is(err, mongoerr.Interrupted) {
		t.Fatalf("Next = %v, %v; want Interrupted", doc, err)
	}
}

// TestInterruptWaitForTransaction checks that a write waiting for an open
// transaction's intent on its document stops when its operation ends (here
// its maxTimeMS), instead of waiting for the transaction.
func TestInterruptWaitForTransaction(t *testing.T) {
	e := newTestEngine(t)
	if _, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 1}`)}, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	txn := mustBegin(t, e)
	defer txn.Abort()
	set := func(wo WriteOptions) error {
		_, err := e.Update("test", "c", UpdateSpec{Filter: ext(t, `{"_id": 1}`), Update: ext(t, `{"$set": {"x": 1}}`), WriteOptions: wo})
		return err
	}
	if err := set(WriteOptions{Txn: txn}); err != nil {
		t.Fatal(err)
	}
	for _, write := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"update", func(ctx context.Context) error { return set(WriteOptions{Ctx: ctx}) }},
		{"delete", func(ctx context.Context) error {
			_, err := e.Delete("test", "c", ext(t, `{"_id": 1}`), 1, bson.RawValue{}, WriteOptions{Ctx: ctx})
			return err
		}},
		{"insert", func(ctx context.Context) error {
			_, _, err := e.Insert("test", "c", []bson.Raw{ext(t, `{"_id": 1}`)}, true, WriteOptions{Ctx: ctx})
			return err
		}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := write.run(ctx)
		cancel()
		if !mongoerr.Is(err, mongoerr.MaxTimeMSExpired) {
			t.Errorf("%s waiting for a transaction past its maxTimeMS: %v, want MaxTimeMSExpired", write.name, err)
		}
	}
}

// TestInterruptIndexBuild checks that an index build its progress callback
// stops (the createIndexes operation was killed) fails with that error,
// leaves no index and no entry behind, and that the same index then builds.
func TestInterruptIndexBuild(t *testing.T) {
	e := newTestEngine(t)
	var docs []bson.Raw
	for i := range 3 * indexBuildBatch {
		docs = append(docs, ext(t, fmt.Sprintf(`{"_id": %d, "v": %d}`, i, i%7)))
	}
	if _, _, err := e.Insert("test", "b", docs, true, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := []IndexSpec{{Key: ext(t, `{"v": 1}`), ExpireAfter: -1}}
	_, err := e.CreateIndexes("test", "b", spec, func(done, _ int64) error {
		if done >= indexBuildBatch {
			return mongoerr.New(mongoerr.Interrupted, "operation was interrupted")
		}
		return nil
	})
	if !mongoerr.Is(err, mongoerr.Interrupted) {
		t.Fatalf("stopped build: %v, want Interrupted", err)
	}
	c := e.Collection("test", "b")
	if n := len(c.Indexes()); n != 0 {
		t.Fatalf("%d indexes after a stopped build, want none", n)
	}
	lo := []byte{spaceIndex}
	lo = binary.BigEndian.AppendUint32(lo, c.ID)
	it, err := e.kv.NewIter(lo, keyenc.PrefixEnd(lo))
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
		t.Fatalf("index entry %x left by a stopped build", it.Key())
	}
	it.Close()
	if _, err := e.CreateIndexes("test", "b", spec, nil); err != nil {
		t.Fatal(err)
	}
	mustValidate(t, e, "b")
}
