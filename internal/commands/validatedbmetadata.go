package commands

import (
	"bytes"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(validateDBMetadataCmd, validateDBMetadataSpec, "validateDBMetadata")
}

// validateDBMetadataSpec declares validateDBMetadata's fields (MongoDB
// 5.0+, validate_db_metadata.idl); its first field's value is ignored.
// https://www.mongodb.com/docs/v7.0/reference/command/validateDBMetadata/
var validateDBMetadataSpec = &argSpec{path: "validateDBMetadata", fields: []argField{
	arg("db", tString),
	arg("collection", tString),
	required("apiParameters", tDoc),
}, subs: []*argSpec{validateDBMetadataAPISpec}}

// validateDBMetadataAPISpec declares apiParameters: the API parameters the
// stored metadata is checked against.
var validateDBMetadataAPISpec = &argSpec{path: "validateDBMetadata.apiParameters", fields: []argField{
	required("version", tString),
	arg("strict", tOptionalBool),
	ignore("deprecationErrors", tOptionalBool, "nothing Folio stores is deprecated in API version 1, so there is nothing for it to report"),
}}

// metadataErrorsLimit bounds the reply's errors as MongoDB does: past it,
// the command stops and sets hasMoreErrors.
const metadataErrorsLimit = 16 * 1024 * 1024

// validateDBMetadataCmd reports the stored metadata that the given API
// version would refuse, as MongoDB does: with apiParameters {version: "1",
// strict: true}, text and sparse indexes (MongoDB's
// isIndexAllowedInAPIVersion1) and views whose pipeline uses a stage outside
// version 1. Without db it looks at every database; without collection,
// at every view then every collection of each, collections in UUID order
// (MongoDB's catalog order). A name that is no collection or view is no
// error; an invalid database name is InvalidNamespace.
func validateDBMetadataCmd(s *Service, r *Request) (bson.Raw, error) {
	api, err := parseSub(r.args.doc("apiParameters"), validateDBMetadataAPISpec)
	if err != nil {
		return nil, err
	}
	check := metadataCheck{strictV1: api.str("version") == "1" && api.bool("strict"), errors: bson.A{}}
	dbs := s.Engine.Databases()
	if r.args.has("db") {
		db := r.args.str("db")
		if err := engine.ValidateLookedUpDBName(db); err != nil {
			return nil, err
		}
		dbs = []string{db}
	}
	for _, db := range dbs {
		if err := mongoerr.Interruption(r.Ctx); err != nil {
			return nil, err
		}
		var more bool
		if r.args.has("collection") {
			more, err = check.namespace(s, r, db, r.args.str("collection"))
		} else {
			more, err = check.database(s, r, db)
		}
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
	}
	reply := bson.D{{Key: "apiVersionErrors", Value: check.errors}}
	if check.truncated {
		reply = append(reply, bson.E{Key: "hasMoreErrors", Value: true})
	}
	return marshal(reply), nil
}

// metadataCheck gathers validateDBMetadata's errors.
type metadataCheck struct {
	strictV1  bool
	errors    bson.A
	size      int
	truncated bool
}

// database checks db's views then its collections; false: stop.
func (m *metadataCheck) database(s *Service, r *Request, db string) (bool, error) {
	views, err := s.views(r, db)
	if err != nil {
		return false, err
	}
	for _, v := range views {
		if !m.view(db, v) {
			return false, nil
		}
	}
	colls := s.Engine.Collections(db)
	slices.SortFunc(colls, func(a, b *engine.Collection) int { return bytes.Compare(a.UUID[:], b.UUID[:]) })
	for _, c := range colls {
		if !m.collection(c) {
			return false, nil
		}
	}
	return true, nil
}

// namespace checks db.name, a view or a collection; false: stop. In a
// database that exists, a name that cannot be a collection's fails with
// InvalidNamespace, as MongoDB's lookup of the namespace does.
func (m *metadataCheck) namespace(s *Service, r *Request, db, name string) (bool, error) {
	if name == "" || name[0] == '.' || strings.IndexByte(name, 0) >= 0 {
		if len(s.Engine.Collections(db)) == 0 {
			return true, nil
		}
		return false, mongoerr.New(mongoerr.InvalidNamespace, "Namespace %s.%s is not a valid collection name", db, printableName(name))
	}
	if c := s.Engine.Collection(db, name); c != nil {
		return m.collection(c), nil
	}
	v, err := s.lookupView(r, db, name)
	if err != nil || v == nil {
		return err == nil, err
	}
	return m.view(db, v), nil
}

// view reports a pipeline that apiStrict refuses.
func (m *metadataCheck) view(db string, v *viewDef) bool {
	if !m.strictV1 {
		return true
	}
	if err := checkAPIStrictStages(v.pipeline); err != nil {
		return m.add(db+"."+v.name, mongoerr.As(err).Msg)
	}
	return true
}

// collection reports c's indexes that API version 1 does not allow: text
// and sparse ones, in the order of their creation.
func (m *metadataCheck) collection(c *engine.Collection) bool {
	if !m.strictV1 {
		return true
	}
	for _, ix := range slices.Concat(c.Indexes(), c.Building()) {
		if ix.Sparse || ix.IsText() {
			if !m.add(c.DB+"."+c.Name, "The index with name "+ix.Name+" is not allowed in API version 1.") {
				return false
			}
		}
	}
	return true
}

// add appends an APIStrictError on ns, unless the reply would pass its
// bound: then it records that there are more and returns false.
func (m *metadataCheck) add(ns, msg string) bool {
	e := bson.D{
		{Key: "ns", Value: ns},
		{Key: "code", Value: int32(mongoerr.APIStrictError)},
		{Key: "codeName", Value: mongoerr.APIStrictError.Name()},
		{Key: "errmsg", Value: msg},
	}
	// the element's size, and room for its array index and type byte
	m.size += len(marshal(e)) + 15
	if m.size >= metadataErrorsLimit {
		m.truncated = true
		return false
	}
	m.errors = append(m.errors, e)
	return true
}
