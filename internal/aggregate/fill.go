package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
)

// parseFill reads $fill, which is, as in MongoDB, a $setWindowFields
// ($locf or $linearFill of each field filled by a method, over its
// partitionBy or partitionByFields and sortBy) followed by an $addFields
// ({field: {$ifNull: ["$field", value]}} for each field filled by a value).
func (p *parser) parseFill(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The $fill stage specification must be an object, found %s", typeName(arg))
	}
	var output, partitionBy, partitionByFields, sortBy bson.RawValue
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "output":
			output = f.val
		case "partitionBy":
			partitionBy = f.val
		case "partitionByFields":
			partitionByFields = f.val
		case "sortBy":
			sortBy = f.val
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$fill.%s' is an unknown field.", f.key)
		}
	}
	if output.Type == 0 {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '$fill.output' is missing but a required field")
	}
	if output.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.output' is the wrong type '%s', expected type 'object'", typeName(output))
	}
	outs := fieldsOf(output.Value)
	if len(outs) == 0 {
		return nil, mongoerr.New(mongoerr.FillOutputEmpty, "The output field in '$fill' must contain an object with at least one element")
	}
	var window, add []field
	for _, o := range outs {
		if o.val.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.FillOutputNotObject, "Each fill output specification must be an object with exactly one field")
		}
		var method, value bson.RawValue
		for _, f := range fieldsOf(o.val.Value) {
			switch f.key {
			case "method":
				if f.val.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.method' is the wrong type '%s', expected type 'string'", typeName(f.val))
				}
				method = f.val
			case "value":
				value = f.val
			default:
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$fill.%s' is an unknown field.", f.key)
			}
		}
		ref := stringValue("$" + o.key)
		switch {
		case method.Type != 0 && value.Type != 0:
			return nil, mongoerr.New(mongoerr.FillMethodAndValue, "Each fill output specification must have exactly one of 'method' or 'value' fields, not both")
		case method.Type != 0:
			var fn string
			switch method.StringValue() {
			case "locf":
				fn = "$locf"
			case "linear":
				fn = "$linearFill"
			default:
				return nil, mongoerr.New(mongoerr.FillBadMethod, "Method must be either locf or linear")
			}
			window = append(window, field{o.key, docValue(buildDoc([]field{{fn, ref}}))})
		case value.Type != 0:
			add = append(add, field{o.key, docValue(buildDoc([]field{{"$ifNull", buildArray([]bson.RawValue{ref, value})}}))})
		default:
			// Neither: nothing to fill, as MongoDB's IDL leaves both optional.
		}
	}
	if partitionBy.Type != 0 && partitionByFields.Type != 0 {
		return nil, mongoerr.New(mongoerr.FillPartitionTwice, "Maximum one of 'partitionBy' and 'partitionByFields can be specified in '$fill'")
	}
	var out stages
	if len(window) > 0 {
		spec := []field{{"output", docValue(buildDoc(window))}}
		if sortBy.Type != 0 {
			spec = append(spec, field{"sortBy", sortBy})
		}
		switch {
		case partitionBy.Type != 0:
			if partitionBy.Type != bson.TypeString && partitionBy.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.WrongTypes("$fill.partitionBy", typeName(partitionBy), "string", "object")
			}
			spec = append(spec, field{"partitionBy", partitionBy})
		case partitionByFields.Type != 0:
			if partitionByFields.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.partitionByFields' is the wrong type '%s', expected type 'array'", typeName(partitionByFields))
			}
			var keys []field
			for _, v := range arrayValues(partitionByFields) {
				if v.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$fill.partitionByFields' is the wrong type '%s', expected type 'string'", typeName(v))
				}
				// each becomes a field of the partitionBy object
				if err := expr.ValidFieldName(v.StringValue()); err != nil {
					return nil, err
				}
				keys = append(keys, field{v.StringValue(), stringValue("$" + v.StringValue())})
			}
			spec = append(spec, field{"partitionBy", docValue(buildDoc(keys))})
		}
		s, err := p.parseSetWindowFields(docValue(buildDoc(spec)))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(add) > 0 {
		s, err := p.parseAddFields("$addFields", docValue(buildDoc(add)))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
