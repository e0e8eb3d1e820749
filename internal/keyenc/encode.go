// Package keyenc implements an order-preserving byte encoding of BSON values
// for index and document keys.
//
// Invariant: for all BSON values a and b,
//
//	sign(bytes.Compare(Encode(a), Encode(b))) == sign(values.Compare(a, b))
//
// so values that MongoDB considers equal (int32 1, int64 1, double 1.0 and
// decimal 1.00) encode to identical bytes. Every encoding is prefix-free: no
// encoding is a proper prefix of another, so the concatenation of several
// encodings (a compound key) compares field by field. The descending variant
// inverts every byte, which reverses the order and stays prefix-free.
//
// Layout: one tag byte per canonical type class (see the tag constants),
// followed by a class-specific body:
//
//	MinKey, missing/undefined, null, MaxKey   no body
//	number                                    kind byte, magnitude (see number.go)
//	string, symbol, code                      bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01
//	object                                    per element: tag, name, 0x00, body; then 0x00
//	array                                     per element: tag, body; then 0x00
//	binData                                   4-byte length, subtype, bytes
//	ObjectId                                  12 bytes
//	bool                                      0x00 or 0x01
//	date                                      8 bytes, sign bit flipped
//	timestamp                                 4-byte seconds, 4-byte increment
//	regex                                     pattern, 0x00, flags, 0x00
//	dbPointer                                 4-byte namespace length, namespace, 12-byte id
//	codeWithScope                             code as a string, scope as an object
//
// Multi-byte integers are big-endian. Arrays omit field names: valid BSON
// arrays have the keys "0", "1", ... so keys are equal position by position.
// Values must be well-formed BSON; malformed parts are encoded
// deterministically but their order is unspecified.
package keyenc

import (
	"bytes"
	"encoding/binary"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Tag bytes, one per canonical type class, in MongoDB's order. They leave
// 0x00 (the object/array end marker) and 0xFF free, and stay away from both
// ends so that inverted (descending) tags do the same.
const (
	tagMinKey    = 0x0A
	tagMissing   = 0x0F // missing and undefined
	tagNull      = 0x14
	tagNumber    = 0x1E
	tagString    = 0x28 // string and symbol
	tagObject    = 0x32
	tagArray     = 0x3C
	tagBinary    = 0x46
	tagObjectID  = 0x50
	tagBool      = 0x5A
	tagDate      = 0x64
	tagTimestamp = 0x6E
	tagRegex     = 0x78
	tagDBPointer = 0x82
	tagCode      = 0x8C
	tagCodeScope = 0x96
	tagMaxKey    = 0xF0
	tagUnknown   = 0xF5 // types unknown to MongoDB sort after MaxKey
)

// endMarker terminates the elements of an object or array; it sorts below
// every tag, so a document that is a prefix of another sorts first.
const endMarker = 0x00

// Encode returns the order-preserving encoding of v.
func Encode(v bson.RawValue) []byte { return AppendValue(nil, v) }

// AppendValue appends the order-preserving encoding of v to dst. A zero
// RawValue encodes "missing", which sorts with undefined, below null. It does
// not allocate when dst has enough capacity.
func AppendValue(dst []byte, v bson.RawValue) []byte {
	tag := typeTag(v.Type)
	return appendBody(append(dst, tag), tag, v)
}

// AppendValueDesc appends the encoding of v for a descending key field: the
// bytes of AppendValue with every bit inverted, so that the order reverses
// while the encoding stays prefix-free.
func AppendValueDesc(dst []byte, v bson.RawValue) []byte {
	n := len(dst)
	dst = AppendValue(dst, v)
	invert(dst[n:])
	return dst
}

// AppendField appends v encoded for an ascending (desc false) or descending
// key field; compound keys are the concatenation of their fields.
func AppendField(dst []byte, v bson.RawValue, desc bool) []byte {
	if desc {
		return AppendValueDesc(dst, v)
	}
	return AppendValue(dst, v)
}

func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// typeTag returns the tag byte of t's canonical type class (values.Rank).
func typeTag(t bson.Type) byte {
	switch t {
	case bson.TypeMinKey:
		return tagMinKey
	case 0, bson.TypeUndefined:
		return tagMissing
	case bson.TypeNull:
		return tagNull
	case bson.TypeDouble, bson.TypeInt32, bson.TypeInt64, bson.TypeDecimal128:
		return tagNumber
	case bson.TypeString, bson.TypeSymbol:
		return tagString
	case bson.TypeEmbeddedDocument:
		return tagObject
	case bson.TypeArray:
		return tagArray
	case bson.TypeBinary:
		return tagBinary
	case bson.TypeObjectID:
		return tagObjectID
	case bson.TypeBoolean:
		return tagBool
	case bson.TypeDateTime:
		return tagDate
	case bson.TypeTimestamp:
		return tagTimestamp
	case bson.TypeRegex:
		return tagRegex
	case bson.TypeDBPointer:
		return tagDBPointer
	case bson.TypeJavaScript:
		return tagCode
	case bson.TypeCodeWithScope:
		return tagCodeScope
	case bson.TypeMaxKey:
		return tagMaxKey
	}
	return tagUnknown
}

// appendBody appends the body of v, whose tag is tag.
func appendBody(dst []byte, tag byte, v bson.RawValue) []byte {
	b := v.Value
	switch tag {
	case tagNumber:
		return appendNumber(dst, v)
	case tagString, tagCode:
		return appendString(dst, stringBytes(b))
	case tagObject:
		return appendDocument(dst, b, false)
	case tagArray:
		return appendDocument(dst, b, true)
	case tagBinary:
		subtype, data, _ := v.BinaryOK()
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
		return append(append(dst, subtype), data...)
	case tagObjectID:
		return append(dst, fixed(b, 12)...)
	case tagBool:
		if len(b) > 0 && b[0] == 1 {
			return append(dst, 1)
		}
		return append(dst, 0)
	case tagDate:
		return binary.BigEndian.AppendUint64(dst, le64(b)^1<<63)
	case tagTimestamp:
		// Little-endian increment then seconds; seconds compare first.
		f := fixed(b, 8)
		dst = binary.BigEndian.AppendUint32(dst, binary.LittleEndian.Uint32(f[4:]))
		return binary.BigEndian.AppendUint32(dst, binary.LittleEndian.Uint32(f[:4]))
	case tagRegex:
		pattern, rest := cstring(b)
		flags, _ := cstring(rest)
		dst = append(append(dst, pattern...), 0)
		return append(append(dst, flags...), 0)
	case tagDBPointer:
		ns := stringBytes(b)
		var id []byte
		if len(b) >= 4+len(ns)+1 {
			id = b[4+len(ns)+1:]
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(ns)))
		return append(append(dst, ns...), fixed(id, 12)...)
	case tagCodeScope:
		var code, scope []byte
		if len(b) >= 4 {
			code = stringBytes(b[4:])
			if len(b) >= 4+4+len(code)+1 {
				scope = b[4+4+len(code)+1:]
			}
		}
		return appendDocument(appendString(dst, code), scope, false)
	case tagUnknown:
		return appendString(dst, b)
	}
	return dst
}

