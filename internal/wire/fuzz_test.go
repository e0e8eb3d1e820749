package wire

import (
	"bytes"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// The seed corpora in testdata/fuzz are valid messages: OP_MSGs with and
// without sequences and checksums, handshake OP_QUERYs and OP_COMPRESSED
// messages for every compressor.

// checkErrType fails unless err follows the package's error rule.
func checkErrType(t *testing.T, err error) {
	t.Helper()
	var me *mongoerr.Error
	if !errors.As(err, &me) && !errors.Is(err, ErrProtocol) {
		t.Fatalf("error is neither a command error nor a protocol violation: %v", err)
	}
}

// asMessage interprets data as a complete message with the given opcode,
// fixing its length field.
func asMessage(data []byte, op OpCode) (Header, []byte, bool) {
	if len(data) < HeaderSize || len(data) > MaxMessageSize {
		return Header{}, nil, false
	}
	h := decodeHeader(data)
	h.Length, h.OpCode = int32(len(data)), op
	return h, data[HeaderSize:], true
}

func FuzzReadMessage(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, err := ReadMessage(bytes.NewReader(data))
		if err != nil {
			return
		}
		if int(h.Length) != HeaderSize+len(body) || !bytes.Equal(body, data[HeaderSize:h.Length]) {
			t.Fatalf("header %+v does not describe the %d-byte body", h, len(body))
		}
	})
}

func FuzzParseMsg(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, ok := asMessage(data, OpMsg)
		if !ok {
			return
		}
		m, err := ParseMsg(h, body)
		if err != nil {
			checkErrType(t, err)
			if m != nil {
				t.Fatal("Msg returned with an error")
			}
			return
		}
		if PeekMsgFlags(body) != m.Flags {
			t.Fatal("PeekMsgFlags disagrees with ParseMsg")
		}
		cmd, err := m.Command()
		if err != nil {
			t.Fatalf("Command of a parsed message: %v", err)
		}
		if err := validateDocument(cmd); err != nil {
			t.Fatalf("Command produced invalid BSON: %v", err)
		}
		for _, s := range m.Sequences {
			arr, ok := cmd.Lookup(s.Identifier).ArrayOK()
			if !ok {
				t.Fatalf("sequence %q missing from the command", s.Identifier)
			}
			if vals, err := arr.Values(); err != nil || len(vals) != len(s.Docs) {
				t.Fatalf("sequence %q: %d values, %d documents (%v)", s.Identifier, len(vals), len(s.Docs), err)
			}
		}
		again, err := ParseMsg(split(AppendMsg(nil, h.RequestID, h.ResponseTo, m.Flags, m.Body)))
		if err != nil || !bytes.Equal(again.Body, m.Body) || again.Flags != m.Flags {
			t.Fatalf("re-encoded body does not round trip: %v", err)
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := ParseQuery(body)
		if err != nil {
			checkErrType(t, err)
			return
		}
		if err := bson.Raw(q.Query).Validate(); err != nil {
			t.Fatalf("accepted query fails validation: %v", err)
		}
		if q.ReturnFieldsSelector != nil {
			if err := bson.Raw(q.ReturnFieldsSelector).Validate(); err != nil {
				t.Fatalf("accepted selector fails validation: %v", err)
			}
		}
	})
}

func FuzzDecompress(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		h, body, ok := asMessage(data, OpCompressed)
		if !ok {
			return
		}
		orig, plain, id, err := Decompress(h, body)
		if err != nil {
			checkErrType(t, err)
			return
		}
		if int(orig.Length) != HeaderSize+len(plain) || orig.OpCode == OpCompressed || orig.RequestID != h.RequestID {
			t.Fatalf("header %+v for a %d-byte body", orig, len(plain))
		}
		msg := append(appendHeader(nil, orig), plain...)
		re, err := Compress(nil, msg, id, 1)
		if err != nil {
			t.Fatalf("recompressing: %v", err)
		}
		orig2, plain2, id2, err := Decompress(split(re))
		if err != nil || orig2 != orig || id2 != id || !bytes.Equal(plain2, plain) {
			t.Fatalf("recompressed message does not round trip: %v", err)
		}
	})
}
