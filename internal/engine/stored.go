package engine

import (
	"bytes"
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/tscodec"
)

// A document is stored as its BSON, except a time series collection's
// bucket, which is stored compressed (tscodec): its columns of
// measurements take a few bytes a value; and a document inserted by
// reference, which is stored marked (below). Every read of a stored
// document goes through docOf, getDoc, getMarkedDoc, ownDoc or storedLen,
// so nothing above the engine (system.buckets included) sees the
// compressed form or the mark; index keys, the oplog and sizes are those
// of the document.

// A document whose insert's oplog entry refers to it (oplog.NewRef) is
// stored marked, for as long as it is the document inserted: 4 zero bytes,
// markTag, the entry's stamp (8 bytes, little-endian, written when the
// insert commits), then its BSON. The write that first changes or removes
// it writes it beside the entry (resolveInsertEntry).
const (
	markTag    = 'm'
	markStamp  = 5 // where the stamp sits
	markHeader = markStamp + 8
)

// markHead is what precedes a document stored marked, its stamp zero
// until the commit writes it at markStamp. It is never written to.
var markHead = [markHeader]byte{4: markTag}

// insertMark is, if v is marked, the document it holds past the mark and
// the stamp of the insert entry that refers to it.
func insertMark(v []byte) (doc []byte, stamp uint64, marked bool) {
	if len(v) < markHeader || v[4] != markTag || v[0] != 0 || v[1] != 0 || v[2] != 0 || v[3] != 0 {
		return nil, 0, false
	}
	return v[markHeader:], binary.LittleEndian.Uint64(v[markStamp:]), true
}

// stored is the value doc is stored as in c.
func (c *Collection) stored(doc bson.Raw) []byte {
	if c.Options.Timeseries == nil {
		return doc
	}
	if v := tscodec.Encode(doc); v != nil {
		return v
	}
	return doc
}

// docOf is the document a stored value v holds: v itself, or a bucket
// decoded into *buf (reused, so the result is valid until the next call
// with buf).
func docOf(v []byte, buf *[]byte) (bson.Raw, error) {
	if doc, _, ok := insertMark(v); ok {
		return doc, nil
	}
	if !tscodec.Encoded(v) {
		return v, nil
	}
	doc, err := tscodec.Decode((*buf)[:0], v)
	*buf = doc
	return doc, err
}

// ownDoc is the document a stored value v holds, in memory of its own.
func ownDoc(v []byte) (bson.Raw, error) {
	if doc, _, ok := insertMark(v); ok {
		return bytes.Clone(doc), nil
	}
	if !tscodec.Encoded(v) {
		return bytes.Clone(v), nil
	}
	return tscodec.Decode(nil, v)
}

// getDoc reads the document stored at key, decoding into *buf as docOf.
func getDoc(r storage.Reader, key []byte, buf *[]byte) (bson.Raw, bool, error) {
	doc, _, found, err := getMarkedDoc(r, key, buf)
	return doc, found, err
}

// getMarkedDoc is getDoc that also returns the document's insert mark (0:
// none, see insertMark).
func getMarkedDoc(r storage.Reader, key []byte, buf *[]byte) (bson.Raw, uint64, bool, error) {
	v, found, err := r.Get(key)
	if err != nil || !found {
		return nil, 0, found, err
	}
	if doc, mark, ok := insertMark(v); ok {
		return doc, mark, true, nil
	}
	doc, err := docOf(v, buf)
	return doc, 0, err == nil, err
}

// storedLen is the length of the document a stored value v holds.
func storedLen(v []byte) int {
	if doc, _, ok := insertMark(v); ok {
		return len(doc)
	}
	if tscodec.Encoded(v) {
		return tscodec.DecodedLen(v)
	}
	return len(v)
}