// appendString appends s with each 0x00 escaped as 0x00 0xFF, then the
// terminator 0x00 0x01. The escape keeps the byte order of s and the
// terminator sorts below every continuation, so a prefix sorts first.
func appendString(dst, s []byte) []byte {
	// room for the common string without a zero byte, grown once
	dst = slices.Grow(dst, len(s)+2)
	for {
		i := bytes.IndexByte(s, 0)
		if i < 0 {
			break
		}
		dst = append(append(dst, s[:i]...), 0x00, 0xFF)
		s = s[i+1:]
	}
	return append(append(dst, s...), 0x00, 0x01)
}

// appendDocument appends the elements of the BSON document doc followed by
// endMarker. Each element is its value's tag, then (for objects only) its
// field name and 0x00, then its value's body: elements compare by type
// class, then name, then value, as values.CompareDocuments does.
func appendDocument(dst, doc []byte, array bool) []byte {
	if len(doc) >= 5 {
		elems := doc[4 : len(doc)-1]
		for len(elems) > 0 {
			el, rest, ok := bsoncore.ReadElement(elems)
			if !ok {
				break
			}
			elems = rest
			v := el.Value()
			tag := typeTag(bson.Type(v.Type))
			dst = append(dst, tag)
			if !array {
				// Field names are C strings and never contain 0x00.
				dst = append(append(dst, el.KeyBytes()...), 0)
			}
			dst = appendBody(dst, tag, bson.RawValue{Type: bson.Type(v.Type), Value: v.Data})
		}
	}
	return append(dst, endMarker)
}

// stringBytes returns the bytes of a BSON string (int32 length, bytes, 0x00),
// the layout of string, symbol and code values.
func stringBytes(b []byte) []byte {
	if len(b) < 5 {
		return nil
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	if n < 1 || n > len(b)-4 {
		return b[4 : len(b)-1]
	}
	return b[4 : 4+n-1]
}

// cstring splits b at its first 0x00.
func cstring(b []byte) (s, rest []byte) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i+1:]
}

var zeros [12]byte

// fixed returns the first n bytes of b (n ≤ 12), or n zero bytes if b is
// too short.
func fixed(b []byte, n int) []byte {
	if len(b) < n {
		return zeros[:n]
	}
	return b[:n]
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(fixed(b, 8)) }
