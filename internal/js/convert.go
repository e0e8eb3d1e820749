package js

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// maxDepth is how deeply nested a value may be converted back to BSON
// (MongoDB's BSON depth limit), which also stops cyclic objects.
const maxDepth = 150

// maxBSONSize is the largest document a script may return.
const maxBSONSize = 16 << 20

// toJS maps a BSON value as MongoDB's server does: int32 and double are
// numbers, int64 NumberLong, decimal NumberDecimal, dates Date, regular
// expressions RegExp (BSONRegExp for options JavaScript lacks), binary
// BinData, documents objects with their field order, arrays arrays,
// undefined and null themselves, symbols strings, code functions.
func (v *vm) toJS(val bson.RawValue) goja.Value {
	rt := v.rt
	switch val.Type {
	case bson.TypeDouble:
		return rt.ToValue(val.Double())
	case bson.TypeString:
		return rt.ToValue(val.StringValue())
	case bson.TypeEmbeddedDocument:
		return v.docToJS(val.Value)
	case bson.TypeArray:
		var items []interface{}
		it := rawdoc.Iterate(val.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			items = append(items, v.toJS(e))
		}
		return rt.NewArray(items...)
	case bson.TypeBinary:
		sub, data := val.Binary()
		return v.construct(v.ctors.binData, rt.ToValue(int(sub)), rt.ToValue(base64.StdEncoding.EncodeToString(data)))
	case bson.TypeUndefined:
		return goja.Undefined()
	case bson.TypeObjectID:
		return v.construct(v.ctors.objectID, rt.ToValue(val.ObjectID().Hex()))
	case bson.TypeBoolean:
		return rt.ToValue(val.Boolean())
	case bson.TypeDateTime:
		return v.construct(v.dateCtor, rt.ToValue(val.DateTime()))
	case bson.TypeNull:
		return goja.Null()
	case bson.TypeRegex:
		pattern, options := val.Regex()
		flags, ok := jsFlags(options)
		if ok {
			if o, err := rt.New(v.regexpCtor, rt.ToValue(pattern), rt.ToValue(flags)); err == nil {
				return o
			}
		}
		return v.construct(v.ctors.bsonRegExp, rt.ToValue(pattern), rt.ToValue(options))
	case bson.TypeJavaScript:
		// MongoDB's ValueReader makes code a function (newFunction).
		f, err := Compile(val.JavaScript())
		if err != nil {
			panic(rt.NewGoError(err))
		}
		fn, err := rt.RunProgram(f.prog)
		if err != nil {
			panic(rt.NewGoError(err))
		}
		return fn
	case bson.TypeSymbol:
		return rt.ToValue(val.Symbol())
	case bson.TypeCodeWithScope:
		code, scope := val.CodeWithScope()
		return v.construct(v.ctors.code, rt.ToValue(code), v.docToJS(scope))
	case bson.TypeInt32:
		return rt.ToValue(val.Int32())
	case bson.TypeTimestamp:
		t, i := val.Timestamp()
		return v.construct(v.ctors.timestamp, rt.ToValue(t), rt.ToValue(i))
	case bson.TypeInt64:
		return v.construct(v.ctors.numberLong, rt.ToValue(strconv.FormatInt(val.Int64(), 10)))
	case bson.TypeDecimal128:
		return v.construct(v.ctors.numberDecimal, rt.ToValue(val.Decimal128().String()))
	case bson.TypeMinKey:
		return v.minKey
	case bson.TypeMaxKey:
		return v.maxKey
	case bson.TypeDBPointer:
		ns, id := val.DBPointer()
		o := rt.NewObject()
		_ = o.Set("$ref", ns)
		_ = o.Set("$id", v.construct(v.ctors.objectID, rt.ToValue(id.Hex())))
		return o
	}
	return goja.Undefined()
}

// docToJS is a document as an object whose properties keep its field
// order, converted as they are read (lazyDoc).
func (v *vm) docToJS(doc []byte) *goja.Object {
	return v.rt.NewDynamicObject(&lazyDoc{v: v, raw: doc})
}

// rootToJS is docToJS on a copy of doc: the object may outlive the call
// (a script can keep it in a global), the caller's buffer may not.
func (v *vm) rootToJS(doc []byte) *goja.Object {
	return v.docToJS(bytes.Clone(doc))
}

