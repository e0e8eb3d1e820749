package aggregate

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// unwindStage is $unwind: one output document per element of the array at
// path (which does not traverse arrays), the element replacing the array.
// A non-array value counts as a one-element array. Null, missing and empty
// arrays produce nothing unless preserveNullAndEmptyArrays is set, in which
// case the document passes unchanged (an empty array removed).
// includeArrayIndex names a field set to the element's index (a long), null
// when the value was not an array.
type unwindStage struct {
	path     []string
	index    []string
	preserve bool
}

// explainSpec is $unwind as MongoDB's DocumentSourceUnwind serializes
// it, the short form {$unwind: "$path"} included: {path: "$path"}, then
// preserveNullAndEmptyArrays only when true and includeArrayIndex only
// when given.
func (s *unwindStage) explainSpec() any {
	d := bson.D{{Key: "path", Value: "$" + strings.Join(s.path, ".")}}
	if s.preserve {
		d = append(d, bson.E{Key: "preserveNullAndEmptyArrays", Value: true})
	}
	if s.index != nil {
		d = append(d, bson.E{Key: "includeArrayIndex", Value: strings.Join(s.index, ".")})
	}
	return d
}

func parseUnwind(arg bson.RawValue) (stage, error) {
	s := &unwindStage{}
	var path string
	switch arg.Type {
	case bson.TypeString:
		path = arg.StringValue()
	case bson.TypeEmbeddedDocument:
		for _, f := range fieldsOf(arg.Value) {
			switch f.key {
			case "path":
				if f.val.Type != bson.TypeString {
					return nil, mongoerr.New(mongoerr.UnwindPathNotString, "expected a string as the path for $unwind stage, got %s", typeName(f.val))
				}
				path = f.val.StringValue()
			case "includeArrayIndex":
				if f.val.Type != bson.TypeString || f.val.StringValue() == "" {
					return nil, mongoerr.New(mongoerr.UnwindIndexFieldNotString, "expected a non-empty string for the includeArrayIndex  option to $unwind stage, got %s", typeName(f.val))
				}
				idx := f.val.StringValue()
				if strings.HasPrefix(idx, "$") {
					return nil, mongoerr.New(mongoerr.UnwindIndexFieldDollarPrefixed, "includeArrayIndex option to $unwind stage should not be prefixed with a '$': %s", idx)
				}
				if err := expr.CheckFieldPath(idx); err != nil {
					return nil, err
				}
				s.index = splitPath(idx)
			case "preserveNullAndEmptyArrays":
				if f.val.Type != bson.TypeBoolean {
					return nil, mongoerr.New(mongoerr.UnwindPreserveNotBool, "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage, got %s", typeName(f.val))
				}
				s.preserve = f.val.Boolean()
			default:
				return nil, mongoerr.New(mongoerr.UnwindUnknownOption, "unrecognized option to $unwind stage: %s", f.key)
			}
		}
	default:
		return nil, mongoerr.New(mongoerr.UnwindSpecInvalidType, "expected either a string or an object as specification for $unwind stage, got %s", typeName(arg))
	}
	if path == "" {
		// a path missing or empty, alike
		return nil, mongoerr.New(mongoerr.UnwindMissingPath, "no path specified to $unwind stage")
	}
	if !strings.HasPrefix(path, "$") {
		return nil, mongoerr.New(mongoerr.UnwindPathNotDollarPrefixed, "path option to $unwind stage should be prefixed with a '$': %s", path)
	}
	if strings.IndexByte(path, 0) >= 0 {
		// Expression::removeFieldPrefix, before the path is split
		return nil, mongoerr.New(mongoerr.FieldPathEmbeddedNull, "field path must not contain embedded null characters")
	}
	if err := expr.CheckFieldPath(path[1:]); err != nil {
		return nil, err
	}
	s.path = splitPath(path[1:])
	return s, nil
}

func (s *unwindStage) run(in Source, _ *runtime) Source {
	return &funcSource{in: in, apply: s.unwind}
}

func (s *unwindStage) unwind(doc bson.Raw) ([]bson.Raw, error) {
	v := lookupPath(doc, s.path)
	switch {
	case v.Type == bson.TypeArray:
		elems := arrayValues(v)
		if len(elems) == 0 {
			if !s.preserve {
				return nil, nil
			}
			return []bson.Raw{s.withIndex(setPath(doc, s.path, missing), null)}, nil
		}
		out := make([]bson.Raw, len(elems))
		for i, el := range elems {
			out[i] = s.withIndex(setPath(doc, s.path, el), values.Int64Value(int64(i)))
		}
		return out, nil
	case v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
		if !s.preserve {
			return nil, nil
		}
		return []bson.Raw{s.withIndex(doc, null)}, nil
	}
	return []bson.Raw{s.withIndex(doc, null)}, nil
}

func (s *unwindStage) withIndex(doc bson.Raw, i bson.RawValue) bson.Raw {
	if s.index == nil {
		return doc
	}
	return setPath(doc, s.index, i)
}
