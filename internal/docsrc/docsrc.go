// Package docsrc defines the one stream of documents that the engine's
// reads return, aggregation stages consume and produce, and the cursor
// registry keeps between getMores.
package docsrc

import "go.mongodb.org/mongo-driver/v2/bson"

// Source yields documents in order: Next returns nil at the end, and a
// document it returned stays valid after later calls. Reads check the
// operation context their source was bound to (the command reading from
// it now). Close releases what the source holds (snapshots, spill files);
// it is called once, whether or not the source was read to its end.
type Source interface {
	Next() (bson.Raw, error)
	Close() error
}

// Lender is a Source that can lend its next document instead of copying
// it: the document Lend returns is valid only until the source's next call
// (Next, Lend or Close). A consumer that copies each document at once (a
// reply being built) reads through Lend.
type Lender interface {
	Lend() (bson.Raw, error)
}

// Lend returns src's next document, lent when src is a Lender.
func Lend(src Source) (bson.Raw, error) {
	if l, ok := src.(Lender); ok {
		return l.Lend()
	}
	return src.Next()
}

// Meta is what a document carries beside its fields, which {$meta: ...}
// reads: the score a $text search gave it, the distance from a $near
// search's center and the location it was measured to, the key of the
// index entry a scan found it through, its record id, and the key of the
// sort it came through.
type Meta struct {
	TextScore       float64
	GeoNearDistance float64
	GeoNearPoint    bson.RawValue
	// The flags sit together, in one word.
	HasTextScore, HasGeoNear bool
	// IndexKey is {$meta: "indexKey"}: the index's fields with the
	// entry's values ({_id: ...} for the _id index); nil when the scan read
	// no index (a collection scan) or was not asked for keys.
	IndexKey bson.Raw
	// RecordID is {$meta: "recordId"}: the document's record id, the
	// storage encoding of its _id (keyenc), or an oplog entry's stamp
	// (8 bytes, big-endian), which orders the documents as a collection
	// scan reads them; nil when the read was not asked for record ids or
	// the document is computed (a group's).
	RecordID []byte
	// SortKey is {$meta: "sortKey"}: the BSON array of the document's
	// key in the sort that set it (query.Sort.SortKeyArray), which only
	// the sort a MongoDB query layer runs sets, and only when a later
	// reader asks; nil otherwise.
	SortKey bson.Raw
}

// MetaSource is a Source whose documents carry metadata: Meta is that of
// the document Next (or Lend) returned last.
type MetaSource interface {
	Meta() Meta
}

// MetaOf is the metadata of the document src returned last; none when src
// carries none.
func MetaOf(src any) Meta {
	if m, ok := src.(MetaSource); ok {
		return m.Meta()
	}
	return Meta{}
}
