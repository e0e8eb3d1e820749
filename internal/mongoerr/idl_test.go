package mongoerr

import "testing"

// TestIDLTypeErrors: the IDL's type errors as MongoDB's IDLParserContext
// writes them: one type alone, several (or a variant's) as a list whose
// closing quote is inside the bracket.
func TestIDLTypeErrors(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		code Code
		msg  string
	}{
		{WrongType("find.sort", "string", "object"), TypeMismatch,
			"BSON field 'find.sort' is the wrong type 'string', expected type 'object'"},
		{WrongTypes("dbStats.scale", "string", NumberTypes()...), TypeMismatch,
			"BSON field 'dbStats.scale' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{WrongNumberType("collStats.scale", "object"), TypeMismatch,
			"BSON field 'collStats.scale' is the wrong type 'object', expected types '[long, int, decimal, double']"},
		{WrongTypes("$fill.partitionBy", "int", "string", "object"), TypeMismatch,
			"BSON field '$fill.partitionBy' is the wrong type 'int', expected types '[string, object']"},
		{WrongTypes("x.y", "bool", "string"), TypeMismatch,
			"BSON field 'x.y' is the wrong type 'bool', expected types '[string']"},
		{ExpectedObject("indexes"), ExpectedObjectParameter, "invalid parameter: expected an object (indexes)"},
	} {
		if tc.err.Code != tc.code || tc.err.Msg != tc.msg {
			t.Errorf("got %d %q, want %d %q", tc.err.Code, tc.err.Msg, tc.code, tc.msg)
		}
	}
}
