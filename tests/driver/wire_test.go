package driver_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/folio-db/folio/internal/values"
)

// Opcodes and OP_MSG flags of the wire protocol.
const (
	opReply        = 1
	opInsert       = 2002
	opCompressed   = 2012
	opMsg          = 2013
	flagChecksum   = 1 << 0
	flagMoreToCome = 1 << 1
)

// hangGuard bounds how long a raw read may block, so a server that neither
// answers nor closes fails the test instead of hanging it. It is a liveness
// guard, not a timing assertion: healthy replies take microseconds.
const hangGuard = 30 * time.Second

// isTimeout reports whether err is a network timeout: the hang guard fired.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// rawDial opens a plain TCP connection to in, closed when the test ends.
func rawDial(t testing.TB, in interface{ Addr() string }) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", in.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if a, ok := in.(interface{ AuthEnabled() bool }); ok && testAuth() && a.AuthEnabled() {
		rawLogin(t, c)
	}
	return c.(*net.TCPConn)
}

// message frames body as a wire message with a correct length.
func message(requestID, opcode int32, body []byte) []byte {
	return append(header(int32(16+len(body)), requestID, opcode), body...)
}

// header is a standard message header announcing length bytes.
func header(length, requestID, opcode int32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(length))
	b = binary.LittleEndian.AppendUint32(b, uint32(requestID))
	b = binary.LittleEndian.AppendUint32(b, 0)
	return binary.LittleEndian.AppendUint32(b, uint32(opcode))
}

// msgBody is an OP_MSG body: flags and one kind-0 section holding doc.
func msgBody(flags uint32, doc []byte) []byte {
	return append(append(binary.LittleEndian.AppendUint32(nil, flags), 0), doc...)
}

// readFrame reads one message and returns its opCode, responseTo and body.
func readFrame(c net.Conn) (op uint32, responseTo int32, body []byte, err error) {
	if err := c.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
		return 0, 0, nil, err
	}
	var h [16]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return 0, 0, nil, err
	}
	length := int32(binary.LittleEndian.Uint32(h[0:]))
	if length < 16 {
		return 0, 0, nil, errors.New("message shorter than its header")
	}
	body = make([]byte, length-16)
	if _, err := io.ReadFull(c, body); err != nil {
		return 0, 0, nil, err
	}
	return binary.LittleEndian.Uint32(h[12:]), int32(binary.LittleEndian.Uint32(h[8:])), body, nil
}

// readMsg reads one OP_MSG reply and returns its responseTo and document.
func readMsg(c net.Conn) (int32, bson.Raw, error) {
	op, responseTo, body, err := readFrame(c)
	if err != nil {
		return 0, nil, err
	}
	if op != opMsg || len(body) < 5 {
		return 0, nil, errors.New("reply is not an uncompressed OP_MSG")
	}
	doc := bson.Raw(body[5:])
	return responseTo, doc, doc.Validate()
}

// rawCommand sends cmd on c and returns the reply document.
func rawCommand(t *testing.T, c net.Conn, requestID int32, cmd bson.D) bson.Raw {
	t.Helper()
	if _, err := c.Write(message(requestID, opMsg, msgBody(0, mustRaw(t, cmd)))); err != nil {
		t.Fatal(err)
	}
	responseTo, reply, err := readMsg(c)
	if err != nil {
		t.Fatal(err)
	}
	if responseTo != requestID {
		t.Fatalf("reply answers request %d, want %d", responseTo, requestID)
	}
	return reply
}

// requireRejected fails unless the server, having read a malformed message
// on c, either closes c or (as MongoDB does for some malformed bodies)
// answers with ok: 0. A connection the framing makes unreadable must close.
func requireRejected(t *testing.T, c net.Conn, mustClose bool) {
	t.Helper()
	_, reply, err := readMsg(c)
	switch {
	case isTimeout(err):
		t.Fatalf("the server neither answered nor closed the connection within %v", hangGuard)
	case err != nil:
		return // closed
	case mustClose:
		t.Fatalf("the server answered %v; want the connection closed", reply)
	}
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 0 {
		t.Fatalf("the server answered %v to a malformed message; want ok: 0", reply)
	}
}

