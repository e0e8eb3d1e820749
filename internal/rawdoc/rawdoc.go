// Package rawdoc is allocation-free iteration and field lookup over raw BSON
// documents and arrays.
//
// Invariants shared by everything here:
//   - Nothing allocates: keys and values are slices of the input (a
//     StringView a string over it), which the caller must not modify while
//     it uses them.
//   - Nothing validates or panics: the first malformed element (an
//     unterminated key, a value running past the end) stops the walk as if
//     the document ended there, so a malformed document reads as the
//     well-formed prefix of its elements.
package rawdoc

import (
	"encoding/binary"
	"unsafe"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Iter walks the elements of a BSON document or array in place.
type Iter struct{ rest []byte }

// Iterate returns an Iter over the elements of doc, a BSON document or
// array (its length prefix and trailing zero byte are not checked). Input
// shorter than an empty document has no elements.
func Iterate(doc []byte) Iter {
	if len(doc) < 5 {
		return Iter{}
	}
	return Iter{rest: doc[4 : len(doc)-1]}
}

// Next returns the next element's key and value; ok is false at the end of
// the elements or at the first malformed one.
func (it *Iter) Next() (key []byte, v bson.RawValue, ok bool) {
	if len(it.rest) < 2 {
		return nil, bson.RawValue{}, false
	}
	t := it.rest[0]
	end := 1
	for end < len(it.rest) && it.rest[end] != 0 {
		end++
	}
	if end >= len(it.rest) {
		it.rest = nil
		return nil, bson.RawValue{}, false
	}
	key = it.rest[1:end]
	val, rest, ok := bsoncore.ReadValue(it.rest[end+1:], bsoncore.Type(t))
	if !ok {
		it.rest = nil
		return nil, bson.RawValue{}, false
	}
	it.rest = rest
	return key, bson.RawValue{Type: bson.Type(t), Value: val.Data}, true
}

// Rest is the part of the element list not yet read. Once Next has returned
// false it is empty unless fewer bytes than an element remained (a
// malformed element empties it, so it does not report malformed input in
// general).
func (it *Iter) Rest() []byte { return it.rest }

// Lookup returns the value of the first field named name in doc, or a zero
// RawValue (missing) when there is none.
func Lookup(doc []byte, name string) bson.RawValue {
	it := Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return bson.RawValue{}
		}
		if string(k) == name {
			return v
		}
	}
}

// Len counts the elements of a BSON document or array.
func Len(doc []byte) int {
	n := 0
	it := Iterate(doc)
	for {
		if _, _, ok := it.Next(); !ok {
			return n
		}
		n++
	}
}

// SameKeys reports whether two documents name the same fields in the same
// order.
func SameKeys(a, b []byte) bool {
	ia, ib := Iterate(a), Iterate(b)
	for {
		ka, _, oka := ia.Next()
		kb, _, okb := ib.Next()
		if !oka || !okb {
			return oka == okb
		}
		if string(ka) != string(kb) {
			return false
		}
	}
}

// FirstKey is the name of doc's first field, or "" for an empty document.
func FirstKey(doc []byte) string {
	it := Iterate(doc)
	k, _, _ := it.Next()
	return string(k)
}

// AppendElement appends an element named key holding v to a document (or
// array) being built.
func AppendElement(dst []byte, key string, v bson.RawValue) []byte {
	dst = bsoncore.AppendHeader(dst, bsoncore.Type(v.Type), key)
	return append(dst, v.Value...)
}

// StringView is the text of v when it is a well-formed BSON string, as a
// string sharing v's bytes: it is valid only while they are unchanged, so
// the caller keeps it no longer than the document (a copy, such as a
// concatenation or an error message, may outlive it).
func StringView(v bson.RawValue) (string, bool) {
	if v.Type != bson.TypeString || len(v.Value) < 5 {
		return "", false
	}
	n := int(int32(binary.LittleEndian.Uint32(v.Value)))
	if n < 1 || n != len(v.Value)-4 || v.Value[len(v.Value)-1] != 0 {
		return "", false
	}
	return unsafe.String(&v.Value[4], n-1), true
}
