package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

func init() {
	registerAdmin(listDatabasesCmd, "listDatabases")
	register(dbStatsCmd, "dbStats")
	register(collStatsCmd, "collStats")
}

func listDatabasesCmd(s *Service, r *Request) (bson.Raw, error) {
	var filter bson.Raw
	var nameOnly bool
	err := eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "filter":
			filter, err = argDoc("listDatabases", key, v)
		case "nameOnly":
			nameOnly, err = argBool("listDatabases", key, v)
		case "authorizedDatabases":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	f, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	dbs := bson.A{}
	var total int64
	for _, name := range s.Engine.Databases() {
		var size int64
		if !nameOnly {
			st, err := s.dbSize(name)
			if err != nil {
				return nil, err
			}
			size = st
		}
		d := bson.D{{Key: "name", Value: name}}
		if !nameOnly {
			d = append(d, bson.E{Key: "sizeOnDisk", Value: size}, bson.E{Key: "empty", Value: size == 0})
		}
		if f.Match(marshal(d)) {
			dbs = append(dbs, d)
			total += size
		}
	}
	out := bson.D{{Key: "databases", Value: dbs}}
	if !nameOnly {
		out = append(out, bson.E{Key: "totalSize", Value: total}, bson.E{Key: "totalSizeMb", Value: total >> 20})
	}
	return marshal(out), nil
}

// dbSize is the total document bytes of db's collections.
func (s *Service) dbSize(db string) (int64, error) {
	var size int64
	for _, c := range s.Engine.Collections(db) {
		st, err := s.Engine.Stats(c)
		if err != nil {
			return 0, err
		}
		size += st.Size
	}
	return size, nil
}

func dbStatsCmd(s *Service, r *Request) (bson.Raw, error) {
	colls := s.Engine.Collections(r.DB)
	var objects, size, indexes int64
	for _, c := range colls {
		indexes += int64(len(c.Indexes()) + 1)
		st, err := s.Engine.Stats(c)
		if err != nil {
			return nil, err
		}
		objects += st.Count
		size += st.Size
	}
	var avg float64
	if objects > 0 {
		avg = float64(size) / float64(objects)
	}
	return marshal(bson.D{
		{Key: "db", Value: r.DB},
		{Key: "collections", Value: int64(len(colls))},
		{Key: "views", Value: int64(0)},
		{Key: "objects", Value: objects},
		{Key: "avgObjSize", Value: avg},
		{Key: "dataSize", Value: float64(size)},
		{Key: "storageSize", Value: float64(size)},
		{Key: "indexes", Value: indexes},
		{Key: "indexSize", Value: float64(0)},
		{Key: "totalSize", Value: float64(size)},
		{Key: "scaleFactor", Value: int64(1)},
	}), nil
}

func collStatsCmd(s *Service, r *Request) (bson.Raw, error) {
	name, err := collectionArg(r.Cmd)
	if err != nil {
		return nil, err
	}
	c := s.Engine.Collection(r.DB, name)
	if c == nil {
		return nil, mongoerr.New(mongoerr.NamespaceNotFound, "Collection [%s.%s] not found.", r.DB, name)
	}
	st, err := s.Engine.Stats(c)
	if err != nil {
		return nil, err
	}
	var avg int64
	if st.Count > 0 {
		avg = st.Size / st.Count
	}
	return marshal(bson.D{
		{Key: "ns", Value: r.DB + "." + name},
		{Key: "size", Value: st.Size},
		{Key: "count", Value: st.Count},
		{Key: "avgObjSize", Value: avg},
		{Key: "storageSize", Value: st.Size},
		{Key: "nindexes", Value: int32(len(c.Indexes()) + 1)},
		{Key: "totalIndexSize", Value: int64(0)},
		{Key: "indexSizes", Value: indexSizes(c)},
		{Key: "capped", Value: c.Options.Capped},
		{Key: "scaleFactor", Value: int32(1)},
	}), nil
}

// indexSizes lists every index of c by name; Folio does not measure index
// sizes separately, so each reports 0.
func indexSizes(c *engine.Collection) bson.D {
	d := bson.D{{Key: "_id_", Value: int64(0)}}
	for _, ix := range c.Indexes() {
		d = append(d, bson.E{Key: ix.Name, Value: int64(0)})
	}
	return d
}