// TestMalformedMessages proves a malformed message is refused on its own
// connection only: another driver client, and a raw connection opened
// before, keep working, and the stored data is unchanged.
func TestMalformedMessages(t *testing.T) {
	ping := mustRaw(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	insert := mustRaw(t, bson.D{{Key: "insert", Value: "victim"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: "evil"}}}}, {Key: "$db", Value: testDB}})
	badLength := bytes.Clone(insert)
	binary.LittleEndian.PutUint32(badLength, uint32(len(insert)+100))
	badType := bytes.Clone(insert)
	badType[4] = 0x55 // the first element's type byte
	tests := []struct {
		name      string
		bytes     []byte
		halfClose bool // send EOF after the bytes: the message is truncated
		mustClose bool
	}{
		{name: "length below header", bytes: append(header(8, 1, opMsg), 0, 0, 0, 0), mustClose: true},
		{name: "negative length", bytes: header(-1, 1, opMsg), mustClose: true},
		{name: "length above 48MB", bytes: header(48_000_001, 1, opMsg), mustClose: true},
		{name: "max int32 length", bytes: header(1<<31-1, 1, opMsg), mustClose: true},
		{name: "truncated body", bytes: message(1, opMsg, msgBody(0, ping))[:20], halfClose: true, mustClose: true},
		{name: "garbage body", bytes: message(1, opMsg, bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 16))},
		{name: "empty body", bytes: message(1, opMsg, nil)},
		{name: "BSON length past end", bytes: message(1, opMsg, msgBody(0, badLength))},
		{name: "BSON bad element type", bytes: message(1, opMsg, msgBody(0, badType))},
		{name: "BSON missing terminator", bytes: message(1, opMsg, msgBody(0, insert[:len(insert)-1]))},
		{name: "checksum flag without checksum", bytes: message(1, opMsg, msgBody(flagChecksum, insert))},
		{name: "unknown required flag", bytes: message(1, opMsg, msgBody(1<<5, insert))},
		{name: "no body section", bytes: message(1, opMsg, []byte{0, 0, 0, 0})},
		{name: "two body sections", bytes: message(1, opMsg, append(msgBody(0, insert), append([]byte{0}, ping...)...))},
		{name: "unknown section kind", bytes: message(1, opMsg, append(msgBody(0, insert), 7, 1, 2, 3))},
		{name: "bad document sequence size", bytes: message(1, opMsg, append(msgBody(0, insert), 1, 0xff, 0xff, 0, 0, 'd', 0))},
		{name: "legacy OP_INSERT", bytes: message(1, opInsert, append([]byte{0, 0, 0, 0, 't', '.', 'v', 0}, insert...))},
		{name: "compressed unknown compressor", bytes: message(1, opCompressed, compressedBody(opMsg, 1<<10, 99, []byte("xx")))},
		{name: "compressed huge size", bytes: message(1, opCompressed, compressedBody(opMsg, 1<<31-1, 1, []byte{1, 2, 3}))},
		{name: "compressed noop size mismatch", bytes: message(1, opCompressed, compressedBody(opMsg, 500, 0, msgBody(0, insert)))},
		{name: "compressed garbage zlib", bytes: message(1, opCompressed, compressedBody(opMsg, 100, 2, []byte("not zlib at all")))},
	}
	client, in := startServer(t)
	victim := client.Database(testDB).Collection("victim")
	want := make([]bson.Raw, 50)
	for i := range want {
		want[i] = mustRaw(t, bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: "intact"}})
	}
	seed(t, victim, want)
	bystander := rawDial(t, in)
	rawCommand(t, bystander, 1, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rawDial(t, in)
			if _, err := c.Write(tt.bytes); err != nil {
				t.Fatal(err)
			}
			if tt.halfClose {
				if err := c.CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			requireRejected(t, c, tt.mustClose)
			if err := client.Ping(t.Context(), nil); err != nil {
				t.Fatalf("driver client after the malformed message: %v", err)
			}
			reply := rawCommand(t, bystander, int32(i+2), bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
			if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
				t.Fatalf("bystander connection ping: %v", reply)
			}
		})
	}
	got := findAll(t, victim, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if !slicesEqualRaw(got, want) {
		t.Fatalf("victim collection changed: %v", got)
	}
}

// compressedBody is an OP_COMPRESSED body wrapping payload.
func compressedBody(originalOpcode, uncompressedSize int32, compressor byte, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(originalOpcode))
	b = binary.LittleEndian.AppendUint32(b, uint32(uncompressedSize))
	return append(append(b, compressor), payload...)
}

// slicesEqualRaw reports whether a and b hold the same documents, byte for
// byte, in the same order.
func slicesEqualRaw(a, b []bson.Raw) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// seqSection is an OP_MSG kind-1 section: document sequence id of docs.
func seqSection(id string, docs ...[]byte) []byte {
	payload := append([]byte(id), 0)
	for _, d := range docs {
		payload = append(payload, d...)
	}
	return append(binary.LittleEndian.AppendUint32([]byte{1}, uint32(4+len(payload))), payload...)
}

