package engine

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
	"github.com/folio-db/folio/internal/storage/testkv"
)

// TestOplogSkipsUnreplicated: the oplog logs no write nor command of the
// local database or of a database's system.profile, as MongoDB's
// NamespaceString::isReplicated, and logs those of any other namespace
// (the rows on test.c and test.system.js).
func TestOplogSkipsUnreplicated(t *testing.T) {
	kv := testkv.Open(t)
	e, err := Open(kv, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	if e.oplog == nil {
		t.Skip("the store keeps no oplog")
	}
	insert := func(db, coll string) func() error {
		return func() error {
			_, _, err := e.Insert(db, coll, []bson.Raw{ext(t, `{"_id": 1, "a": 1}`)}, true, WriteOptions{})
			return err
		}
	}
	update := func(db, coll string) func() error {
		return func() error {
			_, err := e.Update(db, coll, UpdateSpec{Filter: ext(t, `{"_id": 1}`), Update: ext(t, `{"$inc": {"a": 1}}`)})
			return err
		}
	}
	remove := func(db, coll string) func() error {
		return func() error {
			_, err := e.Delete(db, coll, ext(t, `{"_id": 1}`), 1, bson.RawValue{}, WriteOptions{})
			return err
		}
	}
	create := func(db, coll string) func() error {
		return func() error { return e.CreateCollection(db, coll, CollectionOptions{}) }
	}
	createIndex := func(db, coll string) func() error {
		return func() error {
			_, err := e.CreateIndexes(db, coll, []IndexSpec{{Key: ext(t, `{"a": 1}`), ExpireAfter: -1}}, nil)
			return err
		}
	}
	dropIndex := func(db, coll string) func() error {
		return func() error {
			_, err := e.DropIndexes(db, coll, []string{"a_1"}, nil)
			return err
		}
	}
	drop := func(db, coll string) func() error {
		return func() error {
			_, err := e.DropCollection(db, coll)
			return err
		}
	}
	rows := []struct {
		name   string
		do     func() error
		logged bool
	}{
		{"create local.y", create("local", "y"), false},
		{"insert local.x (implicit create)", insert("local", "x"), false},
		{"update local.x", update("local", "x"), false},
		{"createIndexes local.x", createIndex("local", "x"), false},
		{"dropIndexes local.x", dropIndex("local", "x"), false},
		{"delete local.x", remove("local", "x"), false},
		{"drop local.x", drop("local", "x"), false},
		{"rename local.y", func() error { return e.RenameCollection("local", "y", "local", "z", false) }, false},
		{"rename local.z to test.z refused", func() error {
			return wantCode(e.RenameCollection("local", "z", "test", "z", false), mongoerr.IllegalOperation)
		}, false},
		{"rename local.none to test.z: no source", func() error {
			return wantCode(e.RenameCollection("local", "none", "test", "z", false), mongoerr.NamespaceNotFound)
		}, false},
		{"transaction creating and writing local.t", func() error {
			txn, err := e.Begin()
			if err != nil {
				return err
			}
			if _, _, err := e.Insert("local", "t", []bson.Raw{ext(t, `{"_id": 1}`)}, true, WriteOptions{Txn: txn}); err != nil {
				return err
			}
			return txn.Commit()
		}, false},
		{"dropDatabase local", func() error { return e.DropDatabase("local") }, false},
		{"create test.system.profile", create("test", ProfileCollection), false},
		{"profile in test.system.profile", func() error { return e.AppendProfile("test", ext(t, `{"op": "query"}`)) }, false},
		{"drop test.system.profile", drop("test", ProfileCollection), false},
		{"insert test.c", insert("test", "c"), true},
		{"rename test.c to local.c refused", func() error {
			return wantCode(e.RenameCollection("test", "c", "local", "c", false), mongoerr.IllegalOperation)
		}, false},
		{"update test.c", update("test", "c"), true},
		{"createIndexes test.c", createIndex("test", "c"), true},
		{"delete test.c", remove("test", "c"), true},
		{"insert test.system.js", insert("test", "system.js"), true},
		{"drop test.c", drop("test", "c"), true},
	}
	if _, err := e.MaintainOplog(); err != nil { // TiKV's entries into place
		t.Fatal(err)
	}
	var from uint64 // after the "initiating set" no-op
	if err := e.ReadOplog(0, ^uint64(0), func(stamp uint64, _ oplog.Stored) (bool, error) {
		from = stamp + 1
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := r.do(); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if _, err := e.MaintainOplog(); err != nil { // TiKV's entries into place
			t.Fatal(err)
		}
		var logged []string
		if err := e.ReadOplog(from, ^uint64(0), func(stamp uint64, s oplog.Stored) (bool, error) {
			from = stamp + 1
			logged = append(logged, s.Entry().String())
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		if r.logged != (len(logged) > 0) {
			t.Errorf("%s: logged %v, want logged %v", r.name, logged, r.logged)
		}
	}
	// the unlogged writes are stored all the same, and kept
	if err := insert("local", "x")(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e, err = Open(kv, Options{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.Count("local", "x", FindOptions{}); err != nil || n != 1 {
		t.Fatalf("local.x holds %d documents after a restart (%v), want 1", n, err)
	}
}

// wantCode is nil when err has code, and an error saying what err is
// otherwise.
func wantCode(err error, code mongoerr.Code) error {
	if err != nil && mongoerr.As(err).Code == code {
		return nil
	}
	return fmt.Errorf("got %v, want code %d", err, code)
}
