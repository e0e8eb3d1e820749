package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// Size limits advertised in the hello reply.
const (
	// MaxMessageSize is maxMessageSizeBytes: no message, compressed or not,
	// may be longer, header included.
	MaxMessageSize = 48_000_000
	// MaxBSONSize is maxBsonObjectSize, the largest user document.
	MaxBSONSize = 16 * 1024 * 1024
	// MaxBSONInternalSize is the largest document accepted on the wire: a
	// command may wrap a MaxBSONSize document with up to 16KiB of overhead.
	MaxBSONInternalSize = MaxBSONSize + 16*1024
)

// HeaderSize is the length of the standard message header.
const HeaderSize = 16

// OpCode identifies the message type in the header.
type OpCode int32

// Opcodes of the wire protocol. Only OpMsg, OpCompressed and, for the
// initial handshake, OpQuery are still sent by drivers.
const (
	OpReply       OpCode = 1
	OpUpdate      OpCode = 2001
	OpInsert      OpCode = 2002
	OpQuery       OpCode = 2004
	OpGetMore     OpCode = 2005
	OpDelete      OpCode = 2006
	OpKillCursors OpCode = 2007
	OpCompressed  OpCode = 2012
	OpMsg         OpCode = 2013
)

// Legacy reports whether a message with opcode c is answered with an
// OP_REPLY (an OP_QUERY, or an OP_GET_MORE's refusal).
func (c OpCode) Legacy() bool { return c == OpQuery || c == OpGetMore }

func (c OpCode) String() string {
	switch c {
	case OpReply:
		return "OP_REPLY"
	case OpUpdate:
		return "OP_UPDATE"
	case OpInsert:
		return "OP_INSERT"
	case OpQuery:
		return "OP_QUERY"
	case OpGetMore:
		return "OP_GET_MORE"
	case OpDelete:
		return "OP_DELETE"
	case OpKillCursors:
		return "OP_KILL_CURSORS"
	case OpCompressed:
		return "OP_COMPRESSED"
	case OpMsg:
		return "OP_MSG"
	}
	return "opcode(" + strconv.Itoa(int(c)) + ")"
}

// Header is the standard message header: four little-endian int32s. Length
// counts the whole message, header included; ResponseTo is the RequestID of
// the request a reply answers.
type Header struct {
	Length     int32
	RequestID  int32
	ResponseTo int32
	OpCode     OpCode
}

// eagerReadLimit is the largest body ReadMessage allocates before the bytes
// arrive; longer bodies grow as they are read, so a header announcing a large
// message costs memory only once the peer actually sends it.
const eagerReadLimit = 64 << 10

// ReadMessage reads one whole message from r and returns its header and body
// (the bytes after the header), read into memory of its own: ReadHeader,
// then ReadBody without a buffer.
func ReadMessage(r io.Reader) (Header, []byte, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return Header{}, nil, err
	}
	body, err := ReadBody(r, h, nil)
	if err != nil {
		return Header{}, nil, err
	}
	return h, body, nil
}

// ReadHeader reads a message's header from r. A length below HeaderSize or
// above MaxMessageSize is rejected before any of the body is read. It returns
// io.EOF if r ends cleanly before the first header byte.
func ReadHeader(r io.Reader) (Header, error) {
	var hb [HeaderSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return Header{}, err
	}
	h := decodeHeader(hb[:])
	if h.Length < HeaderSize || h.Length > MaxMessageSize {
		return Header{}, fmt.Errorf("%w: message length %d outside [%d, %d]", ErrProtocol, h.Length, HeaderSize, MaxMessageSize)
	}
	return h, nil
}

// ReadBody reads the body of the message with header h from r, into buf's
// memory when it has room: the body then aliases buf. Otherwise the body
// grows from buf (or, without one, from eagerReadLimit bytes), doubling as
// the bytes arrive, and never allocates more than the body at once. It
// returns io.ErrUnexpectedEOF if r ends inside the body.
func ReadBody(r io.Reader, h Header, buf []byte) ([]byte, error) {
	body, err := readBody(r, int(h.Length)-HeaderSize, buf)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return body, err
}

// readBody reads exactly n bytes from r, into buf's memory when it has room,
// else growing from it as ReadBody says.
func readBody(r io.Reader, n int, buf []byte) ([]byte, error) {
	b := buf[:0]
	if cap(b) == 0 {
		b = make([]byte, 0, min(n, eagerReadLimit))
	}
	for {
		m, err := io.ReadFull(r, b[len(b):min(cap(b), n)])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
		if len(b) == n {
			return b, nil
		}
		nb := make([]byte, len(b), min(2*cap(b), n))
		copy(nb, b)
		b = nb
	}
}

// decodeHeader decodes the first HeaderSize bytes of b.
func decodeHeader(b []byte) Header {
	return Header{
		Length:     int32(binary.LittleEndian.Uint32(b[0:])),
		RequestID:  int32(binary.LittleEndian.Uint32(b[4:])),
		ResponseTo: int32(binary.LittleEndian.Uint32(b[8:])),
		OpCode:     OpCode(binary.LittleEndian.Uint32(b[12:])),
	}
}

// appendHeader appends h in wire format.
func appendHeader(dst []byte, h Header) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Length))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.RequestID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.ResponseTo))
	return binary.LittleEndian.AppendUint32(dst, uint32(h.OpCode))
}

// finishLength writes the length of the message that starts at dst[start]
// and ends at the end of dst into its header.
func finishLength(dst []byte, start int) {
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
}