// TestOpMsgParseErrorsAnswered: an OP_MSG read whole but malformed within
// (a document sequence repeating a body field or another sequence, two
// bodies, an unknown section kind, no body) is answered with the parse
// error on a connection that stays open, as MongoDB's receivedCommands
// answers OpMsg::parse's failures outside its
// ConnectionFatalMessageParseError class; nothing is written. With
// moreToCome the error gets no reply. A replica set member stamps the
// reply with its cluster time.
func TestOpMsgParseErrorsAnswered(t *testing.T) {
	client, in := startServer(t)
	insert := mustRaw(t, bson.D{{Key: "insert", Value: "seqdup"}, {Key: "$db", Value: testDB}})
	withDocs := mustRaw(t, bson.D{{Key: "insert", Value: "seqdup"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "$db", Value: testDB}})
	d1 := mustRaw(t, bson.D{{Key: "_id", Value: 2}})
	d2 := mustRaw(t, bson.D{{Key: "_id", Value: 3}})
	flags := []byte{0, 0, 0, 0}
	for _, tt := range []struct {
		name     string
		sections []byte
		code     int32
		// checksum sets the checksum flag and ends the message with a
		// checksum that does not match it.
		checksum bool
	}{
		{"sequence repeats a body field", slices.Concat([]byte{0}, withDocs, seqSection("documents", d1)), 40433, false},
		{"two sequences of one name", slices.Concat([]byte{0}, insert, seqSection("documents", d1), seqSection("documents", d2)), 40431, false},
		{"two bodies", slices.Concat([]byte{0}, withDocs, []byte{0}, withDocs), 40430, false},
		{"unknown section kind", slices.Concat([]byte{0}, withDocs, []byte{7, 1, 2, 3}), 40432, false},
		{"no body", seqSection("documents", d1), 40587, false},
		{"checksum does not match", slices.Concat([]byte{0}, withDocs), 288, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			flags := flags
			if tt.checksum {
				flags = []byte{flagChecksum, 0, 0, 0}
				tt.sections = slices.Concat(tt.sections, []byte{1, 2, 3, 4})
			}
			c := rawDial(t, in)
			if _, err := c.Write(message(1, opMsg, slices.Concat(flags, tt.sections))); err != nil {
				t.Fatal(err)
			}
			responseTo, reply, err := readMsg(c)
			if err != nil {
				t.Fatalf("no reply, the connection closed: %v", err)
			}
			if code, _ := reply.Lookup("code").AsInt64OK(); responseTo != 1 || code != int64(tt.code) {
				t.Fatalf("reply to %d: %v, want code %d", responseTo, reply, tt.code)
			}
			// moreToCome: no reply; the next request's reply comes next.
			if _, err := c.Write(message(2, opMsg, slices.Concat([]byte{flags[0] | flagMoreToCome, 0, 0, 0}, tt.sections))); err != nil {
				t.Fatal(err)
			}
			if ok := rawCommand(t, c, 3, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("ok").Double(); ok != 1 {
				t.Fatal("ping after the malformed messages failed")
			}
		})
	}
	if n, err := client.Database(testDB).Collection("seqdup").CountDocuments(t.Context(), bson.D{}); err != nil || n != 0 {
		t.Fatalf("seqdup holds %d documents (%v), want none written", n, err)
	}
	// A replica set member's error reply ends with $clusterTime and
	// operationTime, as its every reply does.
	c := rawDial(t, startInstance(t, replSetConfig()))
	if _, err := c.Write(message(1, opMsg, slices.Concat(flags, []byte{0}, withDocs, seqSection("documents", d1)))); err != nil {
		t.Fatal(err)
	}
	_, reply, err := readMsg(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := reply.Lookup("$clusterTime", "clusterTime").TimestampOK(); !ok {
		t.Fatalf("reply %v, want $clusterTime", reply)
	}
	if _, _, ok := reply.Lookup("operationTime").TimestampOK(); !ok {
		t.Fatalf("reply %v, want operationTime", reply)
	}
}

// TestMoreToComeGetsNoReply proves an OP_MSG with moreToCome is executed and
// answered with nothing: the next reply on the connection answers the next
// request.
func TestMoreToComeGetsNoReply(t *testing.T) {
	client, in := startServer(t)
	c := rawDial(t, in)
	insert := bson.D{
		{Key: "insert", Value: "fire"},
		{Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: int32(1)}}, bson.D{{Key: "_id", Value: int32(2)}}}},
		{Key: "writeConcern", Value: bson.D{{Key: "w", Value: 0}}},
		{Key: "$db", Value: testDB},
	}
	if _, err := c.Write(message(1, opMsg, msgBody(flagMoreToCome, mustRaw(t, insert)))); err != nil {
		t.Fatal(err)
	}
	reply := rawCommand(t, c, 2, bson.D{{Key: "count", Value: "fire"}, {Key: "$db", Value: testDB}})
	if n, _ := reply.Lookup("n").AsInt64OK(); n != 2 {
		t.Fatalf("count after the unacknowledged insert: %v, want n: 2", reply)
	}
	if n, err := client.Database(testDB).Collection("fire").CountDocuments(t.Context(), bson.D{}); err != nil || n != 2 {
		t.Fatalf("driver count = %d, %v; want 2", n, err)
	}
}

