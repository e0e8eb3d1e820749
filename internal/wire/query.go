package wire

import (
	"bytes"
	"encoding/binary"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
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
// hello/isMaster of a connection, against "admin.$cmd", and some for
// authentication. Query and ReturnFieldsSelector alias the body buffer
// given to ParseQuery.
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

// CommandDB returns the database of an OP_QUERY to "<db>.$cmd", and false
// for any other namespace (a legacy query). As MongoDB's NamespaceString,
// the database ends at the first dot, so "a.b.$cmd" is a query.
func (q *Query) CommandDB() (string, bool) {
	db, coll, _ := strings.Cut(q.FullCollectionName, ".")
	return db, coll == "$cmd"
}

// Command returns the command of an OP_QUERY to db's $cmd as the body of an
// OP_MSG, upconverted as MongoDB 7.0 does (opMsgRequestFromLegacyRequest,
// upconvertRequest). It refuses the exhaust flag (18527), a numberToReturn
// other than 1 or -1 (16979) and a $db in the query (40621); it drops
// $queryOptions and moves its $readPreference into the command
// (InvalidOptions if the command has one too); without a read preference,
// the SecondaryOK flag asks for secondaryPreferred; and it appends $db.
// A query wrapped in $query is not unwrapped: "$query" is then the
// command's name, as in MongoDB 7.0. The result is a new document.
func (q *Query) Command(db string) (bson.Raw, error) {
	if q.Flags&QueryExhaust != 0 {
		return nil, mongoerr.New(mongoerr.OpQueryExhaustCommand, "The 'exhaust' OP_QUERY flag is invalid for commands: %s %s",
			q.FullCollectionName, values.ShellDoc(q.Query))
	}
	if q.NumberToReturn != 1 && q.NumberToReturn != -1 {
		return nil, mongoerr.New(mongoerr.OpQueryBadNumberToReturn, "Bad numberToReturn (%d) for $cmd type ns - can only be 1 or -1", q.NumberToReturn)
	}
	if _, err := q.Query.LookupErr("$db"); err == nil {
		return nil, mongoerr.New(mongoerr.OpQueryWithDB, "$db is not allowed in OP_QUERY requests")
	}
	_, err := q.Query.LookupErr("$readPreference")
	hasReadPref := err == nil
	var readPref bson.RawValue
	if opts, err := q.Query.LookupErr("$queryOptions"); err == nil {
		if opts.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.ExpectedObject("$queryOptions")
		}
		if readPref, err = opts.Document().LookupErr("$readPreference"); err == nil && hasReadPref {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "Duplicate readPreference found in command object.")
		}
	}
	out := make([]byte, 4, len(q.Query)+len(db)+64)
	elems, _ := q.Query.Elements() // valid: ParseQuery validated it
	for _, e := range elems {
		if e.Key() != "$queryOptions" {
			out = append(out, e...)
		}
	}
	switch {
	case readPref.Type != 0:
		out = bsoncore.AppendValueElement(out, "$readPreference", bsoncore.Value{Type: bsoncore.Type(readPref.Type), Data: readPref.Value})
	case !hasReadPref && q.Flags&QuerySecondaryOK != 0:
		pref := bsoncore.NewDocumentBuilder().AppendString("mode", "secondaryPreferred").Build()
		out = bsoncore.AppendDocumentElement(out, "$readPreference", pref)
	}
	out = bsoncore.AppendStringElement(out, "$db", db)
	out = append(out, 0)
	return bson.Raw(bsoncore.UpdateLength(out, 0, int32(len(out)))), nil
}
