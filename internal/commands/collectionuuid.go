package commands

import (
	"bytes"
	"errors"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// collectionUUIDField declares collectionUUID, the UUID a command expects
// its collection to have (MongoDB 6.0+, for cluster-to-cluster sync): find,
// aggregate, the write commands, createIndexes, dropIndexes, collMod, drop,
// renameCollection and shardCollection take it.
var collectionUUIDField = arg("collectionUUID", tUUID)

// checkCollectionUUID is MongoDB's checkCollectionUUIDMismatch for a
// command c that declares collectionUUID: when c gives one, db.name must be
// a collection with that UUID. A view (a time series collection
// included) never has one. It runs where MongoDB acquires the collection,
// before the command looks at whether the namespace exists or is a view.
func (s *Service) checkCollectionUUID(r *Request, c *cmdArgs, db, name string) error {
	if !c.given("collectionUUID") {
		return nil
	}
	_, want := c.value("collectionUUID").Binary()
	return s.expectUUID(r, db, name, want)
}

// checkAggregateUUID checks an aggregate's collectionUUID against the
// collection it runs on (not those of $lookup or $unionWith), as
// runAggregate does: a change stream cannot take one, nor a collectionless
// aggregate reading no collection; one that reads some checks its
// $cmd.aggregate namespace, which is no collection.
func (s *Service) checkAggregateUUID(r *Request, c *cmdArgs, a *aggregateArgs) error {
	if !c.given("collectionUUID") {
		return nil
	}
	coll := a.opts.Coll
	switch {
	case len(a.stages) > 0 && Name(a.stages[0]) == "$changeStream":
		return mongoerr.New(mongoerr.CollectionUUIDOnChangeStream, "collectionUUID is not supported for a change stream")
	case coll == "" && !readsCollections(c.value("pipeline").Array()):
		return mongoerr.New(mongoerr.CollectionUUIDWithoutCollection, "collectionUUID is not supported for a collectionless aggregation")
	case coll == "":
		coll = "$cmd.aggregate"
	}
	return s.checkCollectionUUID(r, c, r.DB, coll)
}

// readsCollections reports whether a pipeline involves other namespaces:
// a $lookup or $graphLookup from a collection, or a $unionWith, at any
// depth.
func readsCollections(p bson.RawArray) bool {
	errFound := errors.New("found")
	return eachStage(p, func(name string, spec bson.Raw) error {
		switch name {
		case "$unionWith":
			if spec == nil || spec.Lookup("coll").Type != 0 {
				return errFound
			}
		case "$lookup", "$graphLookup":
			if spec != nil && spec.Lookup("from").Type != 0 {
				return errFound
			}
		}
		return nil
	}) != nil
}

// checkDropUUID checks drop's collectionUUID as dropCollection does: a
// database without collections fails the check with its own message, and
// a time series collection checks it against its buckets collection, then
// refuses it.
func (s *Service) checkDropUUID(r *Request, name string, ts *tsColl) error {
	if !r.args.given("collectionUUID") {
		return nil
	}
	if ts != nil {
		if err := s.checkCollectionUUID(r, &r.args, r.DB, ts.buckets); err != nil {
			return err
		}
		return mongoerr.New(mongoerr.InvalidOptions, "The collectionUUID parameter cannot be passed when dropping a time-series collection")
	}
	err := s.checkCollectionUUID(r, &r.args, r.DB, name)
	if mongoerr.Is(err, mongoerr.CollectionUUIDMismatch) && len(s.Engine.Collections(r.DB)) == 0 {
		mongoerr.As(err).Msg = "Database does not exist"
	}
	return err
}

// checkRenameUUIDs checks renameCollection's expected UUIDs: its
// collectionUUID, the source's, and targetUUID (dropTarget given as a
// UUID), the target's, in that order, as renameCollection checks them
// after the names and before it looks at whether either is a view or
// exists. A rename between databases takes neither.
func (s *Service) checkRenameUUIDs(r *Request, fromDB, fromColl, toDB, toColl string, targetUUID []byte) error {
	if !r.args.given("collectionUUID") && targetUUID == nil {
		return nil
	}
	if err := engine.ValidateRename(fromDB, fromColl, toDB, toColl); err != nil {
		return err
	}
	if fromDB != toDB {
		return mongoerr.New(mongoerr.InvalidOptions, "Cannot provide an expected collection UUID when renaming between databases")
	}
	if err := s.checkCollectionUUID(r, &r.args, fromDB, fromColl); err != nil || targetUUID == nil {
		return err
	}
	return s.expectUUID(r, toDB, toColl, targetUUID)
}

// acquireWriteErrors are the write errors of inserting docs into a
// collection that cannot be acquired (a collectionUUID that did not
// match, a view, a refused creation): as MongoDB checks each document
// before it acquires the collection, a document that cannot be inserted
// fails with its own error and the others with the acquisition's; an
// ordered insert stops at the first.
func acquireWriteErrors(mismatch error, docs []bson.Raw, ordered bool) []engine.WriteError {
	var werrs []engine.WriteError
	for i, d := range docs {
		err := engine.CheckInsert(d)
		if err == nil {
			err = mismatch
		}
		werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.As(err)})
		if ordered {
			break
		}
	}
	return werrs
}