// TestExhaustGetMore: a getMore sent with exhaustAllowed is answered with
// every remaining batch, unasked: each reply but the last has moreToCome
// and answers the reply before it (the first answers the request), and
// the last closes the cursor. The connection then takes commands again.
func TestExhaustGetMore(t *testing.T) {
	client, in := startServer(t)
	docs := make([]any, 10)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}}
	}
	if _, err := client.Database(testDB).Collection("exhaust").InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	c := rawDial(t, in)
	first := rawCommand(t, c, 1, bson.D{{Key: "find", Value: "exhaust"}, {Key: "batchSize", Value: int32(2)}, {Key: "$db", Value: testDB}})
	id := first.Lookup("cursor", "id").Int64()
	getMore := bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "exhaust"}, {Key: "batchSize", Value: int32(3)}, {Key: "$db", Value: testDB}}
	if _, err := c.Write(message(2, opMsg, msgBody(flagExhaustAllowed, mustRaw(t, getMore)))); err != nil {
		t.Fatal(err)
	}
	var got []int32
	prev := int32(2)
	for n := 0; ; n++ {
		r := readReply(t, c)
		if r.responseTo != prev {
			t.Fatalf("reply %d answers %d, want %d", n, r.responseTo, prev)
		}
		prev = r.requestID
		batch, _ := r.doc.Lookup("cursor", "nextBatch").Array().Values()
		for _, d := range batch {
			got = append(got, d.Document().Lookup("_id").Int32())
		}
		more := r.flags&flagMoreToCome != 0
		if open := r.doc.Lookup("cursor", "id").Int64() != 0; more != open {
			t.Fatalf("reply %d: moreToCome %v with the cursor open %v: %s", n, more, open, r.doc)
		}
		if !more {
			break
		}
	}
	if want := []int32{2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
		t.Fatalf("streamed %v, want %v", got, want)
	}
	if ok := rawCommand(t, c, 3, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("ok").AsFloat64(); ok != 1 {
		t.Fatal("ping after the stream failed")
	}
}

// TestExhaustCursorKilledOnDisconnect: a client that goes away in the
// middle of an exhaust getMore's stream leaves no cursor open, as
// MongoDB's session workflow kills the cursor of the getMore it would
// have run next (killExhaust) when the session ends. The batches are
// large enough that the stream cannot finish into the socket buffers.
func TestExhaustCursorKilledOnDisconnect(t *testing.T) {
	client, in := startServer(t)
	coll := client.Database(testDB).Collection("exhaustgone")
	pad := strings.Repeat("x", 256<<10)
	docs := make([]any, 64)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "pad", Value: pad}}
	}
	if _, err := coll.InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	c := rawDial(t, in)
	if err := c.SetReadBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	first := rawCommand(t, c, 1, bson.D{{Key: "find", Value: "exhaustgone"}, {Key: "batchSize", Value: int32(1)}, {Key: "$db", Value: testDB}})
	id := first.Lookup("cursor", "id").Int64()
	getMore := bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "exhaustgone"}, {Key: "batchSize", Value: int32(1)}, {Key: "$db", Value: testDB}}
	if _, err := c.Write(message(2, opMsg, msgBody(flagExhaustAllowed, mustRaw(t, getMore)))); err != nil {
		t.Fatal(err)
	}
	if r := readReply(t, c); r.flags&flagMoreToCome == 0 {
		t.Fatalf("first reply of the stream without moreToCome: %v", r.doc)
	}
	c.Close()
	open := func() int64 {
		var status bson.Raw
		if err := client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&status); err != nil {
			t.Fatal(err)
		}
		n, _ := status.Lookup("metrics", "cursor", "open", "total").AsInt64OK()
		return n
	}
	for deadline := time.Now().Add(hangGuard); open() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the exhaust cursor is still open %v after its client went away", hangGuard)
		}
	}
}

