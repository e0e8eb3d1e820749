package commands

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(insertCmd, "insert")
	register(updateCmd, "update")
	register(deleteCmd, "delete")
}

// writeOptions are the transaction and write concern of a write command:
// the write must be durable when acknowledged if its write concern asks
// for the journal (j: true) or a majority, which on one node is the same.
func writeOptions(r *Request) engine.WriteOptions {
	wo := engine.WriteOptions{Txn: r.Txn}
	if wc, err := r.Cmd.LookupErr("writeConcern"); err == nil {
		if doc, ok := wc.DocumentOK(); ok {
			j, _ := doc.Lookup("j").BooleanOK()
			w, _ := doc.Lookup("w").StringValueOK()
			wo.Journal = j || w == "majority"
		}
	}
	return wo
}

// writeErrorDoc is one entry of a write reply's writeErrors.
func writeErrorDoc(we engine.WriteError) bson.D {
	d := bson.D{
		{Key: "index", Value: int32(we.Index)},
		{Key: "code", Value: int32(we.Err.Code)},
		{Key: "errmsg", Value: we.Err.Msg},
	}
	return append(d, we.Err.Extra...)
}

// writeReply is the reply of insert, update and delete in MongoDB 7.0's
// order (WriteCommandReplyBase first): n, writeErrors when any statement
// failed, then the command-specific fields.
func writeReply(n int64, werrs []engine.WriteError, extra ...bson.E) bson.Raw {
	d := bson.D{{Key: "n", Value: int32(n)}}
	if len(werrs) > 0 {
		arr := make(bson.A, len(werrs))
		for i, we := range werrs {
			arr[i] = writeErrorDoc(we)
		}
		d = append(d, bson.E{Key: "writeErrors", Value: arr})
	}
	d = append(d, extra...)
	return marshal(d)
}

// docsArg reads an array of documents (insert's documents, update's
// updates, delete's deletes).
func docsArg(cmd, field string, v bson.RawValue) ([]bson.Raw, error) {
	if v.Type != bson.TypeArray {
		return nil, wrongType(cmd, field, v, "array")
	}
	vals, err := v.Array().Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid array: %v", err)
	}
	docs := make([]bson.Raw, len(vals))
	for i, d := range vals {
		if d.Type != bson.TypeEmbeddedDocument {
			return nil, wrongType(cmd, field+"."+strconv.Itoa(i), d, "object")
		}
		docs[i] = d.Document()
	}
	return docs, nil
}

// batchArgs are the fields insert, update and delete share.
type batchArgs struct {
	docs    []bson.Raw
	ordered bool
}

// parseBatch reads a write command's common fields; docsField names its
// statements array.
func parseBatch(r *Request, cmdName, docsField string) (string, batchArgs, error) {
	coll, err := collectionArg(r.Cmd)
	if err != nil {
		return "", batchArgs{}, err
	}
	a := batchArgs{ordered: true}
	seen := false
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case docsField:
			a.docs, err = docsArg(cmdName, key, v)
			seen = true
		case "ordered":
			a.ordered, err = argBool(cmdName, key, v)
		case "let", "stmtId", "stmtIds":
		default:
			return false, nil
		}
		return true, err
	})
	if err == nil && !seen {
		err = mongoerr.New(mongoerr.Code(40414), "BSON field '%s.%s' is missing but a required field", cmdName, docsField)
	}
	if err == nil && len(a.docs) > maxWriteBatchSize {
		err = mongoerr.New(mongoerr.InvalidLength, "Write batch sizes must be between 1 and %d. Got %d operations.", maxWriteBatchSize, len(a.docs))
	}
	return coll, a, err
}

func insertCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, a, err := parseBatch(r, "insert", "documents")
	if err != nil {
		return nil, err
	}
	s.Ops.Insert.Add(int64(len(a.docs)))
	n, werrs, err := s.Engine.Insert(r.DB, coll, a.docs, a.ordered, writeOptions(r))
	if err != nil {
		return nil, err
	}
	return writeReply(int64(n), werrs), nil
}

// updateArg reads an update: a document (operators or a replacement), or
// an array of pipeline stages (pipeline true; the array's bytes).
func updateArg(cmd, field string, v bson.RawValue) (bson.Raw, bool, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		return v.Document(), false, nil
	case bson.TypeArray:
		return bson.Raw(v.Value), true, nil
	}
	return nil, false, wrongType(cmd, field, v, "object")
}

