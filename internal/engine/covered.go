package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// coveredDoc is the result of a covered read (see planner.Plan.Covered)
// at the current index entry: the values of the fields at positions cov,
// named by their paths, in key order, as MongoDB's PROJECTION_COVERED
// builds it: a field the document lacks is null, its key. An entry
// written before entries kept the key's values has its document fetched
// for them (and counted as examined); nil means that document is gone. No field (a find reading only the keys) needs no
// document. The result is valid until the next call.
func (s *planSource) coveredDoc(cov []int, encID []byte) (bson.Raw, error) {
	fields := s.p.Index.Fields
	vals := entryValues(s.it.Value())
	var doc bson.Raw
	if vals == nil && len(cov) > 0 {
		d, found, err := getDoc(s.r, docKeyFromEncodedID(s.collID, encID), &s.docBuf)
		if err != nil || !found {
			return nil, err
		}
		s.stats.DocsExamined++
		doc = d
	}
	start, out := bsoncore.AppendDocumentStart(s.covBuf[:0])
	for _, i := range cov {
		var v bson.RawValue
		if doc != nil {
			if v = doc.Lookup(fields[i].Path); v.Type == 0 {
				// missing: its key, null
				v = bson.RawValue{Type: bson.TypeNull}
			}
		} else {
			v = vals.Index(uint(i)).Value()
		}
		out = rawdoc.AppendElement(out, fields[i].Path, v)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	s.covBuf = out
	return out, nil
}