// withChecksum sets the checksum flag of msg, a whole OP_MSG, and appends
// the CRC-32C of the result, fixing the length.
func withChecksum(msg []byte) []byte {
	msg = slices.Clone(msg)
	msg[16] |= flagChecksum
	binary.LittleEndian.PutUint32(msg, uint32(len(msg)+4))
	return binary.LittleEndian.AppendUint32(msg, crc32.Checksum(msg, crc32.MakeTable(crc32.Castagnoli)))
}

// readChecksummed reads one OP_MSG reply that must carry a checksum
// matching its contents, and returns its flags and document.
func readChecksummed(t *testing.T, c net.Conn) (uint32, bson.Raw) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
		t.Fatal(err)
	}
	var h [16]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		t.Fatal(err)
	}
	msg := make([]byte, binary.LittleEndian.Uint32(h[0:]))
	copy(msg, h[:])
	if _, err := io.ReadFull(c, msg[16:]); err != nil {
		t.Fatal(err)
	}
	flags := binary.LittleEndian.Uint32(msg[16:])
	if flags&flagChecksum == 0 {
		t.Fatalf("reply without a checksum: %v", bson.Raw(msg[21:]))
	}
	end := len(msg) - 4
	if got, want := binary.LittleEndian.Uint32(msg[end:]), crc32.Checksum(msg[:end], crc32.MakeTable(crc32.Castagnoli)); got != want {
		t.Fatalf("reply checksum %#x, want %#x", got, want)
	}
	return flags, bson.Raw(msg[21:end])
}

// TestChecksummedRequestsGetChecksummedReplies: the reply to an OP_MSG
// carrying a checksum carries one too, a command's, a parse error's and
// each of an exhaust getMore's stream, as MongoDB's session workflow
// checksums them on a connection without TLS; a request without one gets
// none.
func TestChecksummedRequestsGetChecksummedReplies(t *testing.T) {
	client, in := startServer(t)
	docs := make([]any, 5)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}}
	}
	if _, err := client.Database(testDB).Collection("sums").InsertMany(t.Context(), docs); err != nil {
		t.Fatal(err)
	}
	c := rawDial(t, in)
	ping := mustRaw(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	if _, err := c.Write(withChecksum(message(1, opMsg, msgBody(0, ping)))); err != nil {
		t.Fatal(err)
	}
	if _, reply := readChecksummed(t, c); reply.Lookup("ok").AsFloat64() != 1 {
		t.Fatalf("ping: %v", reply)
	}
	// A checksum that does not match: the error reply is checksummed.
	bad := withChecksum(message(2, opMsg, msgBody(0, ping)))
	bad[len(bad)-1] ^= 1
	if _, err := c.Write(bad); err != nil {
		t.Fatal(err)
	}
	if _, reply := readChecksummed(t, c); reply.Lookup("code").Int32() != 288 {
		t.Fatalf("reply to a wrong checksum: %v, want code 288", reply)
	}
	first := rawCommand(t, c, 3, bson.D{{Key: "find", Value: "sums"}, {Key: "batchSize", Value: int32(1)}, {Key: "$db", Value: testDB}})
	getMore := mustRaw(t, bson.D{{Key: "getMore", Value: first.Lookup("cursor", "id").Int64()}, {Key: "collection", Value: "sums"}, {Key: "batchSize", Value: int32(2)}, {Key: "$db", Value: testDB}})
	if _, err := c.Write(withChecksum(message(4, opMsg, msgBody(flagExhaustAllowed, getMore)))); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		flags, reply := readChecksummed(t, c)
		batch, _ := reply.Lookup("cursor", "nextBatch").Array().Values()
		n += len(batch)
		if flags&flagMoreToCome == 0 {
			break
		}
	}
	if n != 4 {
		t.Fatalf("the exhaust stream returned %d documents, want 4", n)
	}
}

