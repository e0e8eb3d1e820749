package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// OP_MSG flag bits. Bits 0-15 are required: a receiver must reject a message
// with a required bit it does not know. Bits 16-31 are optional and ignored
// when unknown.
const (
	// ChecksumPresent: the message ends with a CRC-32C of all preceding
	// bytes, header included.
	ChecksumPresent uint32 = 1 << 0
	// MoreToCome: the sender will not wait for a reply; on a request the
	// server must not answer.
	MoreToCome uint32 = 1 << 1
	// ExhaustAllowed: the client accepts a stream of replies (moreToCome
	// set on the server's replies) to this request.
	ExhaustAllowed uint32 = 1 << 16
)

const requiredFlagBits = 0xFFFF

// Section kinds of an OP_MSG. A security token section is multitenancy's,
// which Folio, as MongoDB without multitenancy, refuses.
const (
	sectionBody          byte = 0
	sectionSequence      byte = 1
	sectionSecurityToken byte = 2
)

// maxSequences is how many document sequences one OP_MSG may carry, as in
// MongoDB: bulkWrite, the command with the most, uses two.
const maxSequences = 2

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Msg is a parsed OP_MSG. Body and every document of Sequences alias the
// body buffer given to ParseMsg.
type Msg struct {
	Flags     uint32
	Body      bson.Raw
	Sequences []Sequence
}

// Sequence is a kind-1 section: a document sequence that stands for an
// array field named Identifier of the command.
type Sequence struct {
	Identifier string
	Docs       []bson.Raw
}

// MoreToCome reports whether the sender expects no reply.
func (m *Msg) MoreToCome() bool { return m.Flags&MoreToCome != 0 }

// ExhaustAllowed reports whether the client accepts an exhaust reply stream.
func (m *Msg) ExhaustAllowed() bool { return m.Flags&ExhaustAllowed != 0 }

// PeekMsgFlags returns the flag bits of an OP_MSG body without parsing the
// rest, so that a server can tell whether a request it failed to parse
// expects a reply. A body too short to hold flags has none.
func PeekMsgFlags(body []byte) uint32 {
	if len(body) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(body)
}

