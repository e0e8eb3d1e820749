package engine

import (
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// validationDetails explains why doc fails the validator spec, as the
// errInfo.details of MongoDB 5.0+'s DocumentValidationFailure: a clause
// is {operatorName, specifiedAs, reason, consideredValue(s)}, a logical
// operator lists the clauses that failed ({index, details}), $jsonSchema
// lists its schemaRulesNotSatisfied. A validator of several clauses is
// an implicit $and; one of a single clause is that clause.
// https://www.mongodb.com/docs/v7.0/core/schema-validation/#schema-validation-error-details
// Under a negation ($nor, $not) a clause is explained in the inverted
// sense, as MongoDB's doc_validation_error does: why it matched.
// It runs only once a document has failed, so it may compile freely.
func validationDetails(spec, doc bson.Raw) bson.D { return specDetails(spec, doc, false) }

func specDetails(spec, doc bson.Raw, inv bool) bson.D {
	clauses := filterClauses(spec)
	if len(clauses) == 1 {
		return clauses[0].details(doc, inv)
	}
	return listDetails("$and", clauses, doc, inv)
}

// statusDoc is err as MongoDB's Status::serialize writes it.
func statusDoc(err error) bson.Raw {
	idx, doc := bsoncore.AppendDocumentStart(nil)
	doc, _ = mongoerr.As(err).AppendStatus(doc) // its extra fields are BSON values already
	doc, _ = bsoncore.AppendDocumentEnd(doc, idx)
	return doc
}

// clause is one predicate of a filter document: its operator name and the
// filter document that states it alone.
type clause struct {
	op   string
	path string
	arg  bson.RawValue // the operand; for a field clause, the operator's
	spec bson.D        // specifiedAs
}

// filterClauses splits a filter document into its clauses, an operator
// document {a: {$gt: 1, $lt: 5}} giving one clause per operator.
func filterClauses(spec bson.Raw) []clause {
	var out []clause
	elems, _ := spec.Elements()
	for _, el := range elems {
		key, val := el.Key(), el.Value()
		if strings.HasPrefix(key, "$") {
			if key != "$comment" {
				out = append(out, clause{op: key, arg: val, spec: bson.D{{Key: key, Value: val}}})
			}
			continue
		}
		ops, isOps := operatorDoc(val)
		if val.Type == bson.TypeRegex {
			out = append(out, clause{op: "$regex", path: key, arg: val, spec: bson.D{{Key: key, Value: val}}})
			continue
		}
		if !isOps {
			out = append(out, clause{op: "$eq", path: key, arg: val, spec: bson.D{{Key: key, Value: val}}})
			continue
		}
		for _, op := range ops {
			if op.Key() == "$options" {
				continue
			}
			opSpec := bson.D{{Key: op.Key(), Value: op.Value()}}
			if op.Key() == "$regex" {
				if o, ok := val.Document().Lookup("$options").StringValueOK(); ok {
					opSpec = append(opSpec, bson.E{Key: "$options", Value: o})
				}
			}
			out = append(out, clause{op: op.Key(), path: key, arg: op.Value(), spec: bson.D{{Key: key, Value: opSpec}}})
		}
	}
	return out
}

// operatorDoc returns v's elements when v is a document of operators.
func operatorDoc(v bson.RawValue) ([]bson.RawElement, bool) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, false
	}
	elems, _ := d.Elements()
	if len(elems) == 0 || !strings.HasPrefix(elems[0].Key(), "$") {
		return nil, false
	}
	return elems, true
}

// matches reports whether doc satisfies the clause alone.
func (c clause) matches(doc bson.Raw) bool {
	raw, err := bson.Marshal(c.spec)
	if err != nil {
		return false
	}
	f, err := query.Compile(raw)
	if err != nil {
		return false
	}
	ok, _, err := f.MatchErr(doc)
	return ok && err == nil
}