var lazyDocType = reflect.TypeOf((*lazyDoc)(nil))

func (v *vm) construct(ctor goja.Value, args ...goja.Value) goja.Value {
	o, err := v.rt.New(ctor, args...)
	if err != nil {
		panic(err)
	}
	return o
}

// jsFlags are BSON regex options as JavaScript flags; false when one has
// no JavaScript equivalent (x, l).
func jsFlags(options string) (string, bool) {
	for _, c := range options {
		switch c {
		case 'i', 'm', 's', 'u':
		default:
			return "", false
		}
	}
	return options, true
}

// toDocument converts an object to a BSON document (MongoDB refuses
// anything else where a document is needed).
func (v *vm) toDocument(val goja.Value) (bson.Raw, error) {
	o, ok := val.(*goja.Object)
	if !ok {
		return nil, fmt.Errorf("expected an object, got %s", jsTypeName(val))
	}
	doc, err := v.appendObject(nil, o, 0)
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// toBSON converts a JavaScript value back to BSON: numbers are doubles,
// NumberInt int32, NumberLong int64, NumberDecimal decimal, Date dates,
// functions code, and objects documents (arrays arrays) in their
// property order.
func (v *vm) toBSON(val goja.Value) (bson.RawValue, error) {
	t, b, err := v.appendValue(nil, val, 0)
	if err != nil {
		return bson.RawValue{}, err
	}
	return bson.RawValue{Type: t, Value: b}, nil
}

func (v *vm) appendValue(dst []byte, val goja.Value, depth int) (bson.Type, []byte, error) {
	if depth > maxDepth {
		return 0, nil, mongoerr.New(mongoerr.JSObjectTooDeep, "Exceeded depth limit of %d when converting js object to BSON. Do you have a cycle?", maxDepth)
	}
	if len(dst) > maxBSONSize {
		return 0, nil, fmt.Errorf("BSONObj size: %d (0x%X) is invalid. Size must be between 0 and 16793600(16MB)", len(dst), len(dst))
	}
	if val == nil || goja.IsUndefined(val) {
		return bson.TypeUndefined, dst, nil
	}
	if goja.IsNull(val) {
		return bson.TypeNull, dst, nil
	}
	o, isObj := val.(*goja.Object)
	if !isObj {
		switch x := val.Export().(type) {
		case int64:
			return bson.TypeDouble, bsoncore.AppendDouble(dst, float64(x)), nil
		case float64:
			return bson.TypeDouble, bsoncore.AppendDouble(dst, x), nil
		case string:
			return bson.TypeString, bsoncore.AppendString(dst, x), nil
		case bool:
			return bson.TypeBoolean, bsoncore.AppendBoolean(dst, x), nil
		}
		// Symbols and big integers have no BSON form: MongoDB writes
		// their string.
		return bson.TypeString, bsoncore.AppendString(dst, val.String()), nil
	}
	switch p := o.Prototype(); {
	case p == nil:
	case p == v.proto.objectID:
		id, err := bson.ObjectIDFromHex(o.Get("str").String())
		if err != nil {
			return 0, nil, err
		}
		return bson.TypeObjectID, bsoncore.AppendObjectID(dst, id), nil
	case p == v.proto.numberLong:
		n, err := strconv.ParseInt(o.Get("_v").String(), 10, 64)
		if err != nil {
			f := o.Get("floatApprox").ToFloat()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return 0, nil, fmt.Errorf("NumberLong out of range")
			}
			n = int64(f)
		}
		return bson.TypeInt64, bsoncore.AppendInt64(dst, n), nil
	case p == v.proto.numberInt:
		return bson.TypeInt32, bsoncore.AppendInt32(dst, int32(o.Get("_v").ToInteger())), nil
	case p == v.proto.numberDecimal:
		d, err := bson.ParseDecimal128(o.Get("_v").String())
		if err != nil {
			return 0, nil, fmt.Errorf("invalid NumberDecimal %q", o.Get("_v").String())
		}
		h, l := d.GetBytes()
		return bson.TypeDecimal128, bsoncore.AppendDecimal128(dst, h, l), nil
	case p == v.proto.binData:
		data, err := base64.StdEncoding.DecodeString(o.Get("_b64").String())
		if err != nil {
			return 0, nil, fmt.Errorf("invalid BinData base64")
		}
		return bson.TypeBinary, bsoncore.AppendBinary(dst, byte(o.Get("_sub").ToInteger()), data), nil
	case p == v.proto.timestamp:
		return bson.TypeTimestamp, bsoncore.AppendTimestamp(dst, uint32(o.Get("t").ToInteger()), uint32(o.Get("i").ToInteger())), nil
	case p == v.proto.minKey:
		return bson.TypeMinKey, dst, nil
	case p == v.proto.maxKey:
		return bson.TypeMaxKey, dst, nil
	case p == v.proto.bsonRegExp:
		return bson.TypeRegex, bsoncore.AppendRegex(dst, o.Get("source").String(), sortFlags(o.Get("flags").String())), nil
	case p == v.proto.code:
		code := o.Get("code").String()
		if s, ok := o.Get("scope").(*goja.Object); ok {
			scope, err := v.appendObject(nil, s, depth+1)
			if err != nil {
				return 0, nil, err
			}
			return bson.TypeCodeWithScope, bsoncore.AppendCodeWithScope(dst, code, scope), nil
		}
		return bson.TypeJavaScript, bsoncore.AppendJavaScript(dst, code), nil
	}
	switch o.ClassName() {
	case "Date":
		t, ok := o.Export().(time.Time)
		if !ok {
			return bson.TypeDateTime, bsoncore.AppendDateTime(dst, 0), nil
		}
		return bson.TypeDateTime, bsoncore.AppendDateTime(dst, t.UnixMilli()), nil
	case "RegExp":
		flags := o.Get("flags").String()
		opts := make([]byte, 0, len(flags))
		for _, c := range []byte(flags) {
			if c == 'i' || c == 'm' || c == 's' || c == 'u' {
				opts = append(opts, c)
			}
		}
		return bson.TypeRegex, bsoncore.AppendRegex(dst, o.Get("source").String(), sortFlags(string(opts))), nil
	case "Function":
		return bson.TypeJavaScript, bsoncore.AppendJavaScript(dst, o.String()), nil
	case "Array":
		n := int(o.Get("length").ToInteger())
		idx, dst := bsoncore.AppendArrayStart(dst)
		for i := 0; i < n; i++ {
			var err error
			if dst, err = v.appendElement(dst, strconv.Itoa(i), o.Get(strconv.Itoa(i)), depth+1); err != nil {
				return 0, nil, err
			}
		}
		dst, _ = bsoncore.AppendArrayEnd(dst, idx)
		return bson.TypeArray, dst, nil
	}
	dst, err := v.appendObject(dst, o, depth)
	return bson.TypeEmbeddedDocument, dst, err
}

