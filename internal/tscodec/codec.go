// Package tscodec compresses time series buckets for storage. A bucket
// (MongoDB's version 1 layout) keeps each field of its measurements as a
// column, an embedded document under data whose keys are the
// measurements' positions: {"0": v0, "1": v1, ...}. Stored as BSON, every
// value pays its type, its key and 8 bytes for a double or a date.
//
// Encode keeps the document as it is up to data's value and after it, and
// writes each column as its keys (the first, then dense or the gaps) and
// runs of values: dates as deltas of deltas, doubles that are exact
// decimals as deltas at a power-of-ten scale, integers as deltas, all as
// zigzag varints, and any other value as its BSON. Invariant:
// Decode(Encode(d)) is d byte for byte; Encode checks it before returning.
//
// Layout: 4 zero bytes (no BSON document starts so: its length is at least
// 5), a version byte, the document's length (4 bytes, little-endian), the
// head (uvarint length, bytes: the document up to data's value), data's
// elements (uvarint count; each a name, a kind, and a raw value or a
// column), and the tail (the rest of the document).
package tscodec

import (
	"bytes"
	"encoding/binary"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/rawdoc"
)

const (
	version    = 1
	headerLen  = 9
	maxDocSize = 64 << 20 // well above BSON's 16 MiB, a bound on corrupt input
)

// data's element kinds.
const (
	elemRaw    = 0
	elemColumn = 1
)

// Encoded reports whether a stored value v is Encode's output rather than
// a BSON document.
func Encoded(v []byte) bool {
	return len(v) >= headerLen && v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0
}

// DecodedLen is the length of the document v (Encoded) holds.
func DecodedLen(v []byte) int { return int(binary.LittleEndian.Uint32(v[5:9])) }

// Encode returns the stored form of doc, or nil when doc has no column to
// compress or is not a well-formed document (the caller stores doc then).
// It returns nil too if the stored form would not decode to doc, a guard
// the tests of encode (which has none) make sure never fires.
func Encode(doc bson.Raw) []byte {
	out := encode(doc)
	if out == nil {
		return nil
	}
	if back, err := Decode(make([]byte, 0, len(doc)), out); err != nil || !bytes.Equal(back, doc) {
		return nil
	}
	return out
}

// encode is Encode without its check.
func encode(doc bson.Raw) []byte {
	if rawdoc.Validate(doc) != nil {
		return nil
	}
	it := rawdoc.Iterate(doc)
	for {
		rest := it.Rest()
		name, v, ok := it.Next()
		if !ok {
			return nil
		}
		if string(name) == "data" && v.Type == bson.TypeEmbeddedDocument {
			return encodeData(doc, len(doc)-1-len(rest)+2+len(name), v.Value)
		}
	}
}

// encodeData writes doc whose data value (at off) is data.
func encodeData(doc bson.Raw, off int, data []byte) []byte {
	out := make([]byte, headerLen, len(doc)/4+64)
	out[4] = version
	binary.LittleEndian.PutUint32(out[5:], uint32(len(doc)))
	out = binary.AppendUvarint(out, uint64(off))
	out = append(out, doc[:off]...)
	out = binary.AppendUvarint(out, uint64(rawdoc.Len(data)))
	columns := 0
	var vals []bson.RawValue
	var keys []uint64
	it := rawdoc.Iterate(data)
	for {
		name, v, ok := it.Next()
		if !ok {
			break
		}
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		var col []byte
		if col, vals, keys, ok = appendColumn(append(out, elemColumn), v, vals, keys); ok {
			out, columns = col, columns+1
			continue
		}
		out = append(out, elemRaw, byte(v.Type))
		out = binary.AppendUvarint(out, uint64(len(v.Value)))
		out = append(out, v.Value...)
	}
	out = append(out, doc[off+len(data):]...)
	if columns == 0 || len(out) >= len(doc) {
		return nil
	}
	return out
}

// Decode appends to dst the document v (Encoded) holds: byte for byte the
// document given to Encode.
func Decode(dst, v []byte) (bson.Raw, error) {
	if !Encoded(v) || v[4] != version {
		return nil, errCorrupt
	}
	size := DecodedLen(v)
	if size < 5 || size > maxDocSize {
		return nil, errCorrupt
	}
	r := reader{b: v[headerLen:]}
	start := len(dst)
	out := dst
	if cap(out)-len(out) < size {
		out = append(make([]byte, 0, len(dst)+size), dst...)
	}
	head := r.bytes(r.uvarint())
	n := r.uvarint()
	if r.err != nil || len(head) < 4+1+len("data") || n > uint64(len(r.b)) {
		return nil, errCorrupt
	}
	out = append(out, head...)
	dataAt := len(out)
	out = append(out, 0, 0, 0, 0)
	for range n {
		name := r.bytes(r.uvarint())
		if r.err != nil || bytes.IndexByte(name, 0) >= 0 {
			return nil, errCorrupt
		}
		switch r.byte() {
		case elemColumn:
			out = append(append(append(out, byte(bson.TypeEmbeddedDocument)), name...), 0)
			out = r.column(out, start+size)
		case elemRaw:
			t := r.byte()
			val := r.bytes(r.uvarint())
			if _, rest, ok := bsoncore.ReadValue(val, bsoncore.Type(t)); r.err == nil && (!ok || len(rest) > 0) {
				r.fail()
			}
			out = append(append(append(out, t), name...), 0)
			out = append(out, val...)
		default:
			r.fail()
		}
		if r.err != nil || len(out)-start > size {
			return nil, errCorrupt
		}
	}
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out[dataAt:], uint32(len(out)-dataAt))
	out = append(out, r.b...)
	if len(out)-start != size {
		return nil, errCorrupt
	}
	return out[start:], nil
}

var errCorrupt = errors.New("tscodec: corrupt stored bucket")
