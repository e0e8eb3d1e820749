package rawdoc

import (
	"bytes"
	"encoding/binary"
)

// MaxDepth is the deepest nesting of documents and arrays Validate accepts,
// as MongoDB's default maxBSONDepth.
const MaxDepth = 200

// Validate checks that doc is exactly one well-formed BSON document,
// descending into embedded documents, arrays and code scopes, the way the
// server validates incoming BSON: the driver's validation checks only the
// top level, and reading a malformed nested value (a string of length 0,
// say) panics in the driver. Iteration over a document that passed Validate
// cannot fail.
func Validate(doc []byte) error {
	if err := validateDoc(doc, 0); err != nil {
		return err
	}
	return nil
}

// validationError describes why a document failed validation.
type validationError struct{ msg string }

func (e *validationError) Error() string { return e.msg }

// docLength reads the int32 length prefix of the document at the start of b
// and reports whether it is a plausible length within b.
func docLength(b []byte) (int, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	return n, n >= 5 && n <= len(b)
}

// errTooDeep is Validate's error for a document nested deeper than
// MaxDepth.
var errTooDeep = &validationError{"exceeds maximum nesting depth"}

// TooDeep reports whether Validate failed err because the document is
// nested deeper than MaxDepth, which MongoDB answers with an error reply
// (Overflow) rather than closing the connection.
func TooDeep(err error) bool { return err == error(errTooDeep) }

func validateDoc(doc []byte, depth int) *validationError {
	if depth > MaxDepth {
		return errTooDeep
	}
	n, ok := docLength(doc)
	if !ok || n != len(doc) {
		return &validationError{"document length does not match its content"}
	}
	if doc[n-1] != 0 {
		return &validationError{"document does not end with a null byte"}
	}
	rest := doc[4 : n-1]
	for len(rest) > 0 {
		t := rest[0]
		key := bytes.IndexByte(rest[1:], 0)
		if key < 0 {
			return &validationError{"field name is not null-terminated"}
		}
		v := rest[2+key:]
		size, err := valueSize(t, v, depth)
		if err != nil {
			return err
		}
		rest = v[size:]
	}
	return nil
}

// valueSize validates the value of BSON type t at the start of v and returns
// its length.
func valueSize(t byte, v []byte, depth int) (int, *validationError) {
	switch t {
	case 0x06, 0x0A, 0x7F, 0xFF: // undefined, null, maxKey, minKey
		return 0, nil
	case 0x08: // boolean
		if len(v) < 1 || v[0] > 1 {
			return 0, &validationError{"invalid boolean"}
		}
		return 1, nil
	case 0x10: // int32
		return fixedSize(v, 4)
	case 0x01, 0x09, 0x11, 0x12: // double, datetime, timestamp, int64
		return fixedSize(v, 8)
	case 0x07: // ObjectId
		return fixedSize(v, 12)
	case 0x13: // decimal128
		return fixedSize(v, 16)
	case 0x02, 0x0D, 0x0E: // string, JavaScript code, symbol
		return stringSize(v)
	case 0x0C: // DBPointer
		n, err := stringSize(v)
		if err != nil {
			return 0, err
		}
		if len(v)-n < 12 {
			return 0, &validationError{"truncated DBPointer"}
		}
		return n + 12, nil
	case 0x03, 0x04: // document, array
		n, ok := docLength(v)
		if !ok {
			return 0, &validationError{"invalid embedded document length"}
		}
		return n, validateDoc(v[:n], depth+1)
	case 0x05: // binary
		if len(v) < 5 {
			return 0, &validationError{"truncated binary"}
		}
		n := int(int32(binary.LittleEndian.Uint32(v)))
		if n < 0 || n > len(v)-5 {
			return 0, &validationError{"invalid binary length"}
		}
		if v[4] == 0x02 { // old binary subtype repeats the length inside
			if n < 4 || int(int32(binary.LittleEndian.Uint32(v[5:]))) != n-4 {
				return 0, &validationError{"invalid old binary length"}
			}
		}
		return 5 + n, nil
	case 0x0B: // regular expression: pattern and options cstrings
		p := bytes.IndexByte(v, 0)
		if p < 0 {
			return 0, &validationError{"regex pattern is not null-terminated"}
		}
		o := bytes.IndexByte(v[p+1:], 0)
		if o < 0 {
			return 0, &validationError{"regex options are not null-terminated"}
		}
		return p + o + 2, nil
	case 0x0F: // code with scope: total length, string, document
		if len(v) < 4 {
			return 0, &validationError{"truncated code with scope"}
		}
		total := int(int32(binary.LittleEndian.Uint32(v)))
		if total < 14 || total > len(v) {
			return 0, &validationError{"invalid code with scope length"}
		}
		s, err := stringSize(v[4:total])
		if err != nil {
			return 0, err
		}
		if scope := v[4+s : total]; len(scope) == 0 {
			return 0, &validationError{"code with scope has no scope"}
		} else if err := validateDoc(scope, depth+1); err != nil {
			return 0, err
		}
		return total, nil
	}
	return 0, &validationError{"unknown BSON type"}
}

func fixedSize(v []byte, n int) (int, *validationError) {
	if len(v) < n {
		return 0, &validationError{"truncated value"}
	}
	return n, nil
}

// stringSize validates a length-prefixed, null-terminated BSON string.
func stringSize(v []byte) (int, *validationError) {
	if len(v) < 4 {
		return 0, &validationError{"truncated string"}
	}
	n := int(int32(binary.LittleEndian.Uint32(v)))
	if n < 1 || n > len(v)-4 {
		return 0, &validationError{"invalid string length"}
	}
	if v[4+n-1] != 0 {
		return 0, &validationError{"string is not null-terminated"}
	}
	return 4 + n, nil
}
