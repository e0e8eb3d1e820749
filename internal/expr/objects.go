package expr

import (
	"strings"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
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
// which may be an expression object, input then being $$CURRENT),
// $setField ({field, input, value}; a value of $$REMOVE removes the field)
// and $unsetField ({field, input}). As MongoDB's parsers, it checks that
// field, then value ($setField), then input are given, then that field is
// written as a constant string (see literalField): not a field path
// (5654600, 4161108), nor an expression, even one that would fold to a
// constant (5654601, 4161106), nor another constant (5654602, 4161107).
// The field name is taken literally (dots and $ included). A null input
// gives null; $getField gives missing for a missing input or one that is
// not an object, where $setField and $unsetField fail (4161105).
func compileFieldOp(kind fieldOpKind) opCompiler {
	return func(c *compiler, name string, v bson.RawValue, s *Scope) (*Expr, error) {
		objCode, unknownCode, fieldCode, inputCode := mongoerr.SetFieldSpecNotObject, mongoerr.SetFieldUnknownArgument, mongoerr.SetFieldMissingField, mongoerr.SetFieldMissingInput
		pathCode, exprCode, typeCode := mongoerr.SetFieldFieldPath, mongoerr.SetFieldFieldNotConstant, mongoerr.SetFieldFieldNotString
		allowed := []string{"field", "input", "value"}
		if kind == fieldGet {
			objCode, unknownCode, fieldCode, inputCode = mongoerr.GetFieldSpecNotObject, mongoerr.GetFieldUnknownArgument, mongoerr.GetFieldMissingField, mongoerr.GetFieldMissingInput
			pathCode, exprCode, typeCode = mongoerr.GetFieldFieldPath, mongoerr.GetFieldFieldNotConstant, mongoerr.GetFieldFieldNotString
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
		val, haveValue := args["value"]
		if kind == fieldSet && !haveValue {
			return nil, mongoerr.New(mongoerr.SetFieldMissingValue, "$setField requires 'value' to be specified")
		}
		in, ok := args["input"]
		if !ok {
			return nil, mongoerr.New(inputCode, "%s requires 'input' to be specified", name)
		}
		if _, err := c.compile(f, s); err != nil {
			return nil, err
		}
		fv, form := literalField(f)
		switch form {
		case fieldPathForm:
			ref := fieldPathReference(f.StringValue())
			return nil, mongoerr.New(pathCode, "'%s' is a field path reference which is not allowed in this context. Did you mean {$literal: '%s'}?", ref, ref)
		case expressionForm:
			return nil, mongoerr.New(exprCode, "%s requires 'field' to evaluate to a constant, but got a non-constant argument", name)
		}
		field, isStr := str(fv)
		if !isStr {
			return nil, mongoerr.New(typeCode, "%s requires 'field' to evaluate to type String, but got %s", name, typeName(fv))
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
			if value, err = c.compile(val, s); err != nil {
				return nil, err
			}
		}
		// No fold: ExpressionGetField's and ExpressionSetField's optimize
		// optimize their operands only, so a constant input that is not
		// an object fails each evaluation, not the optimization.
		return &Expr{eval: func(st *state) (bson.RawValue, error) {
			iv, err := input.eval(st)
			if err != nil {
				return missing, err
			}
			if iv.Type == 0 && kind == fieldGet {
				return missing, nil
			}
			if isNullish(iv) {
				return nullValue, nil
			}
			if iv.Type != bson.TypeEmbeddedDocument {
				if kind == fieldGet {
					return missing, nil
				}
				// $unsetField is a $setField of $$REMOVE, and says so.
				return missing, mongoerr.New(mongoerr.SetFieldInputNotObject, "$setField requires 'input' to evaluate to type Object")
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
		}}, nil
	}
}

// fieldPathReference is how MongoDB names the field path or variable ref
// ("$a", "$$ROOT.a") given as a field name: the path with its variable,
// $CURRENT for a field path ("$CURRENT.a", "$ROOT.a").
func fieldPathReference(ref string) string {
	if rest, ok := strings.CutPrefix(ref, "$$"); ok {
		return "$" + rest
	}
	return "$CURRENT." + ref[1:]
}

// The forms literalField tells apart.
const (
	constantForm = iota
	fieldPathForm
	expressionForm
)

// literalField reads the field argument of $getField, $setField and
// $unsetField as MongoDB's parser sees it, before any constant folding: a
// string starting with '$' is a field path (or a variable); {$literal: v}
// or {$const: v}, or a value that is neither an object nor an array, is the
// constant v; anything else (an object, an array, an operator such as
// {$concat: [...]}) is an expression.
func literalField(v bson.RawValue) (bson.RawValue, int) {
	switch v.Type {
	case bson.TypeString:
		if strings.HasPrefix(v.StringValue(), "$") {
			return v, fieldPathForm
		}
	case bson.TypeArray:
		return v, expressionForm
	case bson.TypeEmbeddedDocument:
		fs, _ := v.Document().Elements()
		if len(fs) == 1 && (fs[0].Key() == "$literal" || fs[0].Key() == "$const") {
			return fs[0].Value(), constantForm
		}
		return v, expressionForm
	}
	return v, constantForm
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
	// The first element decides the format of all (MongoDB's
	// ExpressionArrayToObject::evaluate): one that is neither an array
	// nor a document is 40398, a later element of the other kind or of
	// any other type 40396 (pairs) or 40391 (documents).
	pairs := len(vals) > 0 && vals[0].Type == bson.TypeArray
	if len(vals) > 0 && !pairs && vals[0].Type != bson.TypeEmbeddedDocument {
		return missing, mongoerr.New(mongoerr.ArrayToObjectElementInvalid, "Unrecognised input type format for $arrayToObject: %s", typeName(vals[0]))
	}
	for _, e := range vals {
		var k, val bson.RawValue
		switch {
		case pairs && e.Type != bson.TypeArray:
			return missing, mongoerr.New(mongoerr.ArrayToObjectMixedFormatsPair, "$arrayToObject requires a consistent input format. Elements mustall be arrays or all be objects. Array was detected, now found: %s", typeName(e))
		case !pairs && e.Type != bson.TypeEmbeddedDocument:
			return missing, mongoerr.New(mongoerr.ArrayToObjectMixedFormats, "$arrayToObject requires a consistent input format. Elements mustall be arrays or all be objects. Object was detected, now found: %s", typeName(e))
		case pairs:
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
		default:
			n := rawdoc.Len(e.Value)
			k, val = rawdoc.Lookup(e.Value, "k"), rawdoc.Lookup(e.Value, "v")
			if n != 2 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectWrongFieldCount, "$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number of keys:%d", n)
			}
			if k.Type == 0 || val.Type == 0 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectMissingKV, "$arrayToObject requires an object with keys 'k' and 'v'. Missing either or both keys from: %s", values.ValueString(e))
			}
			if k.Type != bson.TypeString {
				return missing, mongoerr.New(mongoerr.ArrayToObjectKeyNotString, "$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: %s", typeName(k))
			}
			if strings.IndexByte(k.StringValue(), 0) >= 0 {
				return missing, mongoerr.New(mongoerr.ArrayToObjectKeyNullByte, "Key field cannot contain an embedded null byte")
			}
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
			return missing, mongoerr.New(mongoerr.MergeObjectsInputNotObject, "$mergeObjects requires object inputs, but input %s is of type %s", values.ValueString(a), typeName(a))
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
