package commands

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/query"
)

func init() {
	registerAdmin(listDatabasesCmd, listDatabasesSpec, "listDatabases")
}

// listDatabasesSpec declares listDatabases' fields, typed as
// list_databases.idl types them (nameOnly safeBool, authorizedDatabases
// bool).
// https://www.mongodb.com/docs/v7.0/reference/command/listDatabases/
var listDatabasesSpec = &argSpec{path: "listDatabases", fields: []argField{
	arg("filter", tDoc),
	arg("nameOnly", tBool),
	arg("authorizedDatabases", tStrictBool),
}}

func listDatabasesCmd(s *Service, r *Request) (bson.Raw, error) {
	filter, nameOnly := r.args.doc("filter"), r.args.bool("nameOnly")
	mayList, err := s.listableDatabases(r)
	if err != nil {
		return nil, err
	}
	f, err := compileCatalogFilter(filter)
	if err != nil {
		return nil, err
	}
	dbs := bson.A{}
	var total int64
	names := s.Engine.Databases()
	if s.Engine.IsOplog(engine.OplogDB, engine.OplogColl) && !slices.Contains(names, engine.OplogDB) {
		// local holds the oplog, as on a replica set member
		names = append(names, engine.OplogDB)
		slices.Sort(names)
	}
	for _, name := range names {
		if !mayList(name) {
			continue
		}
		var size int64
		d := bson.D{{Key: "name", Value: name}}
		if !nameOnly {
			size = s.dbDiskSize(name)
			empty := len(s.Engine.Collections(name)) == 0 && !s.Engine.IsOplog(name, engine.OplogColl)
			d = append(d, bson.E{Key: "sizeOnDisk", Value: size}, bson.E{Key: "empty", Value: empty})
		}
		matched, _, err := f.MatchErr(marshal(d))
		if err != nil {
			return nil, err
		}
		if matched {
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

// dbDiskSize is the disk space of db's collections and indexes (and of the
// oplog in local), as listDatabases reports it in sizeOnDisk: the store's
// estimates, read without scanning the data, as MongoDB reads its files'
// sizes.
func (s *Service) dbDiskSize(db string) int64 {
	var size int64
	for _, c := range s.Engine.Collections(db) {
		size += s.Engine.DiskSize(c)
	}
	if s.Engine.IsOplog(db, engine.OplogColl) {
		size += s.Engine.OplogDiskSize()
	}
	return size
}

// compileCatalogFilter parses the filter of listDatabases or
// listCollections as MongoDB's MatchExpressionParser::parse does with its
// default features: $expr and $jsonSchema, but no $where, $text or $near
// (BadValue). An $expr that fails on a database or collection fails the
// command (MatchErr).
func compileCatalogFilter(filter bson.Raw) (*query.Filter, error) {
	return query.CompileAllowed(filter, nil, nil, query.DefaultFeatures)
}
