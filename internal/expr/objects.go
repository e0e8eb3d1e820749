package expr

import (
	"strings"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
)

func init() {
	register(map[string]opCompiler{
		"$getField":      compileFieldOp(fieldGet),
		"$setField":      compileFieldOp(fieldSet),
		"$unsetField":    compileFieldOp(fieldUnset),
		"$objectToArray": unary(evalObjectToArray),
		"$arrayToObject": unary(evalArrayToObject),
		"$mergeObjects":  nary(0, -1, evalMergeObjects),
	})
}

type fieldOpKind int

const (
	fieldGet fieldOpKind = iota
	fieldSet
	fieldUnset
)

// compileFieldOp builds $getField ({field, input}, or the field alone,
// which may be an expression object, input defaulting to $$CURRENT),
// $setField ({field, input, value}; a value of $$REMOVE removes the field)
// and $unsetField ({field, input}). The field name is taken literally
// (dots and $ included) and must be a constant string. A null or missing
// input gives null.
func compileFieldOp(kind fieldOpKind) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		objCode, unknownCode, fieldCode, inputCode := mongoerr.SetFieldSpecNotObject, mongoerr.SetFieldUnknownArgument, mongoerr.SetFieldMissingField, mongoerr.SetFieldMissingInput
		allowed := []string{"field", "input", "value"}
		if kind == fieldGet {
			objCode, unknownCode, fieldCode, inputCode = mongoerr.GetFieldSpecNotObject, mongoerr.GetFieldUnknownArgument, mongoerr.GetFieldMissingField, mongoerr.GetFieldMissingInput
		}
		if kind != fieldSet {
			allowed = allowed[:2]
		}
		var args map[string]bson.RawValue
		if kind == fieldGet && (v.Type != bson.TypeEmbeddedDocument || startsWithOperator(v.Document())) {
			// The short form: the field alone, which may be an
			// expression ({$getField: {$literal: "$price"}}).
			args = map[string]bson.RawValue{"field": v, "input": stringValue("$$CURRENT")}
		} else {
			var err error
			if args, err = namedArgs(name, v, objCode, unknownCode, allowed...); err != nil {
				return nil, err
			}
		}
		f, ok := args["field"]
		if !ok {
			return nil, mongoerr.New(fieldCode, "%s requires 'field' to be specified", name)
		}
		in, ok := args["input"]
		if !ok {
			if kind != fieldGet {
				return nil, mongoerr.New(inputCode, "%s requires 'input' to be specified", name)
			}
			in = stringValue("$$CURRENT")
		}
		fe, err := c.compile(f, s)
		if err != nil {
			return nil, err
		}
		field, isStr := str(fe.value)
		if kind == fieldGet && (!fe.constant || !isStr) {
			return nil, mongoerr.New(mongoerr.GetFieldFieldNotString, "$getField requires 'field' to evaluate to type String, but got %s", typeName(fe.value))
		}
		if !fe.constant {
			return nil, mongoerr.New(mongoerr.SetFieldFieldNotConstant, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", name)
		}
		if !isStr {
			return nil, mongoerr.New(mongoerr.SetFieldFieldNotString, "%s requires 'field' to evaluate to type String, but got %s", name, typeName(fe.value))
		}
		if kind != fieldGet && strings.IndexByte(field, 0) >= 0 {
			return nil, mongoerr.New(mongoerr.SetFieldNullByte, "%s: 'field' cannot contain an embedded null byte", name)
		}
		input, err := c.compile(in, s)
		if err != nil {
			return nil, err
		}
		value := constExpr(missing)
		if kind == fieldSet {
			val, ok := args["value"]
			if !ok {
				return nil, mongoerr.New(mongoerr.SetFieldMissingValue, "$setField requires 'value' to be specified")
			}
			if value, err = c.compile(val, s); err != nil {
				return nil, err
			}
		}
		return c.fold([]*Expr{input, value}, func(st *state) (bson.RawValue, error) {
			iv, err := input.eval(st)
			if err != nil {
				return missing, err
			}
			if isNullish(iv) {
				return nullValue, nil
			}
			if iv.Type != bson.TypeEmbeddedDocument {
				if kind == fieldGet {
					return missing, mongoerr.New(mongoerr.GetFieldInputNotObject, "$getField requires 'input' to evaluate to type Object, but got %s", typeName(iv))
				}
				return missing, mongoerr.New(mongoerr.SetFieldInputNotObject, "%s requires 'input' to evaluate to type Object", name)
			}
			if kind == fieldGet {
				return rawdoc.Lookup(iv.Value, field), nil
			}
			nv, err := value.eval(st)
			if err != nil {
				return missing, err
			}
			var d docBuilder
			d.addDoc(iv.Value)
			d.set(field, nv)
			return d.value(), nil
		})
	}
}

