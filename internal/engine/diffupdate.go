package engine

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/oplog"
)

// diffUpdate applies an update oplog entry's $v: 2 diff, as applyOps
// does (UpdateSpec.OplogDiff). Its entry is the diff as given, always a
// delta, as MongoDB's DeltaExecutor logs it (a change stream's update
// event, however small the document).
type diffUpdate struct {
	diff bson.Raw
}

func compileDiffUpdate(diff bson.Raw) (*diffUpdate, error) {
	if err := oplog.CheckDiff(diff); err != nil {
		return nil, err
	}
	return &diffUpdate{diff: diff}, nil
}

func (u *diffUpdate) Apply(doc bson.Raw, _ int, _ bool) (bson.Raw, []byte, bool, error) {
	out, err := oplog.ApplyDiff(doc, u.diff)
	if err != nil {
		return nil, nil, false, err
	}
	if id, had := doc.LookupErr("_id"); had == nil {
		if got, err := out.LookupErr("_id"); err != nil || !got.Equal(id) {
			return nil, nil, false, mongoerr.New(mongoerr.ImmutableField,
				"Performing an update on the path '_id' would modify the immutable field '_id'")
		}
	}
	if len(out) > MaxDocumentSize {
		return nil, nil, false, mongoerr.New(mongoerr.UpdateResultTooLarge, "Resulting document after update is larger than %d", MaxDocumentSize)
	}
	return out, u.diff, !bytes.Equal(out, doc), nil
}
