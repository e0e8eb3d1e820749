package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// The floors: what a server cannot beat on this machine. ping is a driver
// round trip that does no work; pebble is the storage engine alone.

// ping sends {ping: 1} to the admin database.
type ping struct{ admin *mongo.Database }

func newPing(*Config) Workload { return &ping{} }

func (p *ping) Setup(_ context.Context, t *Target) error {
	p.admin = t.Client.Database("admin")
	return nil
}

func (p *ping) Worker(int) Worker {
	cmd := bson.D{{Key: "ping", Value: 1}}
	return func(ctx context.Context) (Result, error) {
		return Result{"ping", 1}, p.admin.RunCommand(ctx, cmd).Err()
	}
}

func (p *ping) Finish(context.Context) ([]string, error) { return nil, nil }

// pebbleFloor is YCSB-A on Pebble itself, configured as Folio configures
// it, in a temporary directory: 50% reads of a 1 KB value, 50% writes of
// one, each write its own batch, durable before it is acknowledged, as
// Folio commits a one-document write.
type pebbleFloor struct {
	cfg   *Config
	dir   string
	db    *pebble.DB
	value []byte
}

func newPebble(cfg *Config) Workload { return &pebbleFloor{cfg: cfg} }

// pebbleValueLen is the size of a value: a YCSB record.
const pebbleValueLen = ycsbFields * ycsbFieldLen

// Setup opens the store and loads cfg.Records keys without syncing.
func (p *pebbleFloor) Setup(context.Context, *Target) error {
	dir, err := os.MkdirTemp("", "folio-bench-pebble-")
	if err != nil {
		return err
	}
	p.dir = dir
	cache := pebble.NewCache(256 << 20) // pebblekv's default
	defer cache.Unref()
	po := &pebble.Options{Cache: cache, Logger: quietLogger{}}
	pebblekv.Tune(po)
	p.db, err = pebble.Open(dir, po)
	if err != nil {
		return err
	}
	p.value = randomPool(rand.New(rand.NewPCG(p.cfg.Seed, 0)), pebbleValueLen)
	for from := int64(0); from < p.cfg.Records; from += loadBatchSize {
		b := p.db.NewBatch()
		for i := from; i < min(from+loadBatchSize, p.cfg.Records); i++ {
			if err := b.Set([]byte(ycsbKey(i)), p.value, nil); err != nil {
				return errors.Join(err, b.Close())
			}
		}
		if err := errors.Join(b.Commit(pebble.NoSync), b.Close()); err != nil {
			return err
		}
	}
	return p.db.Flush()
}

func (p *pebbleFloor) Worker(i int) Worker {
	r := rand.New(rand.NewPCG(p.cfg.Seed, uint64(i)+1))
	keys := newScrambled()
	return func(context.Context) (Result, error) {
		key := []byte(ycsbKey(keys.next(r, p.cfg.Records)))
		if r.IntN(2) == 0 {
			v, closer, err := p.db.Get(key)
			if err != nil {
				return Result{"read", 1}, err
			}
			if len(v) != pebbleValueLen {
				err = errors.New("short value")
			}
			return Result{"read", 1}, errors.Join(err, closer.Close())
		}
		b := p.db.NewBatch()
		if err := b.Set(key, p.value, nil); err != nil {
			return Result{"write", 1}, err
		}
		// As Folio commits: the batch without waiting, then a wait for a
		// WAL sync, which concurrent writers share.
		err := errors.Join(b.Commit(pebble.NoSync), b.Close())
		if err == nil {
			err = p.db.LogData(nil, pebble.Sync)
		}
		return Result{"write", 1}, err
	}
}

// Finish closes and removes the store.
func (p *pebbleFloor) Finish(context.Context) ([]string, error) {
	var err error
	if p.db != nil {
		err = p.db.Close()
	}
	return nil, errors.Join(err, os.RemoveAll(p.dir))
}

// quietLogger drops Pebble's informational messages, which would interleave
// with the report, and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}

func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}

func (quietLogger) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
	os.Exit(1)
}
