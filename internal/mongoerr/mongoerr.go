// Package mongoerr holds MongoDB's error codes and the error type every layer
// returns, so that a command reply carries the code and codeName that drivers
// and applications branch on. Codes MongoDB leaves unnamed are reported with
// the codeName "Location<code>", as MongoDB does.
package mongoerr

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/values"
)

// Code is a MongoDB server error code.
type Code int32

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

// New returns an error with code and a formatted message. BSON documents
// and values among args are shown as MongoDB's messages show them
// (values.Shell: { a: 1 }, "str", [ 1, 2 ]), not as Extended JSON.
func New(code Code, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Code: code, Msg: format}
	}
	shown := args // the caller's until an argument is shown otherwise
	for i, a := range args {
		text, ok := shell(a)
		if !ok {
			continue
		}
		if &shown[0] == &args[0] {
			shown = slices.Clone(args)
		}
		shown[i] = text
	}
	return &Error{Code: code, Msg: fmt.Sprintf(format, shown...)}
}

// shell is a BSON document or value as MongoDB's messages show it; ok is
// false for an argument of another type.
func shell(a any) (string, bool) {
	switch v := a.(type) {
	case bson.Raw:
		return values.ShellDoc(v), true
	case bsoncore.Document:
		return values.ShellDoc(bson.Raw(v)), true
	case bson.RawValue:
		return values.Shell(v), true
	case bson.D:
		if doc, err := bson.Marshal(v); err == nil {
			return values.ShellDoc(doc), true
		}
	}
	return "", false
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%d): %s", e.Code.Name(), e.Code, e.Msg)
}

// AppendStatus appends e's fields to a document as MongoDB's
// Status::serialize writes them: code, codeName, errmsg, then its extra
// fields (a writeConcernError's, an abortIndexBuild entry's cause).
func (e *Error) AppendStatus(dst []byte) ([]byte, error) {
	dst = bsoncore.AppendInt32Element(dst, "code", int32(e.Code))
	dst = bsoncore.AppendStringElement(dst, "codeName", e.Code.Name())
	dst = bsoncore.AppendStringElement(dst, "errmsg", e.Msg)
	for _, x := range e.Extra {
		t, v, err := bson.MarshalValue(x.Value)
		if err != nil {
			return nil, err
		}
		dst = append(bsoncore.AppendHeader(dst, bsoncore.Type(t), x.Key), v...)
	}
	return dst, nil
}

// AddContext returns err with context written before its message, as
// MongoDB's DBException::addContext writes it ("context :: caused by ::
// message"), keeping its code, labels and extra fields; nil stays nil.
func AddContext(err error, context string) error {
	if err == nil {
		return nil
	}
	e := *As(err)
	e.Msg = context + " :: caused by :: " + e.Msg
	return &e
}

// As returns err as an *Error; an error of another kind becomes InternalError.
func As(err error) *Error {
	if me, ok := errors.AsType[*Error](err); ok {
		return me
	}
	return &Error{Code: InternalError, Msg: err.Error()}
}

// Is reports whether err is a MongoDB error with the given code.
func Is(err error, code Code) bool {
	me, ok := errors.AsType[*Error](err)
	return ok && me.Code == code
}