// listDetails explains a logical operator over clauses, in the inverted
// sense when inv: the clauses that explain its outcome, each with its
// index and details. $and fails by its failing clauses, $or by all (which
// all failed), $nor by its matching ones, explained inverted; inverted,
// $and matched by all, $or by its matching ones, $nor by all, explained
// normally.
func listDetails(op string, clauses []clause, doc bson.Raw, inv bool) bson.D {
	childInv := inv != (op == "$nor")
	// Only some clauses explain $and's failure, $or's match and $nor's
	// failure: those whose outcome is the operator's.
	some := op == "$and" && !inv || op == "$or" && inv || op == "$nor" && !inv
	var listed bson.A
	for i, c := range clauses {
		if some && c.matches(doc) != childInv {
			continue
		}
		listed = append(listed, bson.D{{Key: "index", Value: int32(i)}, {Key: "details", Value: c.details(doc, childInv)}})
	}
	key := "clausesNotSatisfied"
	if childInv {
		key = "clausesSatisfied"
	}
	return bson.D{{Key: "operatorName", Value: op}, {Key: key, Value: listed}}
}

// leafReasons are the reasons MongoDB gives when a leaf operator fails,
// and, inverted, when it matches under a negation. $ne and $nin are
// negations of $eq and $in, so their reasons are those inverted.
var leafReasons = map[string][2]string{
	"$eq": {"comparison failed", "comparison succeeded"}, "$gt": {"comparison failed", "comparison succeeded"},
	"$gte": {"comparison failed", "comparison succeeded"}, "$lt": {"comparison failed", "comparison succeeded"},
	"$lte": {"comparison failed", "comparison succeeded"}, "$ne": {"comparison succeeded", "comparison failed"},
	"$in": {"no matching value found in array", "matching value found in array"}, "$nin": {"matching value found in array", "no matching value found in array"},
	"$type": {"type did not match", "type did match"}, "$regex": {"regular expression did not match", "regular expression did match"},
	"$mod":        {"$mod did not evaluate to expected remainder", "$mod did evaluate to expected remainder"},
	"$all":        {"array did not contain all specified values", "array did contain all specified values"},
	"$elemMatch":  {"array did not satisfy the child predicate", "array did satisfy the child predicate"},
	"$size":       {"array length was not equal to given size", "array length was equal to given size"},
	"$exists":     {"path does not exist", "path does exist"},
	"$expr":       {"expression did not match", "expression did match"},
	"$bitsAllSet": {"bitwise operator failed to match", "bitwise operator matched successfully"}, "$bitsAnySet": {"bitwise operator failed to match", "bitwise operator matched successfully"},
	"$bitsAllClear": {"bitwise operator failed to match", "bitwise operator matched successfully"}, "$bitsAnyClear": {"bitwise operator failed to match", "bitwise operator matched successfully"},
}

// reason is the normal or, when inv, the inverted one of two reasons.
func reason(r [2]string, inv bool) string {
	if inv {
		return r[1]
	}
	return r[0]
}

