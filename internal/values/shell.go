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
	writeValue(&b, v, -1)
	return b.String()
}

// maxShellDepth is BSONObj::maxToStringRecursionDepth: an element nested
// deeper prints as "...", without its name (a document's own elements are
// at depth 0).
const maxShellDepth = 100

// ShellDoc prints a document as Shell does.
func ShellDoc(d bson.Raw) string {
	return Shell(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: d})
}

// writeValue writes v, the value of an element at depth. Strings and code
// are written as their bytes, unescaped, and abbreviated as
// toString(full=false) does: a string of 160 bytes or more shows its first
// 150, code of 80 or more its first 70, cut even inside a UTF-8 sequence.
func writeValue(b *strings.Builder, v bson.RawValue, depth int) {
	switch v.Type {
	case bson.TypeDouble:
		b.WriteString(formatDouble(v.Double()))
	case bson.TypeString, bson.TypeSymbol:
		s, ok := v.StringValueOK()
		if !ok {
			s, _ = v.SymbolOK() // "" for a malformed value: never a panic
		}
		b.WriteString(`"` + abbreviate(s, 160, 150) + `"`)
	case bson.TypeJavaScript:
		b.WriteString(abbreviate(v.JavaScript(), 80, 70))
	case bson.TypeCodeWithScope:
		code, scope := v.CodeWithScope()
		b.WriteString("CodeWScope( " + code + ", ")
		writeValue(b, bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: scope}, -1)
		b.WriteString(")")
	case bson.TypeDBPointer:
		ns, id := v.DBPointer()
		b.WriteString("DBRef('" + ns + "'," + hex.EncodeToString(id[:]) + ")")
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		writeContainer(b, v, depth+1)
	case bson.TypeInt32:
		b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
	case bson.TypeInt64:
		b.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeDecimal128:
		b.WriteString(v.Decimal128().String())
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
		if st == bson.TypeBinaryUUID && len(data) == 16 {
			h := hex.EncodeToString(data)
			b.WriteString(`UUID("` + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] + `")`)
			return
		}
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

// abbreviate is s, or its first keep bytes and "..." when it has at
// least limit bytes.
func abbreviate(s string, limit, keep int) string {
	if len(s) >= limit {
		return s[:keep] + "..."
	}
	return s
}

func writeContainer(b *strings.Builder, v bson.RawValue, depth int) {
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
		if depth > maxShellDepth {
			b.WriteString("...")
			continue
		}
		if v.Type != bson.TypeArray {
			b.WriteString(e.Key() + ": ")
		}
		writeValue(b, e.Value(), depth)
	}
	b.WriteString(" " + closing)
}

// formatDouble prints a double as MongoDB's appendDoubleNice does: C's
// %.16g, then ".0" unless that wrote a '.', an 'E' or an 'N' (so "1e+20.0",
// "nan.0" and "inf.0", since %g writes those in lowercase).
func formatDouble(f float64) string {
	var s string
	switch {
	case math.IsNaN(f):
		s = "nan"
	case math.IsInf(f, 1):
		s = "inf"
	case math.IsInf(f, -1):
		s = "-inf"
	default:
		s = strconv.FormatFloat(f, 'g', 16, 64)
	}
	if !strings.ContainsAny(s, ".EN") {
		s += ".0"
	}
	return s
}