// appendObject appends o's enumerable own properties as a document (an
// untouched document from BSON as it was).
func (v *vm) appendObject(dst []byte, o *goja.Object, depth int) ([]byte, error) {
	if o.ExportType() == lazyDocType {
		if d := o.Export().(*lazyDoc); d.pristine() {
			return append(dst, d.raw...), nil
		}
	}
	idx, dst := bsoncore.AppendDocumentStart(dst)
	for _, k := range o.Keys() {
		var err error
		if dst, err = v.appendElement(dst, k, o.Get(k), depth+1); err != nil {
			return nil, err
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, idx)
	return dst, nil
}

func (v *vm) appendElement(dst []byte, key string, val goja.Value, depth int) ([]byte, error) {
	if strings.IndexByte(key, 0) >= 0 {
		return nil, mongoerr.New(mongoerr.JSPropertyNullChar, "JavaScript property (name) contains a null char which is not allowed in BSON.")
	}
	at := len(dst)
	dst = append(dst, 0)
	dst = append(dst, key...)
	dst = append(dst, 0)
	t, dst, err := v.appendValue(dst, val, depth)
	if err != nil {
		return nil, err
	}
	dst[at] = byte(t)
	return dst, nil
}

// sortFlags orders regex options as BSON requires (alphabetically).
func sortFlags(s string) string {
	b := []byte(s)
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && b[j] < b[j-1]; j-- {
			b[j], b[j-1] = b[j-1], b[j]
		}
	}
	return string(b)
}

func jsTypeName(val goja.Value) string {
	switch {
	case val == nil || goja.IsUndefined(val):
		return "undefined"
	case goja.IsNull(val):
		return "null"
	}
	return val.ExportType().String()
}