// TestDollarDBRead: an OP_MSG without $db is refused with 40571, one whose
// $db is not a string with 13111, as MongoDB's OpMsgRequest::getDatabase
// reads it through checkAndGetStringData.
func TestDollarDBRead(t *testing.T) {
	_, in := startServer(t)
	c := rawDial(t, in)
	for i, tt := range []struct {
		cmd  bson.D
		code int32
		msg  string
	}{
		{bson.D{{Key: "ping", Value: 1}}, 40571, "OP_MSG requests require a $db argument"},
		{bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: int32(1)}}, 13111, "wrong type for field ($db) int != string"},
		{bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: bson.D{}}}, 13111, "wrong type for field ($db) object != string"},
	} {
		reply := rawCommand(t, c, int32(i+1), tt.cmd)
		if code, _ := reply.Lookup("code").AsInt64OK(); code != int64(tt.code) || reply.Lookup("errmsg").StringValue() != tt.msg {
			t.Errorf("%v: %v, want code %d %q", tt.cmd, reply, tt.code, tt.msg)
		}
	}
}

// TestUnknownOpcodeIgnored: a message of an opcode MongoDB 7.0 does not
// know (an OP_REPLY sent to the server among them) is dropped without a
// reply, as MongoDB's UnsupportedOpRunner drops it, and the connection
// goes on: the next reply answers the next request.
func TestUnknownOpcodeIgnored(t *testing.T) {
	_, in := startServer(t)
	c := rawDial(t, in)
	ping := bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}
	for i, op := range []int32{9999, opReply, 2010, 0} {
		if _, err := c.Write(message(int32(2*i+1), op, msgBody(0, mustRaw(t, ping)))); err != nil {
			t.Fatal(err)
		}
		if ok := rawCommand(t, c, int32(2*i+2), ping).Lookup("ok").AsFloat64(); ok != 1 {
			t.Fatalf("ping after opcode %d failed", op)
		}
	}
}