// ParseMsg parses the body of an OP_MSG whose header is h. The body is
// flagBits, then sections until the optional checksum: exactly one kind-0
// section holding the command document and at most two kind-1 sections, each
// an int32 size (counting itself), a cstring identifier and zero or more
// documents filling the rest of the size. Identifiers must be distinct and
// must not also be fields of the body. Every document must be valid BSON of
// at most MaxBSONInternalSize bytes.
//
// When ChecksumPresent is set the last four bytes are a CRC-32C over the
// header and the rest of the body, and the body must hold more than the
// flags and the checksum (51252, OpMsg::getChecksum); h must be the header
// as received (or as restored by Decompress). An unknown required flag
// bit and too many sequences (MongoDB's ConnectionFatalMessageParseError
// class) make the connection unusable and are returned as plain errors;
// other malformations, a checksum that does not match (ChecksumMismatch)
// among them, are *mongoerr.Error.
func ParseMsg(h Header, body []byte) (*Msg, error) {
	if h.OpCode != OpMsg {
		return nil, fmt.Errorf("%w: %v is not OP_MSG", ErrProtocol, h.OpCode)
	}
	if len(body) < 4 {
		return nil, mongoerr.New(mongoerr.ProtocolError, "OP_MSG of %d bytes has no room for flags", len(body))
	}
	m := &Msg{Flags: binary.LittleEndian.Uint32(body)}
	if unknown := m.Flags & requiredFlagBits &^ (ChecksumPresent | MoreToCome); unknown != 0 {
		return nil, fmt.Errorf("%w: OP_MSG contains unknown required flag bits %#x", ErrProtocol, unknown)
	}
	sections := body[4:]
	// A checksum that does not match is reported once the sections parse,
	// as MongoDB's OpMsg::parse checks it last.
	var checksumErr error
	if m.Flags&ChecksumPresent != 0 {
		if len(sections) <= 4 {
			return nil, mongoerr.New(mongoerr.OpMsgChecksumNoRoom, "Invalid message size for an OpMsg containing a checksum")
		}
		end := len(sections) - 4
		want := binary.LittleEndian.Uint32(sections[end:])
		var hb [HeaderSize]byte
		crc := crc32.Update(0, castagnoli, appendHeader(hb[:0], h))
		crc = crc32.Update(crc, castagnoli, body[:4+end])
		if crc != want {
			checksumErr = mongoerr.New(mongoerr.ChecksumMismatch, "OP_MSG checksum does not match contents")
		}
		sections = sections[:end]
	}

	haveBody := false
	for len(sections) > 0 {
		kind := sections[0]
		sections = sections[1:]
		switch kind {
		case sectionBody:
			if haveBody {
				return nil, mongoerr.New(mongoerr.OpMsgMultipleBodies, "Multiple body sections in message")
			}
			haveBody = true
			doc, rest, err := readDocument(sections)
			if err != nil {
				return nil, err
			}
			m.Body, sections = doc, rest
		case sectionSequence:
			if len(m.Sequences) == maxSequences {
				return nil, fmt.Errorf("%w: too many document sequences in OP_MSG", ErrProtocol)
			}
			seq, rest, err := readSequence(sections)
			if err != nil {
				return nil, err
			}
			for _, s := range m.Sequences {
				if s.Identifier == seq.Identifier {
					return nil, mongoerr.New(mongoerr.OpMsgDuplicateSequence, "Duplicate document sequence: %s", seq.Identifier)
				}
			}
			m.Sequences = append(m.Sequences, seq)
			sections = rest
		case sectionSecurityToken:
			return nil, mongoerr.New(mongoerr.Unauthorized, "Unsupported Security Token provided")
		default:
			return nil, mongoerr.New(mongoerr.OpMsgUnknownSectionKind, "Unknown section kind %d", kind)
		}
	}
	if !haveBody {
		return nil, mongoerr.New(mongoerr.OpMsgMissingBody, "OP_MSG messages must have a body")
	}
	for _, s := range m.Sequences {
		if atPathOrArray(m.Body, s.Identifier) {
			return nil, mongoerr.New(mongoerr.OpMsgDuplicateBodySequence, "Duplicate field between body and document sequence %s", s.Identifier)
		}
	}
	if checksumErr != nil {
		return nil, checksumErr
	}
	return m, nil
}

// atPathOrArray reports whether doc has a value at the dotted path, or an
// array on the way to it, as MongoDB's extractElementAtPathOrArrayAlongPath
// finds one: each segment is a field of the document the previous one
// named; a field holding a scalar before the path ends ends the search.
func atPathOrArray(doc bson.Raw, path string) bool {
	for {
		key, rest, dotted := strings.Cut(path, ".")
		v, ok := field(doc, key)
		switch {
		case !ok:
			return false
		case v.Type == bson.TypeArray || !dotted:
			return true
		case v.Type != bson.TypeEmbeddedDocument:
			return false
		}
		doc, path = v.Document(), rest
	}
}

// field returns doc's first field named key, the empty name included
// (which bson.Raw.LookupErr refuses).
func field(doc bson.Raw, key string) (bson.RawValue, bool) {
	if key != "" {
		v, err := doc.LookupErr(key)
		return v, err == nil
	}
	elems, _ := doc.Elements() // valid: readDocument validated it
	for _, e := range elems {
		if e.Key() == "" {
			return e.Value(), true
		}
	}
	return bson.RawValue{}, false
}