// expectUUID fails with CollectionUUIDMismatch unless db.name is a
// collection whose UUID is want. The error names the collection of db that
// has that UUID, if any, as actualCollection.
func (s *Service) expectUUID(r *Request, db, name string, want []byte) error {
	if u, ok := s.uuidOf(r, db, name); ok && bytes.Equal(u[:], want) {
		return nil
	}
	var actual any // null when no collection of db has the UUID
	if u, ok := s.uuidOf(r, db, engine.OplogColl); ok && bytes.Equal(u[:], want) {
		actual = engine.OplogColl
	}
	for _, c := range s.Engine.Collections(db) {
		if bytes.Equal(c.UUID[:], want) {
			actual = c.Name
		}
	}
	err := mongoerr.New(mongoerr.CollectionUUIDMismatch, "Collection UUID does not match that specified")
	err.Extra = bson.D{
		{Key: "db", Value: db},
		{Key: "collectionUUID", Value: bson.Binary{Subtype: bson.TypeBinaryUUID, Data: want}},
		{Key: "expectedCollection", Value: name},
		{Key: "actualCollection", Value: actual},
	}
	return err
}

// uuidOf is the UUID of collection db.name; false when there is no such
// collection (none, or a view).
func (s *Service) uuidOf(r *Request, db, name string) ([16]byte, bool) {
	if s.Engine.IsOplog(db, name) {
		u, _ := s.Engine.OplogInfo()
		return u, true
	}
	if c := s.Engine.CollectionIn(r.Txn, db, name); c != nil {
		return c.UUID, true
	}
	return [16]byte{}, false
}

// checkUUID is tUUID's check: the value is a UUID.
func checkUUID(path, field string, v bson.RawValue) error {
	if subtype, data := v.Binary(); subtype == bson.TypeBinaryUUID && len(data) == 16 {
		return nil // the path is for the message
	}
	_, err := uuidValue(path+"."+field, v)
	return err
}

// checkSHA256 is tSHA256's check: a generic binData (the IDL's subtype
// check) of SHA-256's length (SHA256Block::fromBinData).
func checkSHA256(path, field string, v bson.RawValue) error {
	subtype, data := v.Binary()
	if subtype != bson.TypeBinaryGeneric {
		return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong binData type '%s', expected type 'general'", path, field, binDataTypeName(subtype))
	}
	if len(data) != 32 {
		return mongoerr.New(mongoerr.UnsupportedFormat, "Unsupported SHA256Block hash length: %d", len(data))
	}
	return nil
}

// checkVariantUUID is tBoolOrUUID's check: a binData is a UUID.
func checkVariantUUID(_, _ string, v bson.RawValue) error {
	if v.Type != bson.TypeBinary {
		return nil
	}
	if st, data := v.Binary(); st != bson.TypeBinaryUUID || len(data) != 16 {
		return errInvalidUUID()
	}
	return nil
}

// errInvalidUUID is UUID::parse's error for a binData that is not a UUID.
func errInvalidUUID() error {
	return mongoerr.New(mongoerr.InvalidUUID, "uuid must be a 16-byte binary field with UUID (4) subtype")
}

// uuidValue reads a binData as the IDL's uuid type does: subtype 4 (else
// TypeMismatch naming field), 16 bytes (else InvalidUUID).
func uuidValue(field string, v bson.RawValue) ([]byte, error) {
	subtype, data := v.Binary()
	switch {
	case subtype != bson.TypeBinaryUUID:
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong binData type '%s', expected type 'UUID'", field, binDataTypeName(subtype))
	case len(data) != 16:
		return nil, errInvalidUUID()
	}
	return data, nil
}

// binDataTypeName names a binary subtype as MongoDB's IDL messages do
// (typeName(BinDataType)), or by its number.
func binDataTypeName(subtype byte) string {
	switch subtype {
	case bson.TypeBinaryGeneric:
		return "general"
	case bson.TypeBinaryFunction:
		return "function"
	case bson.TypeBinaryBinaryOld:
		return "byte(deprecated)"
	case bson.TypeBinaryUUIDOld:
		return "UUID(deprecated)"
	case bson.TypeBinaryUUID:
		return "UUID"
	case bson.TypeBinaryMD5:
		return "MD5"
	case bson.TypeBinaryEncrypted:
		return "encrypt"
	case bson.TypeBinaryColumn:
		return "column"
	case bson.TypeBinarySensitive:
		return "sensitive"
	case bson.TypeBinaryUserDefined:
		return "Custom"
	}
	return strconv.Itoa(int(subtype))
}
