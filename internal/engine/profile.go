package engine

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// ProfileCollection is the collection of each database where the profiler
// records operations.
const ProfileCollection = "system.profile"

// AdviseDB and AdviseCollection name where the schema advisor keeps its
// observations (package instance): a collection of the server's own
// (PutOwn) in local, MongoDB's database of a member's own state, which the
// oplog does not log (IsReplicated) and a whole-server mongodump leaves
// out, as it does every local.system.* collection even when dumping local.
const (
	AdviseDB         = "local"
	AdviseCollection = "system.advise"
)

// LegacyAdviseDB is where builds before local.system.advise kept the
// advisor's observations (admin.system.advise), which mongodump dumped
// with admin and mongorestore then failed to insert over the running
// server's; package instance moves them at startup.
const LegacyAdviseDB = "admin"

// DefaultProfileSize is the size of a system.profile the profiler creates:
// MongoDB's 1 MB. A user may create it larger (capped) while profiling is
// off.
const DefaultProfileSize = 1 << 20

// userWritable refuses the document writes of commands to a database's
// system.profile, which only the profiler writes, as MongoDB does, to
// the oplog, which the engine keeps outside its catalog, and to a system
// collection a client may not create (the server's own, such as
// local.system.advise), as MongoDB's userAllowedWriteNS refuses it with
// userAllowedCreateNS's error.
func (e *Engine) userWritable(db, coll string) error {
	switch {
	case coll == ProfileCollection:
		return mongoerr.New(mongoerr.InvalidNamespace, "cannot write to '%s.%s'", db, coll)
	case e.IsOplog(db, coll):
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support writing to %s.%s: the server alone writes its oplog", db, coll)
	}
	return clientSystemNS(db, coll)
}

// clientSystemNS refuses, as MongoDB's userAllowedWriteNS does with
// userAllowedCreateNS's error, a client's write (documents or indexes) to
// a system collection clients may not create, such as the server's own
// local.system.advise.
func clientSystemNS(db, coll string) error {
	if strings.HasPrefix(coll, "system.") {
		return ValidateCollName(db, coll)
	}
	return nil
}

// PutOwn stores doc in db.coll, a collection of the server's own that no
// client may create or write (such as local.system.advise), replacing the
// document of doc's _id or inserting it, and creating the collection when
// missing. Its changes are logged as any of db's.
func (e *Engine) PutOwn(db, coll string, doc bson.Raw) error {
	if e.cat.get(db, coll) == nil {
		e.cat.mu.Lock()
		var err error
		if e.cat.colls[nsKey(db, coll)] == nil {
			_, err = e.createLocked(db, coll, CollectionOptions{}, nil, true)
		}
		e.cat.mu.Unlock()
		if err != nil {
			return err
		}
	}
	filter, err := bson.Marshal(bson.D{{Key: "_id", Value: doc.Lookup("_id")}})
	if err != nil {
		return err
	}
	_, err = e.update(db, coll, UpdateSpec{Filter: filter, Update: doc, Upsert: true}, false)
	return err
}

// CreateProfileCollection makes db's system.profile, capped at
// DefaultProfileSize, unless it exists; one that exists uncapped fails
// with NamespaceExists, as MongoDB's createProfileCollection does.
func (e *Engine) CreateProfileCollection(db string) error {
	if c := e.cat.get(db, ProfileCollection); c != nil {
		if c.capped == nil {
			return mongoerr.New(mongoerr.NamespaceExists, "%s.%s exists but isn't capped", db, ProfileCollection)
		}
		return nil
	}
	err := e.CreateCollection(db, ProfileCollection, CollectionOptions{Capped: true, Size: DefaultProfileSize})
	if err != nil && mongoerr.As(err).Code != mongoerr.NamespaceExists {
		return err
	}
	return nil
}

// AppendProfile records entry in db's system.profile, creating it when it
// is missing (CreateProfileCollection). The write is outside any
// transaction and is not logged in the oplog (MongoDB does not replicate
// the profiler's collection).
func (e *Engine) AppendProfile(db string, entry bson.Raw) error {
	if e.cat.get(db, ProfileCollection) == nil {
		if err := e.CreateProfileCollection(db); err != nil {
			return err
		}
	}
	_, werrs, err := e.insert(db, ProfileCollection, []bson.Raw{entry}, true, WriteOptions{})
	if err == nil && len(werrs) > 0 {
		err = werrs[0].Err
	}
	return err
}
