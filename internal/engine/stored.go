package engine

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage"
	"github.com/folio-db/folio/internal/tscodec"
)

// A document is stored as its BSON, except a time series collection's
// bucket, which is stored compressed (tscodec): its columns of
// measurements take a few bytes a value. Every read of a stored document
// goes through docOf or getDoc, so nothing above the engine (system.buckets
// included) sees the compressed form; index keys, the oplog and sizes are
// those of the document.

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
	if !tscodec.Encoded(v) {
		return v, nil
	}
	doc, err := tscodec.Decode((*buf)[:0], v)
	*buf = doc
	return doc, err
}

// ownDoc is the document a stored value v holds, in memory of its own.
func ownDoc(v []byte) (bson.Raw, error) {
	if !tscodec.Encoded(v) {
		return bytes.Clone(v), nil
	}
	return tscodec.Decode(nil, v)
}

// getDoc reads the document stored at key, decoding into *buf as docOf.
func getDoc(r storage.Reader, key []byte, buf *[]byte) (bson.Raw, bool, error) {
	v, found, err := r.Get(key)
	if err != nil || !found {
		return nil, found, err
	}
	doc, err := docOf(v, buf)
	return doc, err == nil, err
}

// storedLen is the length of the document a stored value v holds.
func storedLen(v []byte) int {
	if tscodec.Encoded(v) {
		return tscodec.DecodedLen(v)
	}
	return len(v)
}
