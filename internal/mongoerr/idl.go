package mongoerr

import "strings"

// MongoDB's IDL type errors (IDLParserContext). A field of one accepted
// type names it alone (checkAndAssertType): "expected type 'string'". A
// field of several, or a variant, lists them (throwBadType), always as
// "types", with the closing quote inside the bracket: "expected types
// '[long, int, decimal, double']". Every such message in Folio comes from
// WrongType and WrongTypes.

// WrongType is the TypeMismatch of the field at path (its dotted IDL path,
// "find.sort") holding a value of type got (values.TypeName's name) where
// the IDL accepts the one type want.
func WrongType(path, got, want string) *Error {
	return &Error{Code: TypeMismatch, Msg: "BSON field '" + path + "' is the wrong type '" + got + "', expected type '" + want + "'"}
}

// WrongTypes is the TypeMismatch of the field at path holding a value of
// type got where the IDL accepts the types want (throwBadType), listed even
// when there is one.
func WrongTypes(path, got string, want ...string) *Error {
	return &Error{Code: TypeMismatch, Msg: "BSON field '" + path + "' is the wrong type '" + got + "', expected " + ExpectedTypes(want...)}
}

// ExpectedTypes is how throwBadType names the types want: "types '[a,
// b']".
func ExpectedTypes(want ...string) string {
	return "types '[" + strings.Join(want, ", ") + "']"
}

// NumberTypes are the BSON types of the IDL's numeric types (safeInt,
// safeInt64, safeDouble...) in the order its errors list them.
func NumberTypes() []string { return []string{"long", "int", "decimal", "double"} }

// WrongNumberType is the TypeMismatch of a numeric IDL field at path
// holding a value of type got: "expected types '[long, int, decimal,
// double']".
func WrongNumberType(path, got string) *Error { return WrongTypes(path, got, NumberTypes()...) }

// ExpectedObject is BSONElement::Obj()'s refusal of a value that is
// neither a document nor an array (embeddedObjectUserCheck), naming its
// field: "invalid parameter: expected an object (indexes)". The IDL reads
// an array field with it, so a null array field fails with it (10065).
func ExpectedObject(field string) *Error {
	return &Error{Code: ExpectedObjectParameter, Msg: "invalid parameter: expected an object (" + field + ")"}
}

// MissingField is the IDL's refusal of a command or spec without its
// required field at path (its dotted IDL path, "$merge.into").
func MissingField(path string) *Error {
	return &Error{Code: IDLFailedToParse, Msg: "BSON field '" + path + "' is missing but a required field"}
}