// TestUnacknowledgedDriverWrites proves writes a driver sends with
// writeConcern w:0 (OP_MSG moreToCome) are applied.
func TestUnacknowledgedDriverWrites(t *testing.T) {
	in := startInstance(t, defaultConfig())
	// One connection, so the acknowledged read is served after the writes.
	client := connect(t, in, options.Client().SetWriteConcern(writeconcern.Unacknowledged()).SetMaxPoolSize(1))
	coll := client.Database(testDB).Collection("w0")
	res, err := coll.InsertOne(t.Context(), bson.D{{Key: "_id", Value: int32(1)}, {Key: "n", Value: int32(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Acknowledged {
		t.Fatal("an insert with w:0 reported itself acknowledged")
	}
	if _, err := coll.UpdateOne(t.Context(), bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int32(5)}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coll.InsertMany(t.Context(), []any{bson.D{{Key: "_id", Value: int32(2)}}, bson.D{{Key: "_id", Value: int32(3)}}}); err != nil {
		t.Fatal(err)
	}
	got := findAll(t, coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	want := []bson.Raw{
		mustRaw(t, bson.D{{Key: "_id", Value: int32(1)}, {Key: "n", Value: int32(5)}}),
		mustRaw(t, bson.D{{Key: "_id", Value: int32(2)}}),
		mustRaw(t, bson.D{{Key: "_id", Value: int32(3)}}),
	}
	if !slicesEqualRaw(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
}

// opcodeTap counts the messages a client receives, by whether they are
// compressed, and the compressed bytes of the compressed ones (after the
// OP_COMPRESSED prefix), all and the last message's.
type opcodeTap struct {
	compressed, plain               atomic.Int64
	compressedBytes, lastCompressed atomic.Int64
}

// DialContext dials and wraps the connection so its replies are counted.
func (tap *opcodeTap) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &tappedConn{Conn: c, tap: tap}, nil
}

// tappedConn follows message boundaries in what it reads to see each
// header's opcode.
type tappedConn struct {
	net.Conn
	tap  *opcodeTap
	hdr  []byte
	skip int
}

func (c *tappedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	for b := p[:n]; len(b) > 0; {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip -= k
			b = b[k:]
			continue
		}
		k := min(16-len(c.hdr), len(b))
		c.hdr = append(c.hdr, b[:k]...)
		b = b[k:]
		if len(c.hdr) == 16 {
			if binary.LittleEndian.Uint32(c.hdr[12:]) == opCompressed {
				c.tap.compressed.Add(1)
				n := int64(binary.LittleEndian.Uint32(c.hdr[0:])) - 16 - 9
				c.tap.compressedBytes.Add(n)
				c.tap.lastCompressed.Store(n)
			} else {
				c.tap.plain.Add(1)
			}
			c.skip = int(binary.LittleEndian.Uint32(c.hdr[0:])) - 16
			c.hdr = c.hdr[:0]
		}
	}
	return n, err
}

// TestCompression proves clients that ask for snappy, zlib or zstd get
// compressed replies and can do CRUD through them.
func TestCompression(t *testing.T) {
	in := startInstance(t, defaultConfig())
	for _, compressor := range []string{"snappy", "zlib", "zstd"} {
		t.Run(compressor, func(t *testing.T) {
			tap := &opcodeTap{}
			client := connect(t, in, options.Client().SetCompressors([]string{compressor}).SetDialer(tap))
			coll := client.Database(testDB).Collection(compressor)
			docs := make([]any, 200)
			for i := range docs {
				docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "text", Value: "compressible compressible compressible"}}
			}
			if _, err := coll.InsertMany(t.Context(), docs); err != nil {
				t.Fatal(err)
			}
			if res, err := coll.UpdateMany(t.Context(), bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: 100}}}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "low", Value: true}}}}); err != nil || res.ModifiedCount != 100 {
				t.Fatalf("updateMany: %v, %v; want 100 modified", res, err)
			}
			if res, err := coll.DeleteMany(t.Context(), bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: 150}}}}); err != nil || res.DeletedCount != 50 {
				t.Fatalf("deleteMany: %v, %v; want 50 deleted", res, err)
			}
			got := findAll(t, coll, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(40))
			if len(got) != 150 {
				t.Fatalf("found %d documents, want 150", len(got))
			}
			for i, d := range got {
				_, low := d.Lookup("low").BooleanOK()
				if d.Lookup("_id").Int32() != int32(i) || low != (i < 100) {
					t.Fatalf("document %d: %v", i, d)
				}
			}
			if tap.compressed.Load() == 0 {
				t.Fatalf("no compressed reply among %d; want %s replies", tap.plain.Load(), compressor)
			}
			// serverStatus counts the replies sent before its own: the
			// compressed bytes the client read, less its reply's.
			var status bson.Raw
			if err := client.Database("admin").RunCommand(t.Context(), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&status); err != nil {
				t.Fatal(err)
			}
			compression := status.Lookup("network", "compression").Document()
			var names []string
			elems, _ := compression.Elements()
			for _, el := range elems {
				names = append(names, el.Key())
			}
			if !slices.Equal(names, []string{"snappy", "zstd", "zlib"}) {
				t.Fatalf("network.compression lists %v", names)
			}
			counts := func(side, dir string) int64 {
				v := compression.Lookup(compressor, side, dir)
				if v.Type != bson.TypeInt64 {
					t.Fatalf("%s.%s.%s is %v", compressor, side, dir, v)
				}
				return v.Int64()
			}
			if got, want := counts("compressor", "bytesOut"), tap.compressedBytes.Load()-tap.lastCompressed.Load(); got != want {
				t.Errorf("compressor.bytesOut %d, want the %d compressed bytes the client read before", got, want)
			}
			if in, out := counts("decompressor", "bytesIn"), counts("decompressor", "bytesOut"); in == 0 || out <= in {
				t.Errorf("decompressor bytesIn %d, bytesOut %d: want requests that decompress to more", in, out)
			}
			if in, out := counts("compressor", "bytesIn"), counts("compressor", "bytesOut"); out == 0 || in <= out {
				t.Errorf("compressor bytesIn %d, bytesOut %d: want replies that compress to less", in, out)
			}
		})
	}
}

// TestUnknownCompressorIgnored proves a hello offering only a compressor
// the server lacks negotiates none and the connection goes on uncompressed.
func TestUnknownCompressorIgnored(t *testing.T) {
	_, in := startServer(t)
	c := rawDial(t, in)
	reply := rawCommand(t, c, 1, bson.D{{Key: "hello", Value: 1}, {Key: "compression", Value: bson.A{"lz4"}}, {Key: "$db", Value: "admin"}})
	if v, err := reply.LookupErr("compression"); err == nil {
		if vals, _ := v.Array().Values(); len(vals) != 0 {
			t.Fatalf("hello negotiated %v for an unsupported compressor", v)
		}
	}
	if ok, _ := rawCommand(t, c, 2, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}}).Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatal("ping after negotiating no compressor failed")
	}
}

