package values

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// ValueString prints a value as MongoDB's Value::toString (the operator<<
// of Value and Document::toString) does in the messages that show an
// aggregation value, such as $replaceRoot's 40228: a missing value is
// MISSING, documents {a: 1, b: "x"} and arrays [1, 2] without inner
// padding, strings quoted, doubles as an ostream prints them (%g, six
// significant digits), ObjectIds as bare hex, dates in ISO 8601 (UTC).
func ValueString(v bson.RawValue) string {
	var b strings.Builder
	writeValueString(&b, v)
	return b.String()
}

// StreamDouble prints a double as MongoDB's StringBuilder and C++ streams
// do in messages (operator<<(double): C's %g, six significant digits):
// "1.5", "1e+20", "1.09951e+12", "-0", "nan", "inf", "-inf".
func StreamDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

func writeValueString(b *strings.Builder, v bson.RawValue) {
	switch v.Type {
	case 0:
		b.WriteString("MISSING")
	case bson.TypeMinKey:
		b.WriteString("MinKey")
	case bson.TypeMaxKey:
		b.WriteString("MaxKey")
	case bson.TypeObjectID:
		id := v.ObjectID()
		b.WriteString(hex.EncodeToString(id[:]))
	case bson.TypeString:
		b.WriteString(`"` + v.StringValue() + `"`)
	case bson.TypeRegex:
		p, o := v.Regex()
		b.WriteString("/" + p + "/" + o)
	case bson.TypeSymbol:
		s, _ := v.SymbolOK()
		b.WriteString(`Symbol("` + s + `")`)
	case bson.TypeJavaScript:
		b.WriteString(`Code("` + v.JavaScript() + `")`)
	case bson.TypeCodeWithScope:
		code, scope := v.CodeWithScope()
		b.WriteString(`CodeWScope("` + code + `", ` + ShellDoc(scope) + ")")
	case bson.TypeBoolean:
		b.WriteString(strconv.FormatBool(v.Boolean()))
	case bson.TypeDecimal128:
		b.WriteString(v.Decimal128().String())
	case bson.TypeDouble:
		b.WriteString(StreamDouble(v.Double()))
	case bson.TypeInt64:
		b.WriteString(strconv.FormatInt(v.Int64(), 10))
	case bson.TypeInt32:
		b.WriteString(strconv.FormatInt(int64(v.Int32()), 10))
	case bson.TypeNull:
		b.WriteString("null")
	case bson.TypeUndefined:
		b.WriteString("undefined")
	case bson.TypeDateTime:
		b.WriteString(time.UnixMilli(v.DateTime()).UTC().Format("2006-01-02T15:04:05.000Z"))
	case bson.TypeTimestamp:
		t, i := v.Timestamp()
		b.WriteString("Timestamp(" + strconv.FormatUint(uint64(t), 10) + ", " + strconv.FormatUint(uint64(i), 10) + ")")
	case bson.TypeBinary:
		st, data := v.Binary()
		b.WriteString("BinData(" + strconv.Itoa(int(st)) + ", " + strings.ToUpper(hex.EncodeToString(data)) + ")")
	case bson.TypeDBPointer:
		ns, id := v.DBPointer()
		b.WriteString(`DBRef("` + ns + `", ` + hex.EncodeToString(id[:]) + ")")
	case bson.TypeEmbeddedDocument:
		elems, _ := bson.Raw(v.Value).Elements()
		if len(elems) == 0 {
			b.WriteString("{}")
			return
		}
		for i, e := range elems {
			if i == 0 {
				b.WriteString("{")
			} else {
				b.WriteString(", ")
			}
			b.WriteString(e.Key() + ": ")
			writeValueString(b, e.Value())
		}
		b.WriteString("}")
	case bson.TypeArray:
		vals, _ := bson.Raw(v.Value).Values()
		b.WriteString("[")
		for i, e := range vals {
			if i > 0 {
				b.WriteString(", ")
			}
			writeValueString(b, e)
		}
		b.WriteString("]")
	default:
		b.WriteString(v.String())
	}
}
