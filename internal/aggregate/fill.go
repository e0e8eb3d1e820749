package aggregate

import (
	"strconv"

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
	// As MongoDB's FillSpec::parse (IDL), every field is read and checked
	// in order before anything else: an unknown, repeated or mistyped
	// field fails first, whatever the outputs are, then a missing output.
	var output, partitionBy, partitionByFields, sortBy bson.RawValue
	for _, f := range fieldsOf(arg.Value) {
		var dst *bson.RawValue
		switch f.key {
		case "output":
			dst = &output
		case "partitionBy":
			dst = &partitionBy
		case "partitionByFields":
			dst = &partitionByFields
		case "sortBy":
			dst = &sortBy
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$fill.%s' is an unknown field.", f.key)
		}
		if dst.Type != 0 {
			return nil, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '$fill.%s' is a duplicate field", f.key)
		}
		switch {
		case f.key == "partitionBy" && f.val.Type != bson.TypeString && f.val.Type != bson.TypeEmbeddedDocument:
			return nil, mongoerr.WrongTypes("$fill.partitionBy", typeName(f.val), "string", "object")
		case f.key == "partitionByFields" && f.val.Type != bson.TypeArray:
			return nil, mongoerr.WrongType("$fill.partitionByFields", typeName(f.val), "array")
		case f.key == "partitionByFields":
			for i, v := range arrayValues(f.val) {
				if v.Type != bson.TypeString {
					return nil, mongoerr.WrongType("$fill.partitionByFields."+strconv.Itoa(i), typeName(v), "string")
				}
			}
		case f.key != "partitionBy" && f.val.Type != bson.TypeEmbeddedDocument: // output, sortBy
			return nil, mongoerr.WrongType("$fill."+f.key, typeName(f.val), "object")
		}
		*dst = f.val
	}
	if output.Type == 0 {
		return nil, mongoerr.MissingField("$fill.output")
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
			var dst *bson.RawValue
			switch f.key {
			case "method":
				dst = &method
			case "value":
				dst = &value
			default:
				return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$fill.%s' is an unknown field.", f.key)
			}
			if dst.Type != 0 {
				return nil, mongoerr.New(mongoerr.IDLDuplicateField, "BSON field '$fill.%s' is a duplicate field", f.key)
			}
			if f.key == "method" && f.val.Type != bson.TypeString {
				return nil, mongoerr.WrongType("$fill.method", typeName(f.val), "string")
			}
			*dst = f.val
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
			spec = append(spec, field{"partitionBy", partitionBy})
		case partitionByFields.Type != 0:
			var keys []field
			for _, v := range arrayValues(partitionByFields) {
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
