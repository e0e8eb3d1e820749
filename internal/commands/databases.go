package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
)

func init() {
	registerAdmin(listDatabasesCmd, listDatabasesSpec, "listDatabases")
}

// listDatabasesSpec declares listDatabases' fields.
// https://www.mongodb.com/docs/v7.0/reference/command/listDatabases/
var listDatabasesSpec = &argSpec{path: "listDatabases", fields: []argField{
	arg("filter", tDoc),
	arg("nameOnly", tBool),
	arg("authorizedDatabases", tBool),
}}

func listDatabasesCmd(s *Service, r *Request) (bson.Raw, error) {
	filter, nameOnly := r.args.doc("filter"), r.args.bool("nameOnly")
	f, err := query.Compile(filter)
	if err != nil {
		return nil, err
	}
	dbs := bson.A{}
	var total int64
	mayList, err := s.listableDatabases(r)
	if err != nil {
		return nil, err
	}
	for _, name := range s.Engine.Databases() {
		if !mayList(name) {
			continue
		}
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
			d = append(d, bson.E{Key: "sizeOnDisk", Value: size}, bson.E{Key: "empty", Value: len(s.Engine.Collections(name)) == 0})
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

// dbSize is the disk space of db's collections and indexes, as
// listDatabases reports it in sizeOnDisk.
func (s *Service) dbSize(db string) (int64, error) {
	var size int64
	for _, c := range s.Engine.Collections(db) {
		st, err := s.Engine.Stats(c)
		if err != nil {
			return 0, err
		}
		size += st.StorageSize + st.TotalIndexSize()
	}
	return size, nil
}