// details explains the failure of the clause on doc, or, when inv, its
// match.
func (c clause) details(doc bson.Raw, inv bool) bson.D {
	switch c.op {
	case "$and", "$or", "$nor":
		arr, _ := c.arg.ArrayOK()
		vals, _ := arr.Values()
		var subs []clause
		for _, v := range vals {
			sub, _ := v.DocumentOK()
			subs = append(subs, clause{op: "_sub", arg: v, spec: rawToD(sub)})
		}
		return listDetails(c.op, subs, doc, inv)
	case "_sub":
		sub, _ := c.arg.DocumentOK()
		return specDetails(sub, doc, inv)
	case "$not":
		// {path: {$not: <operator or regex>}} explains its operand
		// inverted; several operators are an $and (MongoDB's parser makes
		// one, named "$and", and drops it when it holds one operator).
		if inner := filterClauses(bsonDoc(bson.D{{Key: c.path, Value: c.arg}})); c.path != "" && len(inner) > 0 {
			if len(inner) == 1 {
				return bson.D{{Key: "operatorName", Value: "$not"}, {Key: "details", Value: inner[0].details(doc, !inv)}}
			}
			return bson.D{{Key: "operatorName", Value: "$not"}, {Key: "details", Value: listDetails("$and", inner, doc, !inv)}}
		}
	case "$jsonSchema":
		schema, _ := c.arg.DocumentOK()
		if inv && allowsObjects(schema) {
			// Under a negation MongoDB does not explain a matching schema.
			return bson.D{{Key: "operatorName", Value: "$jsonSchema"}, {Key: "reason", Value: "schema matched"}}
		}
		if !allowsObjects(schema) {
			// MongoDB parses a schema whose top-level type excludes
			// objects to $alwaysFalse, explained as such.
			return bson.D{{Key: "operatorName", Value: "$jsonSchema"}, {Key: "specifiedAs", Value: c.spec},
				{Key: "reason", Value: reason([2]string{"expression always evaluates to false", "expression always evaluates to true"}, inv)}}
		}
		root := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}
		// The top-level schema's title and description annotate it too.
		out := annotated(bson.D{{Key: "operatorName", Value: "$jsonSchema"}}, schema)
		return append(out, bson.E{Key: "schemaRulesNotSatisfied", Value: schemaErrors(schema, root)})
	case "$expr":
		out := bson.D{{Key: "operatorName", Value: "$expr"}, {Key: "specifiedAs", Value: c.spec}}
		e, err := expr.Compile(c.arg, nil)
		if err == nil {
			var res bson.RawValue
			if res, err = e.Eval(&expr.Context{Clock: expr.Clock{Now: time.Now()}}, doc); err == nil {
				out = append(out, bson.E{Key: "reason", Value: reason(leafReasons["$expr"], inv)})
				if res.Type != 0 {
					out = append(out, bson.E{Key: "expressionResult", Value: res})
				}
				return out
			}
		}
		// The evaluation's error follows as details, serialized as a
		// Status is (code, codeName, errmsg), as doc_validation_error's
		// $expr visitor appends the exception it caught.
		return append(out, bson.E{Key: "reason", Value: "failed to evaluate aggregation expression"},
			bson.E{Key: "details", Value: statusDoc(err)})
	case "$_internalSchemaMinProperties", "$_internalSchemaMaxProperties":
		// doc_validation_error.cpp generateNumPropertiesError
		n, _ := doc.Elements()
		return bson.D{{Key: "operatorName", Value: c.op}, {Key: "specifiedAs", Value: c.spec},
			{Key: "reason", Value: reason([2]string{"specified number of properties was not satisfied", "specified number of properties was satisfied"}, inv)},
			{Key: "numberOfProperties", Value: int32(len(n))}}
	case "$alwaysFalse", "$alwaysTrue":
		return bson.D{{Key: "operatorName", Value: c.op}, {Key: "specifiedAs", Value: c.spec},
			{Key: "reason", Value: reason([2]string{"expression always evaluates to false", "expression always evaluates to true"}, inv)}}
	}
	out := bson.D{{Key: "operatorName", Value: c.op}, {Key: "specifiedAs", Value: c.spec}}
	vals, found := consideredValues(doc, c.path, c.op)
	switch {
	case c.op == "$exists":
		// $exists: false is a negation of $exists: true; it reports no
		// values.
		return append(out, bson.E{Key: "reason", Value: reason(leafReasons["$exists"], inv == values.Truthy(c.arg))})
	case !found:
		return append(out, bson.E{Key: "reason", Value: "field was missing"})
	case expectedTypes[c.op] != nil && !slices.ContainsFunc(vals, func(v any) bool { return slices.Contains(expectedTypes[c.op], values.TypeName(v.(bson.RawValue).Type)) }):
		// None of the values is of a type the operator applies to.
		out = append(out, bson.E{Key: "reason", Value: "type did not match"})
		out = appendConsideredTypes(out, vals)
		if types := expectedTypes[c.op]; len(types) == 1 {
			out = append(out, bson.E{Key: "expectedType", Value: types[0]})
		} else {
			out = append(out, bson.E{Key: "expectedTypes", Value: types})
		}
	case leafReasons[c.op] != [2]string{}:
		out = append(out, bson.E{Key: "reason", Value: reason(leafReasons[c.op], inv)})
	}
	if len(vals) == 1 {
		out = append(out, bson.E{Key: "consideredValue", Value: vals[0]})
	} else {
		out = append(out, bson.E{Key: "consideredValues", Value: vals})
	}
	if c.op == "$type" {
		out = appendConsideredTypes(out, vals)
	}
	return out
}

