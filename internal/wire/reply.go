package wire

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
)

// OP_REPLY responseFlags bits.
const (
	// ReplyCursorNotFound: the getMore's cursor does not exist.
	ReplyCursorNotFound int32 = 1 << 0
	// ReplyQueryFailure: the single document returned is {$err: ...}
	// (UnsupportedOpReply).
	ReplyQueryFailure int32 = 1 << 1
	// ReplyAwaitCapable: the server supports AwaitData; MongoDB sets it
	// (alone) on every reply to a command.
	ReplyAwaitCapable int32 = 1 << 3
)

// AppendReply appends a complete OP_REPLY to dst, the reply to an OP_QUERY:
// header, int32 responseFlags, int64 cursorID, int32 startingFrom, int32
// numberReturned and the documents, each a BSON document.
func AppendReply(dst []byte, requestID, responseTo int32, flags int32, cursorID int64, startingFrom int32, docs ...[]byte) []byte {
	start := len(dst)
	dst = appendHeader(dst, Header{RequestID: requestID, ResponseTo: responseTo, OpCode: OpReply})
	dst = binary.LittleEndian.AppendUint32(dst, uint32(flags))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(cursorID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(startingFrom))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(docs)))
	for _, d := range docs {
		dst = append(dst, d...)
	}
	finishLength(dst, start)
	return dst
}

// UpgradeAdvice ends MongoDB 7.0's refusals of what it no longer serves
// of the legacy protocol.
const UpgradeAdvice = "The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal"

// UnsupportedOpReply is the document of MongoDB 7.0's OP_REPLY, with
// ReplyQueryFailure alone set, to an op it no longer serves (an OP_QUERY
// that is a query rather than a command, an OP_GET_MORE): {$err, code:
// 5739101, ok: 0}, without errmsg or codeName.
func UnsupportedOpReply(op OpCode) bson.Raw {
	return bson.Raw(bsoncore.NewDocumentBuilder().
		AppendString("$err", op.String()+" is no longer supported. "+UpgradeAdvice).
		AppendInt32("code", int32(mongoerr.LegacyOpUnsupported)).
		AppendDouble("ok", 0).
		Build())
}
