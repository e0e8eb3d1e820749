package engine

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/rawdoc"
)

// keyed is a source that gives each document the key of the index entry
// it found it through (docsrc.Meta.IndexKey) once asked to: a read whose
// projection or pipeline reads {$meta: "indexKey"}, or find's returnKey.
// idIndex says that the document store serves as the collection's _id
// index (not a clustered collection, whose scans by _id MongoDB shows as
// CLUSTERED_IXSCAN, with no key).
type keyed interface{ giveIndexKeys(idIndex bool) }

func (s *planSource) giveIndexKeys(idIndex bool) { s.keys, s.idIndex = true, idIndex }

func (u *unionSource) giveIndexKeys(idIndex bool) {
	for _, s := range u.srcs {
		s.giveIndexKeys(idIndex)
	}
}

// Meta is the index key and the record id of the document Next returned
// last, each when asked for (giveIndexKeys, giveRecordIDs). The key is an
// index scan's {field: value, ...} in the index's order; a read of the
// document store by _id (one _id or ranges) {_id: ...}; none for a
// collection scan.
func (s *planSource) Meta() docsrc.Meta {
	var m docsrc.Meta
	if s.ids && s.last != nil {
		m.RecordID = bytes.Clone(s.lastID)
	}
	if !s.keys || s.last == nil {
		return m
	}
	p := s.p
	switch {
	case p.Natural || p.Index == nil && (p.Intervals == nil || !s.idIndex):
	case p.Index == nil:
		start, out := bsoncore.AppendDocumentStart(nil)
		out = rawdoc.AppendElement(out, "_id", s.last.Lookup("_id"))
		m.IndexKey, _ = bsoncore.AppendDocumentEnd(out, start)
	default:
		m.IndexKey = s.entryKey()
	}
	return m
}

// entryKey is the key of the index entry the scan is at, as a document of
// the index's fields: from the values the entry holds, or, for an entry
// written before entries held them, from the document's keys, the one
// whose encoding the entry's key starts with.
func (s *planSource) entryKey() bson.Raw {
	fields := s.p.Index.Fields
	var vals []bson.RawValue
	if v := entryValues(s.lastEntry); v != nil {
		for i := range fields {
			vals = append(vals, v.Index(uint(i)).Value())
		}
	} else if ix := indexOf(s.p); ix != nil {
		keys, _, err := ix.keys(s.last)
		if err != nil {
			return nil
		}
		rest := s.p.Intervals[0].Lo // a unique point's one key
		if s.lastKey != nil {
			rest = s.lastKey[len(s.prefix):]
		}
		for _, k := range keys {
			if bytes.HasPrefix(rest, k.enc) {
				vals = k.vals
				break
			}
		}
	}
	if len(vals) != len(fields) {
		return nil
	}
	start, out := bsoncore.AppendDocumentStart(nil)
	for i, f := range fields {
		out = rawdoc.AppendElement(out, f.Path, vals[i])
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// Meta is the index key of the document Next returned last (see
// planSource.Meta), from the scan that found it; the score of one the
// $text branch found.
func (u *unionSource) Meta() docsrc.Meta {
	if u.text != nil && !u.textDone {
		return u.text.Meta()
	}
	if u.i >= len(u.srcs) {
		return docsrc.Meta{}
	}
	return u.srcs[u.i].Meta()
}
