// Package changestream turns oplog entries into MongoDB's change events:
// the $changeStream stage's options, resume tokens, which namespaces a
// stream watches and the event documents, in MongoDB 7.0's shapes. It is
// pure: the oplog is read, and documents looked up, by its caller.
package changestream

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// Token is a resume token: the position of an event in the stream, or
// with Event false a high-water mark, the position before every event at
// TS. Tokens order by TS, then high-water marks before events, then the
// operation's index in its transaction, then an event before the
// invalidate it causes; a fragment of an event split by
// $changeStreamSplitLargeEvent (Split) orders with its event (see
// Stream.After).
type Token struct {
	TS             uint64 // the commit's cluster time
	Event          bool
	TxnOpIndex     uint32
	FromInvalidate bool
	UUID           []byte   // the collection's, for an event on one
	DocKey         bson.Raw // the event's documentKey, when it has one
	// Split marks the token of a fragment of a split event, the
	// FragmentNum'th (from 0).
	Split       bool
	FragmentNum uint32
}

// fragmentMark follows an event's documentKey in a fragment's token.
const fragmentMark = 0xF0

// Clone is t with its own copies of UUID and DocKey, which may point into
// an oplog entry's buffer that the store reuses.
func (t Token) Clone() Token {
	t.UUID, t.DocKey = bytes.Clone(t.UUID), bytes.Clone(t.DocKey)
	return t
}

// tokenTimestampType opens the encoded token, as MongoDB's opens with the
// type byte of a Timestamp, so that a token's time can be read from its
// first 9 bytes in both.
const tokenTimestampType = 0x82

// Data is the token's _data: hex of its bytes, upper case as MongoDB's.
func (t Token) Data() string { return string(t.appendData(nil)) }

// appendData appends Data to dst.
func (t Token) appendData(dst []byte) []byte {
	var buf [64]byte
	b := append(buf[:0], tokenTimestampType)
	b = binary.BigEndian.AppendUint64(b, t.TS)
	if !t.Event {
		return appendHexUpper(dst, append(b, 0))
	}
	b = append(b, 1)
	b = binary.BigEndian.AppendUint32(b, t.TxnOpIndex)
	b = append(b, bit(t.FromInvalidate), byte(len(t.UUID)))
	b = append(b, t.UUID...)
	b = append(b, t.DocKey...)
	if t.Split {
		b = binary.BigEndian.AppendUint32(append(b, fragmentMark), t.FragmentNum)
	}
	return appendHexUpper(dst, b)
}

func appendHexUpper(dst, b []byte) []byte {
	const digits = "0123456789ABCDEF"
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

// Doc is the token as events carry it: {_data: <hex>}.
func (t Token) Doc() bson.Raw { return bson.Raw(t.AppendDoc(nil)) }

// AppendDoc appends the token document to dst.
func (t Token) AppendDoc(dst []byte) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	dst = bsoncore.AppendHeader(dst, bsoncore.TypeString, "_data")
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = t.appendData(dst)
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// Compare orders tokens (see Token).
func (t Token) Compare(o Token) int {
	return cmp.Or(cmp.Compare(t.TS, o.TS), cmp.Compare(bit(t.Event), bit(o.Event)),
		cmp.Compare(t.TxnOpIndex, o.TxnOpIndex), cmp.Compare(bit(t.FromInvalidate), bit(o.FromInvalidate)))
}

// bit is 1 for true, 0 for false.
func bit(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// ParseToken reads a resume token, the _id of an event or a
// postBatchResumeToken, named field in errors.
func ParseToken(v bson.RawValue, field string) (Token, error) {
	bad := func() (Token, error) {
		return Token{}, mongoerr.New(mongoerr.ResumeTokenBadData, "Bad resume token: _data of missing or of wrong type. Expected string, got %s", values.ValueString(v))
	}
	doc, ok := v.DocumentOK()
	if !ok {
		return Token{}, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$changeStream.%s' is the wrong type '%s', expected type 'object'", field, bsonTypeName(v))
	}
	s, ok := doc.Lookup("_data").StringValueOK()
	if !ok {
		return bad()
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) < 10 || b[0] != tokenTimestampType {
		return Token{}, mongoerr.New(mongoerr.FailedToParse, "Bad resume token: the _data %q is not a resume token of this server", s)
	}
	t := Token{TS: binary.BigEndian.Uint64(b[1:9]), Event: b[9] == 1}
	if !t.Event {
		return t, nil
	}
	rest := b[10:]
	if len(rest) < 6 || int(rest[5]) > len(rest)-6 {
		return Token{}, mongoerr.New(mongoerr.FailedToParse, "Bad resume token: the _data %q is truncated", s)
	}
	t.TxnOpIndex = binary.BigEndian.Uint32(rest)
	t.FromInvalidate = rest[4] == 1
	n := int(rest[5])
	if n > 0 {
		t.UUID = bytes.Clone(rest[6 : 6+n])
	}
	key := rest[6+n:]
	// A fragment's mark and number follow the document key, if any: a
	// document cannot start with the mark in five bytes.
	if k := len(key) - 5; k >= 0 && key[k] == fragmentMark && (k == 0 || int(binary.LittleEndian.Uint32(key)) == k) {
		t.Split, t.FragmentNum = true, binary.BigEndian.Uint32(key[k+1:])
		key = key[:k]
	}
	if len(key) > 0 {
		if bsoncore.Document(key).Validate() != nil {
			return Token{}, mongoerr.New(mongoerr.FailedToParse, "Bad resume token: the _data %q holds a malformed document key", s)
		}
		t.DocKey = bson.Raw(bytes.Clone(key))
	}
	return t, nil
}

func bsonTypeName(v bson.RawValue) string {
	if v.Type == 0 {
		return "missing"
	}
	return values.TypeName(v.Type)
}
