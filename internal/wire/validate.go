package wire

import (
	"encoding/binary"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// validateDocument checks that doc is exactly one well-formed BSON document
// (rawdoc.Validate), as InvalidBSON when it is not, or Overflow when it is
// nested too deep (see TooDeep).
func validateDocument(doc []byte) error {
	if err := rawdoc.Validate(doc); err != nil {
		if rawdoc.TooDeep(err) {
			return mongoerr.New(mongoerr.Overflow, "BSONObj exceeds maximum nested object depth: %d", rawdoc.MaxDepth)
		}
		return mongoerr.New(mongoerr.InvalidBSON, "invalid BSON: %s", err)
	}
	return nil
}

// TooDeep reports whether a message failed to parse only because a
// document in it is nested too deep: MongoDB answers it with the error,
// as a command's, and keeps the connection, since the message's framing
// is sound.
func TooDeep(err error) bool { return mongoerr.Is(err, mongoerr.Overflow) }

// readDocument reads and validates the BSON document at the start of b.
func readDocument(b []byte) (bson.Raw, []byte, error) {
	if len(b) < 4 {
		return nil, nil, mongoerr.New(mongoerr.InvalidBSON, "truncated BSON document: %d bytes left", len(b))
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n > MaxBSONInternalSize {
		return nil, nil, mongoerr.New(mongoerr.BSONObjectTooLarge, "BSONObj size: %d (0x%X) is invalid. Size must be between 0 and %d(%dMB)", n, n, MaxBSONInternalSize, MaxBSONInternalSize>>20)
	}
	if n < 5 || n > len(b) {
		return nil, nil, mongoerr.New(mongoerr.InvalidBSON, "BSON document length %d is invalid with %d bytes left", n, len(b))
	}
	if err := validateDocument(b[:n]); err != nil {
		return nil, nil, err
	}
	return bson.Raw(b[:n]), b[n:], nil
}