// parseUpdateStatement reads one entry of update's updates array.
func parseUpdateStatement(doc bson.Raw) (engine.UpdateSpec, error) {
	var u engine.UpdateSpec
	var haveQ, haveU bool
	err := eachField(doc, "update.updates", func(key string, v bson.RawValue) (bool, error) {
		var err error
		switch key {
		case "q":
			u.Filter, err = argDoc("update.updates", key, v)
			haveQ = true
		case "u":
			haveU = true
			u.Update, u.Pipeline, err = updateArg("update.updates", key, v)
		case "upsert":
			u.Upsert, err = argBool("update.updates", key, v)
		case "multi":
			u.Multi, err = argBool("update.updates", key, v)
		case "arrayFilters":
			u.ArrayFilters, err = docsArg("update.updates", key, v)
		case "hint":
			u.Hint = v
		case "collation":
			err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
		case "c", "upsertSupplied", "sampleId":
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return u, err
	}
	if !haveQ {
		return u, mongoerr.New(mongoerr.Code(40414), "BSON field 'update.updates.q' is missing but a required field")
	}
	if !haveU {
		return u, mongoerr.New(mongoerr.Code(40414), "BSON field 'update.updates.u' is missing but a required field")
	}
	if u.Multi && !u.Pipeline && !isOperatorDoc(u.Update) {
		return u, mongoerr.New(mongoerr.FailedToParse, "multi update is not supported for replacement-style update")
	}
	return u, nil
}

func updateCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, a, err := parseBatch(r, "update", "updates")
	if err != nil {
		return nil, err
	}
	specs := make([]engine.UpdateSpec, len(a.docs))
	for i, d := range a.docs {
		if specs[i], err = parseUpdateStatement(d); err != nil {
			return nil, err
		}
	}
	var matched, modified int64
	var upserted bson.A
	var werrs []engine.WriteError
	for i, u := range specs {
		s.Ops.Update.Add(1)
		u.WriteOptions = writeOptions(r)
		res, err := s.Engine.Update(r.DB, coll, u)
		if mongoerr.Is(err, mongoerr.WriteConflict) {
			return nil, err
		}
		if err != nil {
			werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.As(err)})
			if a.ordered {
				break
			}
			continue
		}
		matched += res.Matched
		modified += res.Modified
		if res.UpsertedID.Type != 0 {
			matched++
			upserted = append(upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: res.UpsertedID}})
		}
	}
	// UpdateCommandReply: upserted before nModified.
	var extra []bson.E
	if len(upserted) > 0 {
		extra = append(extra, bson.E{Key: "upserted", Value: upserted})
	}
	extra = append(extra, bson.E{Key: "nModified", Value: int32(modified)})
	return writeReply(matched, werrs, extra...), nil
}

func deleteCmd(s *Service, r *Request) (bson.Raw, error) {
	coll, a, err := parseBatch(r, "delete", "deletes")
	if err != nil {
		return nil, err
	}
	type stmt struct {
		filter bson.Raw
		limit  int64
		hint   bson.RawValue
	}
	stmts := make([]stmt, len(a.docs))
	for i, d := range a.docs {
		haveQ, haveLimit := false, false
		err := eachField(d, "delete.deletes", func(key string, v bson.RawValue) (bool, error) {
			var err error
			switch key {
			case "q":
				stmts[i].filter, err = argDoc("delete.deletes", key, v)
				haveQ = true
			case "limit":
				stmts[i].limit, err = argInt("delete.deletes", key, v)
				haveLimit = true
				if err == nil && stmts[i].limit != 0 && stmts[i].limit != 1 {
					err = mongoerr.New(mongoerr.FailedToParse, "The limit field in delete objects must be 0 or 1. Got %d", stmts[i].limit)
				}
			case "hint":
				stmts[i].hint = v
			case "collation":
				err = mongoerr.New(mongoerr.NotImplemented, "Folio does not support collations yet")
			default:
				return false, nil
			}
			return true, err
		})
		if err == nil && !haveQ {
			err = mongoerr.New(mongoerr.Code(40414), "BSON field 'delete.deletes.q' is missing but a required field")
		}
		if err == nil && !haveLimit {
			err = mongoerr.New(mongoerr.Code(40414), "BSON field 'delete.deletes.limit' is missing but a required field")
		}
		if err != nil {
			return nil, err
		}
	}
	var n int64
	var werrs []engine.WriteError
	for i, st := range stmts {
		s.Ops.Delete.Add(1)
		removed, err := s.Engine.Delete(r.DB, coll, st.filter, int(st.limit), st.hint, writeOptions(r))
		if mongoerr.Is(err, mongoerr.WriteConflict) {
			return nil, err
		}
		n += removed
		if err != nil {
			werrs = append(werrs, engine.WriteError{Index: i, Err: mongoerr.As(err)})
			if a.ordered {
				break
			}
		}
	}
	return writeReply(n, werrs), nil
}

// isOperatorDoc reports whether an update document starts with an update
// operator ($set...) rather than being a replacement.
func isOperatorDoc(d bson.Raw) bool {
	el, err := d.IndexErr(0)
	return err == nil && len(el.Key()) > 0 && el.Key()[0] == '$'
}
