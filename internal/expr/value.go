package expr

import (
	"strconv"

	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Value constructors and accessors shared by the operator families.

var (
	missing   = bson.RawValue{}
	nullValue = bson.RawValue{Type: bson.TypeNull, Value: []byte{}}
	trueValue = bson.RawValue{Type: bson.TypeBoolean, Value: []byte{1}}
	falseVal  = bson.RawValue{Type: bson.TypeBoolean, Value: []byte{0}}
)

func boolValue(b bool) bson.RawValue {
	if b {
		return trueValue
	}
	return falseVal
}

func stringValue(s string) bson.RawValue {
	return bson.RawValue{Type: bson.TypeString, Value: bsoncore.AppendString(nil, s)}
}

func dateValue(ms int64) bson.RawValue {
	return bson.RawValue{Type: bson.TypeDateTime, Value: bsoncore.AppendDateTime(nil, ms)}
}

// intValue is an int32 when n fits, else an int64 (MongoDB's
// Value::createIntOrLong).
func intValue(n int64) bson.RawValue {
	if n >= -1<<31 && n < 1<<31 {
		return values.Int32Value(int32(n))
	}
	return values.Int64Value(n)
}

// isNullish reports whether v is null, undefined or missing: the values for
// which most operators return null.
func isNullish(v bson.RawValue) bool {
	return v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined
}

// isNumber reports whether v is one of the four numeric types.
func isNumber(v bson.RawValue) bool { return values.IsNumber(v.Type) }

// typeName is the $type alias of v, used in error messages.
func typeName(v bson.RawValue) string { return values.TypeName(v.Type) }

// str returns the Go string of a string or symbol value. The string
// operators that MongoDB gives only a BSON string (getType() == String:
// $concat, $split, $strLen*, $indexOf*, $trim, $replace*, $regex*) read
// theirs with RawValue.StringValueOK, which refuses a symbol.
func str(v bson.RawValue) (string, bool) {
	if v.Type != bson.TypeString && v.Type != bson.TypeSymbol {
		return "", false
	}
	s, _, ok := bsoncore.ReadString(v.Value)
	return s, ok
}

// elems returns the elements of an array value.
func elems(arr bson.RawValue) []bson.RawValue {
	var out []bson.RawValue
	it := rawdoc.Iterate(arr.Value)
	for {
		_, v, ok := it.Next()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

// arrayValue builds an array from vals; missing elements are stored as
// null, as MongoDB does when it serializes an array of values.
func arrayValue(vals []bson.RawValue) bson.RawValue {
	idx, b := bsoncore.AppendArrayStart(nil)
	var key [20]byte
	for i, v := range vals {
		if v.Type == 0 {
			v = nullValue
		}
		b = bsoncore.AppendHeader(b, bsoncore.Type(v.Type), string(strconv.AppendInt(key[:0], int64(i), 10)))
		b = append(b, v.Value...)
	}
	b, _ = bsoncore.AppendArrayEnd(b, idx)
	return bson.RawValue{Type: bson.TypeArray, Value: b}
}

// docBuilder builds a document field by field, keeping the first position
// of a repeated name as MongoDB's MutableDocument does.
type docBuilder struct {
	keys []string
	vals []bson.RawValue
}

// set sets name to v; a missing v removes the field.
func (d *docBuilder) set(name string, v bson.RawValue) {
	for i, k := range d.keys {
		if k == name {
			if v.Type == 0 {
				d.keys = append(d.keys[:i], d.keys[i+1:]...)
				d.vals = append(d.vals[:i], d.vals[i+1:]...)
				return
			}
			d.vals[i] = v
			return
		}
	}
	if v.Type != 0 {
		d.keys = append(d.keys, name)
		d.vals = append(d.vals, v)
	}
}

// addDoc sets every field of the document doc.
func (d *docBuilder) addDoc(doc []byte) {
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			return
		}
		d.set(string(k), v)
	}
}

func (d *docBuilder) value() bson.RawValue {
	idx, b := bsoncore.AppendDocumentStart(nil)
	for i, k := range d.keys {
		b = bsoncore.AppendHeader(b, bsoncore.Type(d.vals[i].Type), k)
		b = append(b, d.vals[i].Value...)
	}
	b, _ = bsoncore.AppendDocumentEnd(b, idx)
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: b}
}
