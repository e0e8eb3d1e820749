package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
)

const applyOplogUpdate = "$_internalApplyOplogUpdate"

// applyOplogUpdateStage is $_internalApplyOplogUpdate: {oplogUpdate: o}
// applies an update oplog entry's o to each document, as MongoDB's
// DocumentSourceInternalApplyOplogUpdate: o holding _id is a replacement
// (the document becomes o), else it must be a $v: 2 delta whose diff is
// applied (UpdateModification::parseFromOplogEntry). An update pipeline may
// hold it (a change stream's rawUpdateDescription replayed).
type applyOplogUpdateStage struct {
	replacement bson.Raw
	diff        bson.Raw
}

func parseApplyOplogUpdate(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.ApplyOplogUpdateSpecNotObject, "Argument to %s stage must be an object, but found type: %s", applyOplogUpdate, typeName(arg))
	}
	var o bson.RawValue
	for _, f := range fieldsOf(arg.Value) {
		if f.key != "oplogUpdate" {
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", applyOplogUpdate, f.key)
		}
		if f.val.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.WrongType(applyOplogUpdate+".oplogUpdate", typeName(f.val), "object")
		}
		o = f.val
	}
	if o.Type == 0 {
		return nil, mongoerr.MissingField(applyOplogUpdate + ".oplogUpdate")
	}
	doc := o.Document()
	if doc.Lookup("_id").Type != 0 {
		return &applyOplogUpdateStage{replacement: doc}, nil
	}
	if v, ok := doc.Lookup("$v").AsInt64OK(); !ok || v != 2 {
		return nil, mongoerr.New(mongoerr.OplogUpdateWithoutVersion, "Expected _id field or $v field missing or $v:2 field missing")
	}
	diff := doc.Lookup("diff")
	if diff.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.OplogUpdateDiffNotObject, "Expected 'diff' field to be an object, instead got type: %s", typeName(diff))
	}
	if err := oplog.CheckDiff(diff.Document()); err != nil {
		return nil, err
	}
	return &applyOplogUpdateStage{diff: diff.Document()}, nil
}

func (s *applyOplogUpdateStage) run(in Source, _ *runtime) Source {
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		if s.replacement != nil {
			return []bson.Raw{s.replacement}, nil
		}
		out, err := oplog.ApplyDiff(doc, s.diff)
		if err != nil {
			return nil, err
		}
		return []bson.Raw{out}, nil
	}}
}