// allowsObjects reports whether the top-level type or bsonType of schema,
// if it has one, admits documents (encrypt implies BinData).
func allowsObjects(schema bson.Raw) bool {
	if _, err := schema.LookupErr("encrypt"); err == nil {
		return false
	}
	for _, k := range [...]string{"type", "bsonType"} {
		v, err := schema.LookupErr(k)
		if err != nil {
			continue
		}
		if s, ok := v.StringValueOK(); ok {
			return s == "object"
		}
		names, _ := v.Array().Values()
		return slices.ContainsFunc(names, func(n bson.RawValue) bool { s, _ := n.StringValueOK(); return s == "object" })
	}
	return true
}

// expectedTypes are the types (sorted names) of the values the leaf
// operators that apply to some types only test; when none of the values
// considered is of one of them, MongoDB reports a type mismatch.
var expectedTypes = map[string][]string{
	"$regex": {"regex", "string", "symbol"},
	"$mod":   {"decimal", "double", "int", "long"},
	"$size":  {"array"}, "$elemMatch": {"array"},
	"$bitsAllSet": {"binData", "decimal", "double", "int", "long"}, "$bitsAnySet": {"binData", "decimal", "double", "int", "long"},
	"$bitsAllClear": {"binData", "decimal", "double", "int", "long"}, "$bitsAnyClear": {"binData", "decimal", "double", "int", "long"},
}

// appendConsideredTypes adds the type names of vals: consideredType for
// one, consideredTypes (sorted, distinct) for several.
func appendConsideredTypes(out bson.D, vals bson.A) bson.D {
	var types []string
	for _, v := range vals {
		n := values.TypeName(v.(bson.RawValue).Type)
		if !slices.Contains(types, n) {
			types = append(types, n)
		}
	}
	if len(types) == 1 {
		return append(out, bson.E{Key: "consideredType", Value: types[0]})
	}
	slices.Sort(types)
	return append(out, bson.E{Key: "consideredTypes", Value: types})
}

// consideredValues are the values a leaf operator examined at path, as
// MongoDB's element path iterates them: through the arrays on the path,
// and at its end an array's elements, or the array itself for the
// operators that test whole arrays ($size, $elemMatch, $all); found
// reports whether the path exists (an empty array at its end has no
// values).
func consideredValues(doc bson.Raw, path, op string) (vals bson.A, found bool) {
	wholeArrays := op == "$size" || op == "$elemMatch" || op == "$all"
	var walk func(v bson.RawValue, parts []string)
	walk = func(v bson.RawValue, parts []string) {
		if len(parts) == 0 {
			found = true
			arr, isArr := v.ArrayOK()
			if !isArr || wholeArrays {
				vals = append(vals, v)
				return
			}
			elems, _ := arr.Values()
			for _, e := range elems {
				vals = append(vals, e)
			}
			return
		}
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			if child, err := v.Document().LookupErr(parts[0]); err == nil {
				walk(child, parts[1:])
			}
		case bson.TypeArray:
			// An array on the path: each document in it, and the element
			// a numeric component names.
			elems, _ := v.Array().Values()
			for _, e := range elems {
				if e.Type == bson.TypeEmbeddedDocument {
					walk(e, parts)
				}
			}
			if child, err := bson.Raw(v.Array()).LookupErr(parts[0]); err == nil {
				walk(child, parts[1:])
			}
		}
	}
	walk(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, strings.Split(path, "."))
	if vals == nil {
		vals = bson.A{}
	}
	return vals, found
}

func rawToD(r bson.Raw) bson.D {
	var d bson.D
	elems, _ := r.Elements()
	for _, e := range elems {
		d = append(d, bson.E{Key: e.Key(), Value: e.Value()})
	}
	return d
}