// evalObjectToArray is $objectToArray: a document as [{k, v}, ...].
func evalObjectToArray(v bson.RawValue) (bson.RawValue, error) {
	if isNullish(v) {
		return nullValue, nil
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return missing, mongoerr.New(mongoerr.ObjectToArrayInputNotObject, "$objectToArray requires a document input, found: %s", typeName(v))
	}
	var out []bson.RawValue
	it := rawdoc.Iterate(v.Value)
	for {
		k, e, ok := it.Next()
		if !ok {
			return arrayValue(out), nil
		}
		var d docBuilder
		d.set("k", stringValue(string(k)))
		d.set("v", e)
		out = append(out, d.value())
	}
}

// evalArrayToObject is $arrayToObject: an array of [k, v] pairs or of {k, v}
// documents (not mixed) as a document; a repeated key keeps its first
// position and its last value.
func evalArrayToObject(v bson.RawValue) (bson.RawValue, error) {
	if isNullish(v) {
		return nullValue, nil
	}
	if v.Type != bson.TypeArray {
		return missing, mongoerr.New(mongoerr.ArrayToObjectInputNotArray, "$arrayToObject requires an array input, found: %s", typeName(v))
	}
	var d docBuilder
	vals := elems(v)
	for _, e := range vals {
		var k, val bson.RawValue
		switch {
		case e.Type == bson.TypeArray && vals[0].Type == bson.TypeArray:
			pair := elems(e)
			if len(pair) != 2 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectPairWrongSize, "$arrayToObject requires an array of size 2 arrays,found array of size: %d", len(pair))
			}
			k, val = pair[0], pair[1]
			if k.Type != bson.TypeString {
				return missing, mongoerr.New(mongoerr.ArrayToObjectPairKeyNotString, "$arrayToObject requires an array of key-value pairs, where the key must be of type string. Found key type: %s", typeName(k))
			}
			if strings.IndexByte(k.StringValue(), 0) >= 0 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectPairKeyNullByte, "Key field cannot contain an embedded null byte")
			}
		case e.Type == bson.TypeEmbeddedDocument && vals[0].Type == bson.TypeEmbeddedDocument:
			n := rawdoc.Len(e.Value)
			k, val = rawdoc.Lookup(e.Value, "k"), rawdoc.Lookup(e.Value, "v")
			if n != 2 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectWrongFieldCount, "$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number of keys:%d", n)
			}
			if k.Type == 0 || val.Type == 0 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectMissingKV, "$arrayToObject requires an object with keys 'k' and 'v'. Missing either or both keys from: %s", e)
			}
			if k.Type != bson.TypeString {
				return missing, mongoerr.New(mongoerr.ArrayToObjectKeyNotString, "$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: %s", typeName(k))
			}
			if strings.IndexByte(k.StringValue(), 0) >= 0 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectKeyNullByte, "Key field cannot contain an embedded null byte")
			}
		case e.Type == bson.TypeArray && vals[0].Type == bson.TypeEmbeddedDocument:
			return missing, mongoerr.New(mongoerr.ArrayToObjectMixedFormats, "$arrayToObject requires a consistent input format. Elements must all be arrays or all be objects. Object was detected, now found: array")
		case e.Type == bson.TypeEmbeddedDocument && vals[0].Type == bson.TypeArray:
			return missing, mongoerr.New(mongoerr.ArrayToObjectMixedFormatsPair, "$arrayToObject requires a consistent input format. Elements must all be arrays or all be objects. Array was detected, now found: object")
		default:
			return missing, mongoerr.New(mongoerr.ArrayToObjectElementInvalid, "Unrecognised input type format for $arrayToObject: %s", typeName(e))
		}
		key, _ := str(k)
		d.set(key, val)
	}
	return d.value(), nil
}

// evalMergeObjects is $mergeObjects: the fields of each document operand in
// turn, later values overwriting earlier ones; null and missing operands are
// skipped.
func evalMergeObjects(args []bson.RawValue) (bson.RawValue, error) {
	var d docBuilder
	for _, a := range args {
		if isNullish(a) {
			continue
		}
		if a.Type != bson.TypeEmbeddedDocument {
			return missing, mongoerr.New(mongoerr.MergeObjectsInputNotObject, "$mergeObjects requires object inputs, but input %s is of type %s", a, typeName(a))
		}
		d.addDoc(a.Value)
	}
	return d.value(), nil
}

// startsWithOperator reports whether d's first field name starts with '$':
// $getField reads such an object as an expression for its field.
func startsWithOperator(d bson.Raw) bool {
	el, err := d.IndexErr(0)
	return err == nil && strings.HasPrefix(el.Key(), "$")
}
