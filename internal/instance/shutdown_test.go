package instance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/storage/pebblekv"
)

// fullDisk injects ENOSPC into every write while on, as a filesystem that
// has filled up does; reads and syncs go on.
type fullDisk struct{ on atomic.Bool }

func (d *fullDisk) MaybeError(op errorfs.Op) error {
	if !d.on.Load() {
		return nil
	}
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpLink, errorfs.OpRename, errorfs.OpReuseForWrite,
		errorfs.OpMkdirAll, errorfs.OpFileWrite, errorfs.OpFileWriteAt:
		return syscall.ENOSPC
	}
	return nil
}

func (d *fullDisk) String() string { return "full disk" }

// copyDir copies the regular files of src into a new directory: the data
// directory as a crash would leave it.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == "LOCK" || strings.HasPrefix(e.Name(), "folio.lock") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestShutdownOnFullDisk checks that a shutdown with a write waiting for
// disk space (the store retries it until space is freed) ends within its
// grace period plus a second, without crashing Pebble by failing the
// write, reporting that storage was left open; journaled writes acknowledged
// before are found on the next start. Both with an operation still running
// (a client's journaled insert) and without (a write of the engine's own).
func TestShutdownOnFullDisk(t *testing.T) {
	for _, viaClient := range []bool{false, true} {
		disk := &fullDisk{}
		dir := t.TempDir()
		in, err := Start(Config{Addr: "127.0.0.1:0", DBPath: dir, fs: errorfs.Wrap(vfs.Default, disk)})
		if err != nil {
			t.Fatal(err)
		}
		doc := func(id string) []bson.Raw {
			b, _ := bson.Marshal(bson.D{{Key: "_id", Value: id}})
			return []bson.Raw{b}
		}
		if _, _, err := in.eng.Insert("db", "c", doc("before"), true, engine.WriteOptions{Journal: true}); err != nil {
			t.Fatal(err)
		}
		disk.on.Store(true)
		// Left on: the writes left waiting never reach the disk, and the
		// store left open does nothing more.
		stuck := make(chan error, 1)
		if viaClient {
			c, err := mongo.Connect(options.Client().ApplyURI(in.URI()).SetDirect(true))
			if err != nil {
				t.Fatal(err)
			}
			coll := c.Database("db").Collection("c", options.Collection().SetWriteConcern(writeconcern.Journaled()))
			go func() {
				_, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: "stuck"}})
				stuck <- err
			}()
		} else {
			go func() {
				_, _, err := in.eng.Insert("db", "c", doc("stuck"), true, engine.WriteOptions{Journal: true})
				stuck <- err
			}()
		}
		deadline := time.Now().Add(10 * time.Second)
		for !in.kv.(*pebblekv.DB).DiskFull() {
			if time.Now().After(deadline) {
				t.Fatal("the write does not wait for space")
			}
			time.Sleep(5 * time.Millisecond)
		}
		const grace = 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		start := time.Now()
		err = in.Close(ctx)
		took := time.Since(start)
		cancel()
		t.Logf("client op %v: shutdown took %v", viaClient, took)
		if took > grace+time.Second {
			t.Errorf("client op %v: shutdown took %v, want at most %v", viaClient, took, grace+time.Second)
		}
		if err == nil || !strings.Contains(err.Error(), "the disk is full") {
			t.Errorf("client op %v: shutdown error %v, want one saying the disk is full", viaClient, err)
		}
		select {
		case err := <-stuck:
			if !viaClient {
				t.Errorf("the waiting write returned %v on a full disk", err)
			}
		default:
		}
		// The next start finds the journaled write.
		again, err := Start(Config{Addr: "127.0.0.1:0", DBPath: copyDir(t, dir)})
		if err != nil {
			t.Fatal(err)
		}
		cur, err := again.eng.Find("db", "c", engine.FindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for {
			d, err := cur.Next()
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				break
			}
			if d.Lookup("_id").StringValue() == "before" {
				found = true
			}
		}
		cur.Close()
		if !found {
			t.Errorf("client op %v: the journaled write is lost", viaClient)
		}
		if err := again.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
}
