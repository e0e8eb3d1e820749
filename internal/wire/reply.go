package wire

import "encoding/binary"

// OP_REPLY responseFlags bits.
const (
	// ReplyCursorNotFound: the getMore's cursor does not exist.
	ReplyCursorNotFound int32 = 1 << 0
	// ReplyQueryFailure: the single document returned is {$err: ...}.
	ReplyQueryFailure int32 = 1 << 1
	// ReplyAwaitCapable: the server supports AwaitData; always set by
	// servers since MongoDB 1.6.
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
