package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestReadMessage(t *testing.T) {
	ping := opMsg(7, 0, kind0(doc(t, "ping", 1, "$db", "admin")))
	withLength := func(n int32) []byte {
		b := bytes.Clone(ping)
		binary.LittleEndian.PutUint32(b, uint32(n))
		return b
	}
	tests := []struct {
		name    string
		in      []byte
		wantErr error // nil, io.EOF, io.ErrUnexpectedEOF or ErrProtocol
	}{
		{"valid", ping, nil},
		{"header only", withLength(HeaderSize)[:HeaderSize], nil},
		{"empty stream", nil, io.EOF},
		{"partial header", ping[:10], io.ErrUnexpectedEOF},
		{"truncated body", ping[:len(ping)-1], io.ErrUnexpectedEOF},
		{"length below header", withLength(15), ErrProtocol},
		{"zero length", withLength(0), ErrProtocol},
		{"negative length", withLength(-1), ErrProtocol},
		{"length above maximum", withLength(MaxMessageSize + 1), ErrProtocol},
		{"length lie within maximum", withLength(MaxMessageSize), io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, body, err := ReadMessage(bytes.NewReader(tt.in))
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if int(h.Length) != HeaderSize+len(body) || !bytes.Equal(body, tt.in[HeaderSize:h.Length]) {
				t.Fatalf("header %+v with %d-byte body", h, len(body))
			}
		})
	}
}

func TestReadMessageSequential(t *testing.T) {
	a := opMsg(1, 0, kind0(doc(t, "a", 1)))
	b := opMsg(2, MoreToCome, kind0(doc(t, "b", 2)))
	r := iotest.OneByteReader(bytes.NewReader(append(bytes.Clone(a), b...)))
	for i, want := range [][]byte{a, b} {
		h, body, err := ReadMessage(r)
		if err != nil {
			t.Fatal(err)
		}
		if h != decodeHeader(want) || !bytes.Equal(body, want[HeaderSize:]) {
			t.Fatalf("message %d: got %+v", i, h)
		}
	}
	if _, _, err := ReadMessage(r); err != io.EOF {
		t.Fatalf("after last message: %v, want io.EOF", err)
	}
}

// TestReadMessageLarge reads a body larger than eagerReadLimit, which is
// read into a growing buffer.
func TestReadMessageLarge(t *testing.T) {
	big := make([]byte, 3*eagerReadLimit+12345)
	for i := range big {
		big[i] = byte(i)
	}
	msg := appendHeader(nil, Header{Length: int32(HeaderSize + len(big)), RequestID: 3, OpCode: OpMsg})
	msg = append(msg, big...)
	_, body, err := ReadMessage(iotest.HalfReader(bytes.NewReader(msg)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, big) {
		t.Fatal("body differs")
	}
}

// TestReadMessageLyingLength checks that a header announcing MaxMessageSize
// costs little memory when the peer sends only a few bytes.
func TestReadMessageLyingLength(t *testing.T) {
	msg := appendHeader(nil, Header{Length: MaxMessageSize, OpCode: OpMsg})
	msg = append(msg, make([]byte, 100)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := ReadMessage(bytes.NewReader(msg))
	runtime.ReadMemStats(&after)
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("err = %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*eagerReadLimit {
		t.Fatalf("allocated %d bytes for a 116-byte stream", got)
	}
}

func TestOpCodeString(t *testing.T) {
	for c, want := range map[OpCode]string{OpMsg: "OP_MSG", OpQuery: "OP_QUERY", OpCompressed: "OP_COMPRESSED", 42: "opcode(42)"} {
		if got := c.String(); got != want {
			t.Errorf("%d: %q, want %q", int32(c), got, want)
		}
	}
}
