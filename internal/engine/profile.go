package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// ProfileCollection is the collection of each database where the profiler
// records operations.
const ProfileCollection = "system.profile"

// AdviseCollection is the admin collection where the schema advisor keeps
// its observations (package instance): Folio's own, never logged in the
// oplog.
const AdviseCollection = "system.advise"

// DefaultProfileSize is the size of a system.profile the profiler creates:
// MongoDB's 1 MB. A user may create it larger (capped) while profiling is
// off.
const DefaultProfileSize = 1 << 20

// userWritable refuses the document writes of commands to a database's
// system.profile, which only the profiler writes, as MongoDB does, and to
// the oplog, which the engine keeps outside its catalog.
func (e *Engine) userWritable(db, coll string) error {
	switch {
	case coll == ProfileCollection:
		return mongoerr.New(mongoerr.InvalidNamespace, "cannot write to '%s.%s'", db, coll)
	case e.IsOplog(db, coll):
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support writing to %s.%s: the server alone writes its oplog", db, coll)
	}
	return nil
}

// AppendProfile records entry in db's system.profile, creating it capped
// at DefaultProfileSize when it is missing. The write is outside any
// transaction and is not logged in the oplog (MongoDB does not replicate
// the profiler's collection).
func (e *Engine) AppendProfile(db string, entry bson.Raw) error {
	if e.cat.get(db, ProfileCollection) == nil {
		err := e.CreateCollection(db, ProfileCollection, CollectionOptions{Capped: true, Size: DefaultProfileSize})
		if err != nil && mongoerr.As(err).Code != mongoerr.NamespaceExists {
			return err
		}
	}
	_, werrs, err := e.insert(db, ProfileCollection, []bson.Raw{entry}, true, WriteOptions{})
	if err == nil && len(werrs) > 0 {
		err = werrs[0].Err
	}
	return err
}