// TestLargeMessagesOutliveTheirBuffers: bodies above 64 KB are read into
// buffers reused by later messages, so what a command keeps past its reply
// must be its own. A cursor opened by a large find keeps the find, which
// the profiler records as its getMores' originatingCommand (as text, past
// 50 KB): the text holds its filter intact, and the filter still selects
// the same documents, after large inserts
// (with document sequences) and large finds (without) reused the buffers
// between the getMores; plain and compressed.
func TestLargeMessagesOutliveTheirBuffers(t *testing.T) {
	in := startInstance(t, defaultConfig())
	for _, compressor := range []string{"none", "snappy"} {
		t.Run(compressor, func(t *testing.T) {
			opts := options.Client()
			if compressor != "none" {
				opts.SetCompressors([]string{compressor})
			}
			client := connect(t, in, opts)
			ctx := t.Context()
			db := client.Database("outlive_" + compressor)
			coll := db.Collection("c")
			docs := make([]any, 300)
			for i := range docs {
				docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "n", Value: int32(i)}}
			}
			if _, err := coll.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			// a filter of more than 64 KB: every even n, among values
			// matching nothing
			in := bson.A{}
			for n := range 300 {
				if n%2 == 0 {
					in = append(in, int32(n))
				}
			}
			for i := range 2500 {
				in = append(in, "no such value "+strconv.Itoa(i))
			}
			filter := bson.D{{Key: "n", Value: bson.D{{Key: "$in", Value: in}}}}
			want, err := bson.Marshal(filter)
			if err != nil {
				t.Fatal(err)
			}
			wantText := values.ShellDoc(want)
			if err := db.RunCommand(ctx, bson.D{{Key: "profile", Value: 2}}).Err(); err != nil {
				t.Fatal(err)
			}
			cur, err := coll.Find(ctx, filter, options.Find().SetBatchSize(30).SetSort(bson.D{{Key: "_id", Value: 1}}))
			if err != nil {
				t.Fatal(err)
			}
			defer cur.Close(ctx)
			other := client.Database(testDB).Collection("outlive_" + compressor)
			var got []int32
			for cur.Next(ctx) {
				got = append(got, cur.Current.Lookup("n").Int32())
				if cur.RemainingBatchLength() > 0 {
					continue
				}
				// large messages before the next getMore
				docs := make([]any, 100)
				for i := range docs {
					docs[i] = bson.D{{Key: "pad", Value: strings.Repeat(strconv.Itoa(len(got)%10), 1000)}}
				}
				if _, err := other.InsertMany(ctx, docs); err != nil {
					t.Fatal(err)
				}
				if err := other.FindOne(ctx, bson.D{{Key: "pad", Value: bson.D{{Key: "$in", Value: in}}}}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
					t.Fatalf("large findOne: %v", err)
				}
			}
			if err := cur.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != 150 {
				t.Fatalf("%d documents, want 150", len(got))
			}
			for i, n := range got {
				if n != int32(2*i) {
					t.Fatalf("document %d has n = %d, want %d", i, n, 2*i)
				}
			}
			getMores := 0
			for _, e := range profileEntries(t, db) {
				if e.Lookup("op").StringValue() != "getmore" {
					continue
				}
				getMores++
				// past 50 KB it is shown as text (MongoDB's appendAsObjOrString):
				// the filter's, intact as far as it goes
				text := e.Lookup("originatingCommand", "$truncated").StringValue()
				if len(text) < 40<<10 || !strings.Contains(text, wantText[:40<<10]) {
					t.Fatalf("getMore's originatingCommand text (%d bytes) does not hold the find's filter", len(text))
				}
			}
			if getMores != 5 { // four batches, then the end
				t.Fatalf("%d getMores profiled, want 5", getMores)
			}
		})
	}
}

// TestTooDeepAnswered: a command nested deeper than 200 levels is answered
// with Overflow (15), as MongoDB answers it, on a connection that stays
// usable; 99 nested $and (199 levels under the command) still run.
func TestTooDeepAnswered(t *testing.T) {
	_, in := startServer(t)
	c := rawDial(t, in)
	nestedAnd := func(n int) bson.D {
		f := bson.D{{Key: "a", Value: 1}}
		for range n {
			f = bson.D{{Key: "$and", Value: bson.A{f}}}
		}
		return f
	}
	reply := rawCommand(t, c, 1, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: nestedAnd(99)}, {Key: "$db", Value: testDB}})
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatalf("99 nested $and: %v", reply)
	}
	reply = rawCommand(t, c, 2, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: nestedAnd(100)}, {Key: "$db", Value: testDB}})
	if code, _ := reply.Lookup("code").AsInt64OK(); code != 15 {
		t.Fatalf("100 nested $and: %v, want code 15", reply)
	}
	reply = rawCommand(t, c, 3, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "admin"}})
	if ok, _ := reply.Lookup("ok").AsFloat64OK(); ok != 1 {
		t.Fatalf("ping on the same connection: %v", reply)
	}
}
