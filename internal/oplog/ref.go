package oplog

import (
	"encoding/binary"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// An insert's entry may be stored by reference: without its document,
// which it names by the storage key the document was inserted at. The
// document, stored with the entry's stamp (its mark), is then the entry's
// o for as long as it keeps that mark; whatever changes or removes it first
// writes the document into the entry (Resolve). So a reader of the oplog
// finds, in one snapshot, either the entry whole or its document marked.
//
// Stored form: 4 zero bytes (no BSON document starts so), 'r', the key
// (uvarint length, bytes), where o's value starts in the entry (uvarint),
// then the entry with an empty document as its o.

// refTag follows the 4 zero bytes of an entry stored by reference.
const refTag = 'r'

var emptyDoc = []byte{5, 0, 0, 0, 0}

// NewRef appends to dst an insert's entry by reference to the document at
// key, and returns dst with the offset of the entry's ts in what it
// appended (see Entry).
func NewRef(dst []byte, op Op, key []byte, sess *Session, wall time.Time) ([]byte, int) {
	base := len(dst)
	dst = append(dst, 0, 0, 0, 0, refTag)
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	op.O = emptyDoc
	// where o's value sits: after the fields appendOp writes before it
	oAt := 4 + fieldLen("op", len(op.Kind)+5) + fieldLen("ns", len(op.NS)+5) + fieldLen("o", 0)
	if op.UUID != nil {
		oAt += fieldLen("ui", 5+len(op.UUID))
	}
	dst = binary.AppendUvarint(dst, uint64(oAt))
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

// Ref reports whether s is an insert's entry stored by reference, and the
// key of the document it names.
func (s Stored) Ref() (key []byte, ok bool) {
	if len(s) < 5 || s[0] != 0 || s[1] != 0 || s[2] != 0 || s[3] != 0 || s[4] != refTag {
		return nil, false
	}
	n, w := binary.Uvarint(s[5:])
	if w <= 0 || uint64(len(s)-5-w) < n {
		return nil, false
	}
	return s[5+w : 5+w+int(n)], true
}

// Resolve appends to dst the entry s, stored by reference, whole: doc as
// its o. It returns nil when s is not a well-formed reference.
func (s Stored) Resolve(dst []byte, doc bson.Raw) Stored {
	key, ok := s.Ref()
	if !ok {
		return nil
	}
	rest := s[5+uvarintLen(uint64(len(key)))+len(key):]
	oAt, w := binary.Uvarint(rest)
	ent := rest[max(w, 0):]
	if w <= 0 || len(ent) < 5 || oAt+5 > uint64(len(ent)) || string(ent[oAt:oAt+5]) != string(emptyDoc) {
		return nil
	}
	start := len(dst)
	dst = append(dst, ent[:oAt]...)
	dst = append(dst, doc...)
	dst = append(dst, ent[oAt+5:]...)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst[start:]
}

func uvarintLen(n uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], n)
}
