package commands

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

// fillEmptyTimestamps is doc with each top-level Timestamp(0, 0) but _id's
// replaced by a new cluster time, one tick each: MongoDB fills them so in
// the documents of an insert and in a replacement document, unless the
// command sets bypassEmptyTsReplacement. A document without one is
// returned as it is, unread beyond its top-level fields.
func (s *Service) fillEmptyTimestamps(doc bson.Raw) bson.Raw {
	if !hasEmptyTimestamp(doc) {
		return doc
	}
	start, out := bsoncore.AppendDocumentStart(make([]byte, 0, len(doc)))
	for it := rawdoc.Iterate(doc); ; {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if isEmptyTimestamp(k, v) {
			t := s.Clock.Tick()
			out = bsoncore.AppendTimestampElement(out, string(k), t.Secs(), t.Inc())
			continue
		}
		out = rawdoc.AppendElement(out, string(k), v)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// hasEmptyTimestamp reports whether doc has a top-level Timestamp(0, 0)
// other than _id. A document without a Timestamp's type byte anywhere has
// none: one search of its bytes spares the walk of its fields.
func hasEmptyTimestamp(doc bson.Raw) bool {
	if bytes.IndexByte(doc, byte(bson.TypeTimestamp)) < 0 {
		return false
	}
	for it := rawdoc.Iterate(doc); ; {
		k, v, ok := it.Next()
		if !ok {
			return false
		}
		if isEmptyTimestamp(k, v) {
			return true
		}
	}
}

// isEmptyTimestamp reports whether field k holding v is a Timestamp(0, 0)
// other than _id.
func isEmptyTimestamp(k []byte, v bson.RawValue) bool {
	if v.Type != bson.TypeTimestamp || string(k) == "_id" {
		return false
	}
	t, i, ok := v.TimestampOK()
	return ok && t == 0 && i == 0
}
