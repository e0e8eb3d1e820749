// Package mongoerr holds MongoDB's error codes and the error type every layer
// returns, so that a command reply carries the code and codeName that drivers
// and applications branch on. Codes MongoDB leaves unnamed are reported with
// the codeName "Location<code>", as MongoDB does.
package mongoerr

import (
	"errors"
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Code is a MongoDB server error code.
type Code int32

// Named codes, as in MongoDB's error_codes.yml.
const (
	InternalError                            Code = 1
	BadValue                                 Code = 2
	NoSuchKey                                Code = 4
	UnknownError                             Code = 8
	FailedToParse                            Code = 9
	Unauthorized                             Code = 13
	TypeMismatch                             Code = 14
	Overflow                                 Code = 15
	InvalidLength                            Code = 16
	ProtocolError                            Code = 17
	IllegalOperation                         Code = 20
	EmptyArrayOperation                      Code = 21
	InvalidBSON                              Code = 22
	NamespaceNotFound                        Code = 26
	IndexNotFound                            Code = 27
	PathNotViable                            Code = 28
	ConflictingUpdateOperators               Code = 40
	CursorNotFound                           Code = 43
	NamespaceExists                          Code = 48
	MaxTimeMSExpired                         Code = 50
	DollarPrefixedFieldName                  Code = 52
	InvalidIdField                           Code = 53
	NotSingleValueField                      Code = 54
	CommandNotFound                          Code = 59
	ImmutableField                           Code = 66
	CannotCreateIndex                        Code = 67
	InvalidOptions                           Code = 72
	InvalidNamespace                         Code = 73
	IndexOptionsConflict                     Code = 85
	IndexKeySpecsConflict                    Code = 86
	OperationFailed                          Code = 96
	WriteConflict                            Code = 112
	CommandNotSupported                      Code = 115
	InvalidPipelineOperator                  Code = 168
	AmbiguousIndexKeyPattern                 Code = 181
	InvalidIndexSpecificationOption          Code = 197
	TransactionTooOld                        Code = 225
	NotImplemented                           Code = 238
	NoSuchTransaction                        Code = 251
	NoQueryExecutionPlans                    Code = 291
	QueryExceededMemoryLimitNoDiskUseAllowed Code = 292
	BSONObjectTooLarge                       Code = 10334
	DuplicateKey                             Code = 11000
	Interrupted                              Code = 11601
	NotWritablePrimary                       Code = 10107
)

var names = map[Code]string{
	InternalError:                            "InternalError",
	BadValue:                                 "BadValue",
	NoSuchKey:                                "NoSuchKey",
	UnknownError:                             "UnknownError",
	FailedToParse:                            "FailedToParse",
	Unauthorized:                             "Unauthorized",
	TypeMismatch:                             "TypeMismatch",
	Overflow:                                 "Overflow",
	InvalidLength:                            "InvalidLength",
	ProtocolError:                            "ProtocolError",
	IllegalOperation:                         "IllegalOperation",
	EmptyArrayOperation:                      "EmptyArrayOperation",
	InvalidBSON:                              "InvalidBSON",
	NamespaceNotFound:                        "NamespaceNotFound",
	IndexNotFound:                            "IndexNotFound",
	PathNotViable:                            "PathNotViable",
	ConflictingUpdateOperators:               "ConflictingUpdateOperators",
	CursorNotFound:                           "CursorNotFound",
	NamespaceExists:                          "NamespaceExists",
	MaxTimeMSExpired:                         "MaxTimeMSExpired",
	DollarPrefixedFieldName:                  "DollarPrefixedFieldName",
	InvalidIdField:                           "InvalidIdField",
	NotSingleValueField:                      "NotSingleValueField",
	CommandNotFound:                          "CommandNotFound",
	ImmutableField:                           "ImmutableField",
	CannotCreateIndex:                        "CannotCreateIndex",
	InvalidOptions:                           "InvalidOptions",
	InvalidNamespace:                         "InvalidNamespace",
	IndexOptionsConflict:                     "IndexOptionsConflict",
	IndexKeySpecsConflict:                    "IndexKeySpecsConflict",
	OperationFailed:                          "OperationFailed",
	WriteConflict:                            "WriteConflict",
	CommandNotSupported:                      "CommandNotSupported",
	InvalidPipelineOperator:                  "InvalidPipelineOperator",
	AmbiguousIndexKeyPattern:                 "AmbiguousIndexKeyPattern",
	InvalidIndexSpecificationOption:          "InvalidIndexSpecificationOption",
	TransactionTooOld:                        "TransactionTooOld",
	NotImplemented:                           "NotImplemented",
	NoSuchTransaction:                        "NoSuchTransaction",
	NoQueryExecutionPlans:                    "NoQueryExecutionPlans",
	QueryExceededMemoryLimitNoDiskUseAllowed: "QueryExceededMemoryLimitNoDiskUseAllowed",
	BSONObjectTooLarge:                       "BSONObjectTooLarge",
	DuplicateKey:                             "DuplicateKey",
	Interrupted:                              "Interrupted",
	NotWritablePrimary:                       "NotWritablePrimary",
}

// Name is the codeName MongoDB reports for c.
func (c Code) Name() string {
	if n, ok := names[c]; ok {
		return n
	}
	return "Location" + strconv.Itoa(int(c))
}

// Error is a MongoDB error: a code, a message, optional error labels and
// optional extra reply fields (keyPattern and keyValue for DuplicateKey).
type Error struct {
	Code   Code
	Msg    string
	Labels []string
	Extra  bson.D
}

// New returns an error with code and a formatted message.
func New(code Code, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Code: code, Msg: format}
	}
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%d): %s", e.Code.Name(), e.Code, e.Msg)
}

// As returns err as an *Error; an error of another kind becomes InternalError.
func As(err error) *Error {
	var me *Error
	if errors.As(err, &me) {
		return me
	}
	return &Error{Code: InternalError, Msg: err.Error()}
}

// Is reports whether err is a MongoDB error with the given code.
func Is(err error, code Code) bool {
	var me *Error
	return errors.As(err, &me) && me.Code == code
}