// readSequence reads the kind-1 section at the start of b (after the kind).
func readSequence(b []byte) (Sequence, []byte, error) {
	if len(b) < 4 {
		return Sequence{}, nil, mongoerr.New(mongoerr.ProtocolError, "truncated document sequence size")
	}
	size := int(int32(binary.LittleEndian.Uint32(b)))
	if size < 5 || size > len(b) {
		return Sequence{}, nil, mongoerr.New(mongoerr.ProtocolError, "document sequence size %d is invalid with %d bytes left", size, len(b))
	}
	data, rest := b[4:size], b[size:]
	end := bytes.IndexByte(data, 0)
	if end < 0 {
		return Sequence{}, nil, mongoerr.New(mongoerr.ProtocolError, "document sequence identifier is not null-terminated")
	}
	seq := Sequence{Identifier: string(data[:end])}
	data = data[end+1:]
	if n := countDocuments(data); n > 0 {
		seq.Docs = make([]bson.Raw, 0, n)
	}
	for len(data) > 0 {
		doc, r, err := readDocument(data)
		if err != nil {
			return Sequence{}, nil, err
		}
		seq.Docs = append(seq.Docs, doc)
		data = r
	}
	return seq, rest, nil
}

// countDocuments counts the documents in b by their length prefixes alone,
// stopping at the first implausible one, to size a slice ahead of validation.
func countDocuments(b []byte) int {
	n := 0
	for len(b) >= 5 {
		l := int(int32(binary.LittleEndian.Uint32(b)))
		if l < 5 || l > len(b) {
			break
		}
		b = b[l:]
		n++
	}
	return n
}

// Command returns the command document: the body with each document
// sequence appended as an array field named by its identifier. Without
// sequences it returns Body itself; otherwise a new document.
func (m *Msg) Command() (bson.Raw, error) {
	if len(m.Sequences) == 0 {
		return m.Body, nil
	}
	if len(m.Body) < 5 {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "OP_MSG body of %d bytes is not a document", len(m.Body))
	}
	// Each array element is a type byte, a decimal index key of at most
	// 8 digits (a message holds fewer than 10^8 documents) and a null.
	size := len(m.Body)
	for _, s := range m.Sequences {
		size += 2 + len(s.Identifier) + 5
		for _, d := range s.Docs {
			size += 10 + len(d)
		}
	}
	out := make([]byte, 0, size)
	out = append(out, m.Body[:len(m.Body)-1]...)
	for _, s := range m.Sequences {
		out = append(out, 0x04)
		out = append(out, s.Identifier...)
		out = append(out, 0)
		start := len(out)
		out = append(out, 0, 0, 0, 0)
		for i, d := range s.Docs {
			out = append(out, 0x03)
			out = strconv.AppendInt(out, int64(i), 10)
			out = append(out, 0)
			out = append(out, d...)
		}
		out = append(out, 0)
		binary.LittleEndian.PutUint32(out[start:], uint32(len(out)-start))
	}
	out = append(out, 0)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return bson.Raw(out), nil
}

// AppendMsgStart appends what precedes the body of an OP_MSG with flags
// (ChecksumPresent not among them) whose kind-0 section holds bodyLen
// bytes: the message is complete once the body is written after it.
func AppendMsgStart(dst []byte, requestID, responseTo int32, flags uint32, bodyLen int) []byte {
	start := len(dst)
	dst = appendMsgStart(dst, requestID, responseTo, flags)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start+bodyLen))
	return dst
}

func appendMsgStart(dst []byte, requestID, responseTo int32, flags uint32) []byte {
	dst = appendHeader(dst, Header{RequestID: requestID, ResponseTo: responseTo, OpCode: OpMsg})
	dst = binary.LittleEndian.AppendUint32(dst, flags)
	return append(dst, sectionBody)
}

// AppendMsg appends a complete OP_MSG to dst: header, flags and one kind-0
// section holding body, a BSON document. With ChecksumPresent in flags it
// also appends the CRC-32C of everything before it.
func AppendMsg(dst []byte, requestID, responseTo int32, flags uint32, body []byte) []byte {
	start := len(dst)
	dst = appendMsgStart(dst, requestID, responseTo, flags)
	dst = append(dst, body...)
	if flags&ChecksumPresent == 0 {
		finishLength(dst, start)
		return dst
	}
	dst = append(dst, 0, 0, 0, 0)
	finishLength(dst, start)
	end := len(dst) - 4
	binary.LittleEndian.PutUint32(dst[end:], crc32.Checksum(dst[start:end], castagnoli))
	return dst
}
