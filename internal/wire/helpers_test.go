package wire

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"

	"github.com/folio-db/folio/internal/mongoerr"
)

// D builds a bson.D from alternating keys and values.
func D(kv ...any) bson.D {
	d := make(bson.D, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return d
}

// doc marshals alternating keys and values into a BSON document.
func doc(t testing.TB, kv ...any) []byte {
	t.Helper()
	b, err := bson.Marshal(D(kv...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kind0 is a body section.
func kind0(d []byte) []byte { return append([]byte{0}, d...) }

// kind1 is a document sequence section.
func kind1(id string, docs ...[]byte) []byte {
	b := []byte{1}
	idx, b := bsoncore.ReserveLength(b)
	b = append(b, id...)
	b = append(b, 0)
	for _, d := range docs {
		b = append(b, d...)
	}
	return bsoncore.UpdateLength(b, idx, int32(len(b[idx:])))
}

// opMsg builds a complete OP_MSG from raw sections with the driver's
// wiremessage helpers; with ChecksumPresent in flags it appends a valid
// CRC-32C.
func opMsg(reqID int32, flags uint32, sections ...[]byte) []byte {
	idx, b := wiremessage.AppendHeaderStart(nil, reqID, 0, wiremessage.OpMsg)
	b = wiremessage.AppendMsgFlags(b, wiremessage.MsgFlag(flags))
	for _, s := range sections {
		b = append(b, s...)
	}
	if flags&ChecksumPresent != 0 {
		b = append(b, 0, 0, 0, 0)
		b = bsoncore.UpdateLength(b, idx, int32(len(b)))
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
		return b
	}
	return bsoncore.UpdateLength(b, idx, int32(len(b)))
}

// split returns the header and body of a complete message.
func split(msg []byte) (Header, []byte) {
	return decodeHeader(msg), msg[HeaderSize:]
}

// errKind classifies an error the way the server must: "" for none, "close"
// for a framing error, otherwise the mongoerr code name.
func errKind(err error) string {
	if err == nil {
		return ""
	}
	var me *mongoerr.Error
	if errors.As(err, &me) {
		return me.Code.Name()
	}
	if errors.Is(err, ErrProtocol) {
		return "close"
	}
	return "other: " + err.Error()
}

// checkErr fails unless err is of the wanted kind.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if got := errKind(err); got != want {
		t.Fatalf("error kind %q, want %q (err: %v)", got, want, err)
	}
}
