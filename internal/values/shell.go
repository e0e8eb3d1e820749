package values

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ShellElement prints "name: value" as MongoDB's BSONElement::toString
// does in error messages.
func ShellElement(name string, v bson.RawValue) string {
	return name + ": " + Shell(v)
}

// Shell prints a value as MongoDB's BSONObj::toString and
// BSONElement::toString do by default (full=false), in error messages,
// plan summaries and currentOp's truncated commands: { a: 1 }, [ 1, 2 ],
// "str", 1.5, ObjectId('…'); long strings and binary data abbreviated.
func Shell(v bson.RawValue) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

// ShellDoc prints a document as Shell does.
func ShellDoc(d bson.Raw) string {
	return Shell(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d})
}

func writeValue(b *strings.Builder, v bson.RawValue) {
	switch v.Type {
	case bson.TypeDouble:
		b.WriteString(formatDouble(v.Double()))
	case bson.TypeString:
		// abbreviated as toString(full=false) does: a string of more
		// than 159 bytes shows its first 150
		if s := v.StringValue(); len(s) > 159 {
			b.WriteString(strings.TrimSuffix(strconv.Quote(s[:150]), `"`) + `..."`)
		} else {
			b.WriteString(strconv.Quote(s))
		}
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		writeContainer(b, v)
	case bson.TypeInt32:
		b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
	case bson.TypeInt64:
		b.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeDecimal128:
		b.WriteString(`NumberDecimal("` + v.Decimal128().String() + `")`)
	case bson.TypeBoolean:
		b.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeNull:
		b.WriteString("null")
	case bson.TypeUndefined:
		b.WriteString("undefined")
	case bson.TypeObjectID:
		id := v.ObjectID()
		b.WriteString("ObjectId('" + hex.EncodeToString(id[:]) + "')")
	case bson.TypeDateTime:
		b.WriteString("new Date(" + strconv.FormatInt(v.DateTime(), 10) + ")")
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		b.WriteString("Timestamp(" + strconv.FormatUint(uint64(t), 10) + ", " + strconv.FormatUint(uint64(i), 10) + ")")
	case bson.TypeRegex:
		p, o := v.Regex()
		b.WriteString("/" + p + "/" + o)
	case bson.TypeBinary:
		st, data := v.Binary()
		more := ""
		if len(data) > 80 { // abbreviated: the first 70 bytes
			data, more = data[:70], "..."
		}
		b.WriteString("BinData(" + strconv.Itoa(int(st)) + ", " + strings.ToUpper(hex.EncodeToString(data)) + more + ")")
	case bson.TypeMinKey:
		b.WriteString("MinKey")
	case bson.TypeMaxKey:
		b.WriteString("MaxKey")
	default:
		b.WriteString(v.String())
	}
}

func writeContainer(b *strings.Builder, v bson.RawValue) {
	open, closing := "{", "}"
	if v.Type == bson.TypeArray {
		open, closing = "[", "]"
	}
	elems, _ := bson.Raw(v.Value).Elements()
	if len(elems) == 0 {
		b.WriteString(open + closing)
		return
	}
	b.WriteString(open + " ")
	for i, e := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		if v.Type != bson.TypeArray {
			b.WriteString(e.Key() + ": ")
		}
		writeValue(b, e.Value())
	}
	b.WriteString(" " + closing)
}

// formatDouble prints a double as MongoDB does: integral values keep a ".0".
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan.0"
	case math.IsInf(f, 1):
		return "inf.0"
	case math.IsInf(f, -1):
		return "-inf.0"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
