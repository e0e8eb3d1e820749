package oplog

import (
	"encoding/binary"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// An insert's entry may be stored by reference: without its document,
// which it names by the storage key the document was inserted at. The
// document, stored with the entry's stamp (its mark), is then the entry's
// o for as long as it keeps that mark; whatever changes or removes it first
// keeps the document for the entry elsewhere (the engine, beside it). A
// reader of the oplog finds the document in one snapshot, and makes the
// entry whole with Resolve.
//
// Stored form: 4 zero bytes (no BSON document starts so), 'r', the key
// (uvarint length, bytes), where o's value starts in the entry (uvarint),
// the document's length (uvarint), then the entry with an empty document
// as its o.

// refTag follows the 4 zero bytes of an entry stored by reference.
const refTag = 'r'

var emptyDoc = []byte{5, 0, 0, 0, 0}

// NewRef appends to dst the entry of the insert op (its O the document) by
// reference to the document at key, and returns dst with the offset of the
// entry's ts in what it appended (see Entry).
func NewRef(dst []byte, op Op, key []byte, sess *Session, wall time.Time) ([]byte, int) {
	base := len(dst)
	dst = append(dst, 0, 0, 0, 0, refTag)
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	// where o's value sits: after the fields appendOp writes before it
	oAt := 4 + fieldLen("op", len(op.Kind)+5) + fieldLen("ns", len(op.NS)+5) + fieldLen("o", 0)
	if op.UUID != nil {
		oAt += fieldLen("ui", 5+len(op.UUID))
	}
	dst = binary.AppendUvarint(dst, uint64(oAt))
	dst = binary.AppendUvarint(dst, uint64(len(op.O)))
	op.O = emptyDoc
	head := len(dst)
	ent := New(dst, op, sess, wall)
	if len(ent.Doc) <= cap(dst)-head {
		dst = dst[:head+len(ent.Doc)] // built in place
	} else {
		dst = append(dst, ent.Doc...)
	}
	return dst, head - base + ent.TSAt
}

// fieldLen is the bytes of an element named name with an n-byte value.
func fieldLen(name string, n int) int { return 1 + len(name) + 1 + n }

// ref is an entry stored by reference, read.
type ref struct {
	key         []byte
	oAt, docLen int
	ent         []byte // with an empty o
}

// parseRef reads s as an entry by reference.
func (s Stored) parseRef() (ref, bool) {
	if len(s) < 5 || s[0] != 0 || s[1] != 0 || s[2] != 0 || s[3] != 0 || s[4] != refTag {
		return ref{}, false
	}
	rest := s[5:]
	var vals [3]uint64
	var key []byte
	for i := range vals {
		v, w := binary.Uvarint(rest)
		if w <= 0 {
			return ref{}, false
		}
		vals[i], rest = v, rest[w:]
		if i == 0 {
			if v > uint64(len(rest)) {
				return ref{}, false
			}
			key, rest = rest[:v], rest[v:]
		}
	}
	oAt, docLen := vals[1], vals[2]
	if len(rest) < 5 || oAt > uint64(len(rest)-5) || docLen > 1<<31 || string(rest[oAt:oAt+5]) != string(emptyDoc) {
		return ref{}, false
	}
	return ref{key: key, oAt: int(oAt), docLen: int(docLen), ent: rest}, true
}

// Ref reports whether s is an insert's entry stored by reference, and the
// key of the document it names.
func (s Stored) Ref() (key []byte, ok bool) {
	r, ok := s.parseRef()
	return r.key, ok
}

// EntryLen is the length of the entry's document, whole: for an entry by
// reference, with its document as o.
func (s Stored) EntryLen() int {
	if r, ok := s.parseRef(); ok {
		return len(r.ent) - len(emptyDoc) + r.docLen
	}
	return len(s.Entry())
}

// Resolve appends to dst the entry s, stored by reference, whole: doc as
// its o. It returns nil when s is not a well-formed reference or doc is
// not as long as the document it referred to.
func (s Stored) Resolve(dst []byte, doc bson.Raw) Stored {
	r, ok := s.parseRef()
	if !ok || len(doc) != r.docLen {
		return nil
	}
	start := len(dst)
	dst = slices.Grow(dst, len(r.ent)-len(emptyDoc)+len(doc))
	dst = append(dst, r.ent[:r.oAt]...)
	dst = append(dst, doc...)
	dst = append(dst, r.ent[r.oAt+len(emptyDoc):]...)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst[start:]
}
