package engine

import (
	"encoding/hex"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/storage"
)

// A document's record id is the encoding of its _id (keyenc), the key it
// is stored under: the documents of a collection scan come in its order,
// as a clustered collection's do in MongoDB, whose record ids are also
// its _ids' encodings. Reads give them to documents when asked
// ({$meta: "recordId"}, find's showRecordId), and a find with
// $_requestResumeToken reports the record id its scan reached, from which
// $_resumeAfter starts another.

// recorded is a source that gives each document its record id
// (docsrc.Meta.RecordID) once asked to.
type recorded interface{ giveRecordIDs() }

func (s *planSource) giveRecordIDs() { s.ids = true }

func (u *unionSource) giveRecordIDs() {
	if u.text != nil {
		u.text.giveRecordIDs()
	}
	for _, s := range u.srcs {
		s.giveRecordIDs()
	}
}

// startAfter makes p, a forward scan of the document store, start after
// the record o.ResumeAfter names (null: at the start). As in MongoDB the
// record must exist (KeyNotFound otherwise); a capped collection, scanned
// in insertion order, cannot resume yet.
func (e *Engine) startAfter(c *Collection, p *planner.Plan, o FindOptions) error {
	rid := o.ResumeAfter
	if rid.Type == 0 || rid.Type == bson.TypeNull {
		return nil
	}
	if p.Natural {
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support $_resumeAfter on a capped collection yet")
	}
	id, ok := recordIDOf(rid)
	found := false
	if ok {
		var r storage.Reader = e.kv
		if o.Txn != nil {
			r = o.Txn.tx
		} else if v := readViewOf(o.Ctx); v != nil {
			r = v.snap
		}
		var err error
		if _, found, err = r.Get(docKeyFromEncodedID(c.ID, id)); err != nil {
			return err
		}
	}
	if !found {
		return mongoerr.New(mongoerr.KeyNotFound, "Failed to resume collection scan: the recordId from which we are attempting to resume no longer exists in the collection. recordId: %s", recordIDString(rid))
	}
	p.StartAfter(id)
	return nil
}

// recordIDOf is the record id a $recordId value names: Folio's are binary
// data (RecordIDValue); a NumberLong names none.
func recordIDOf(v bson.RawValue) ([]byte, bool) {
	_, data, ok := v.BinaryOK()
	return data, ok
}

// recordIDString shows a record id as MongoDB's RecordId::toString does:
// RecordId(<number>) or RecordId(<hex of the bytes>).
func recordIDString(v bson.RawValue) string {
	if id, ok := recordIDOf(v); ok {
		return "RecordId(" + strings.ToUpper(hex.EncodeToString(id)) + ")"
	}
	return "RecordId(" + strconv.FormatInt(v.AsInt64(), 10) + ")"
}

// ResumableCursor is the cursor of a find with $_requestResumeToken.
type ResumableCursor interface {
	PostBatchResumeToken(holding bool) bson.Raw
}

// resumeCursor is the cursor of a find with $_requestResumeToken: a
// forward scan of the document store in natural order, which remembers the
// record ids of the last two documents it returned for its batches'
// postBatchResumeToken.
type resumeCursor struct {
	*scanCursor
	last, prev []byte
	// from is the record the scan resumed after, nil for none.
	from []byte
}

func (r *resumeCursor) Next() (bson.Raw, error) {
	doc, err := r.scanCursor.Next()
	r.returned(doc)
	return doc, err
}

func (r *resumeCursor) Lend() (bson.Raw, error) {
	doc, err := r.scanCursor.Lend()
	r.returned(doc)
	return doc, err
}

func (r *resumeCursor) returned(doc bson.Raw) {
	if doc != nil {
		r.prev, r.last = r.last, r.Meta().RecordID
	}
}

// PostBatchResumeToken is {$recordId: id}, id being the record id of the
// last document the scan examined, matching or not (null before the
// first), as MongoDB's collection scan reports it. When the caller holds
// back the last document returned (it did not fit the batch), it is the
// record id of the one before it, the last the batch holds.
func (r *resumeCursor) PostBatchResumeToken(holding bool) bson.Raw {
	id := r.from
	switch {
	case holding:
		id = r.prev
	case r.scan != nil:
		if s, ok := r.scan.src.(*planSource); ok && s.lastID != nil {
			id = s.lastID
		}
	}
	start, out := bsoncore.AppendDocumentStart(nil)
	if id == nil {
		out = bsoncore.AppendNullElement(out, "$recordId")
	} else {
		out = rawdoc.AppendElement(out, "$recordId", expr.RecordIDValue(id))
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}
