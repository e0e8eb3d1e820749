package wire

import (
	"bytes"
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// OP_QUERY flag bits. Bit 0 is reserved.
const (
	QueryTailableCursor  int32 = 1 << 1
	QuerySecondaryOK     int32 = 1 << 2
	QueryOplogReplay     int32 = 1 << 3
	QueryNoCursorTimeout int32 = 1 << 4
	QueryAwaitData       int32 = 1 << 5
	QueryExhaust         int32 = 1 << 6
	QueryPartial         int32 = 1 << 7
)

// Query is a parsed legacy OP_QUERY. Drivers still send it for the first
// hello/isMaster of a connection, against "admin.$cmd". Query and
// ReturnFieldsSelector alias the body buffer given to ParseQuery.
type Query struct {
	Flags                int32
	FullCollectionName   string
	NumberToSkip         int32
	NumberToReturn       int32
	Query                bson.Raw
	ReturnFieldsSelector bson.Raw
}

// ParseQuery parses the body of an OP_QUERY: int32 flags, the cstring
// fullCollectionName ("db.collection"), int32 numberToSkip, int32
// numberToReturn, the query document and an optional returnFieldsSelector
// document, with nothing after it. Every document must be valid BSON of at
// most MaxBSONInternalSize bytes. Errors are *mongoerr.Error, to be reported
// in an OP_REPLY with QueryFailure set.
func ParseQuery(body []byte) (*Query, error) {
	if len(body) < 4 {
		return nil, mongoerr.New(mongoerr.ProtocolError, "OP_QUERY of %d bytes has no room for flags", len(body))
	}
	q := &Query{Flags: int32(binary.LittleEndian.Uint32(body))}
	rest := body[4:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return nil, mongoerr.New(mongoerr.ProtocolError, "OP_QUERY fullCollectionName is not null-terminated")
	}
	q.FullCollectionName = string(rest[:end])
	rest = rest[end+1:]
	if len(rest) < 8 {
		return nil, mongoerr.New(mongoerr.ProtocolError, "OP_QUERY is truncated before numberToReturn")
	}
	q.NumberToSkip = int32(binary.LittleEndian.Uint32(rest))
	q.NumberToReturn = int32(binary.LittleEndian.Uint32(rest[4:]))
	doc, rest, err := readDocument(rest[8:])
	if err != nil {
		return nil, err
	}
	q.Query = doc
	if len(rest) > 0 {
		if q.ReturnFieldsSelector, rest, err = readDocument(rest); err != nil {
			return nil, err
		}
		if len(rest) > 0 {
			return nil, mongoerr.New(mongoerr.ProtocolError, "OP_QUERY has %d bytes after returnFieldsSelector", len(rest))
		}
	}
	return q, nil
}
