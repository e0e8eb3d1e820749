package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// argFunc handles one field; it returns false for a field it does not know.
type argFunc func(key string, v bson.RawValue) (bool, error)

// eachArg calls fn for every command field except the command name itself
// and the generic arguments; a field fn does not know fails with MongoDB's
// unknown-field error (40415).
func eachArg(cmd bson.Raw, fn argFunc) error {
	return walkFields(cmd, Name(cmd), true, fn)
}

// eachField calls fn for every field of a sub-document of a command (an
// update statement, say); where names it in error messages.
func eachField(doc bson.Raw, where string, fn argFunc) error {
	return walkFields(doc, where, false, fn)
}

func walkFields(doc bson.Raw, where string, isCommand bool, fn argFunc) error {
	elems, err := doc.Elements()
	if err != nil {
		return mongoerr.New(mongoerr.InvalidBSON, "invalid command document: %v", err)
	}
	for i, el := range elems {
		key := el.Key()
		if isCommand && (i == 0 || isGenericArg(key)) {
			continue
		}
		known, err := fn(key, el.Value())
		if err != nil {
			return err
		}
		if !known {
			return mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", where, key)
		}
	}
	return nil
}

// wrongType is MongoDB's error for a command field of the wrong BSON type.
func wrongType(cmd, field string, v bson.RawValue, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s.%s' is the wrong type '%s', expected type '%s'",
		cmd, field, values.TypeName(v.Type), want)
}

// argDoc reads an object-valued field.
func argDoc(cmd, field string, v bson.RawValue) (bson.Raw, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, wrongType(cmd, field, v, "object")
	}
	return v.Document(), nil
}

// argBool reads a boolean field; like MongoDB it accepts numbers as
// booleans (non-zero is true).
func argBool(cmd, field string, v bson.RawValue) (bool, error) {
	switch v.Type {
	case bson.TypeBoolean:
		return v.Boolean(), nil
	case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
		f, _ := values.Float64(v)
		return f != 0, nil
	case bson.TypeNull, bson.TypeUndefined:
		return false, nil
	}
	return false, wrongType(cmd, field, v, "bool")
}

// argInt reads a whole-number field of any numeric type.
func argInt(cmd, field string, v bson.RawValue) (int64, error) {
	switch v.Type {
	case bson.TypeInt32:
		return int64(v.Int32()), nil
	case bson.TypeInt64:
		return v.Int64(), nil
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || math.IsNaN(f) || math.Abs(f) > 1<<62 {
			return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s.%s' value must be a whole number, but got %v", cmd, field, f)
		}
		return int64(f), nil
	case bson.TypeDecimal128:
		// Beyond ±2^62 (infinities included) as for doubles: int64(f)
		// would wrap.
		f, _ := values.Float64(v)
		if f != math.Trunc(f) || math.IsNaN(f) || math.Abs(f) > 1<<62 {
			return 0, mongoerr.New(mongoerr.IDLValueOutOfRange, "BSON field '%s.%s' value must be a whole number", cmd, field)
		}
		return int64(f), nil
	}
	return 0, wrongType(cmd, field, v, "long")
}

// argString reads a string field.
func argString(cmd, field string, v bson.RawValue) (string, error) {
	if v.Type != bson.TypeString {
		return "", wrongType(cmd, field, v, "string")
	}
	return v.StringValue(), nil
}

// collectionArg reads the collection name a command names in its first
// field, validating it as MongoDB does.
func collectionArg(cmd bson.Raw) (string, error) {
	el, err := cmd.IndexErr(0)
	if err != nil {
		return "", mongoerr.New(mongoerr.FailedToParse, "Empty command object")
	}
	v := el.Value()
	if v.Type != bson.TypeString {
		return "", mongoerr.New(mongoerr.InvalidNamespace,
			"collection name has invalid type %s", values.TypeName(v.Type))
	}
	if v.StringValue() == "" {
		db, _ := cmd.Lookup("$db").StringValueOK()
		return "", mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.'", db)
	}
	return v.StringValue(), nil
}
