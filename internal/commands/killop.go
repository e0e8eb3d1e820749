package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	registerAdmin(killOpCmd, killOpSpec, "killOp")
}

// killOpSpec declares killOp's fields: op is checked as MongoDB checks it,
// by the handler.
var killOpSpec = untyped("killOp", arg("op", tAny))

// errKilled is the error a killed operation fails with (MongoDB's
// ErrorCodes::Interrupted), whether killOp or killSessions killed it.
var errKilled = mongoerr.New(mongoerr.Interrupted, "operation was interrupted")

// killOpCmd runs {killOp: 1, op: <opid>}: it marks the operation killed
// (currentOp then shows killPending: true) and the operation fails with
// Interrupted (11601) at its next check, within milliseconds. As in
// MongoDB the reply is the same whether or not the operation exists.
// https://www.mongodb.com/docs/manual/reference/command/killOp/
func killOpCmd(s *Service, r *Request) (bson.Raw, error) {
	v := r.args.value("op")
	if v.Type == 0 {
		return nil, mongoerr.New(mongoerr.NoSuchKey, "Missing expected field \"op\"")
	}
	if !values.IsNumber(v.Type) {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "Expected field \"op\" to have numeric type, but found %s", values.TypeName(v.Type))
	}
	var id int64
	switch v.Type {
	case bson.TypeInt32:
		id = int64(v.Int32())
	case bson.TypeInt64:
		id = v.Int64()
	default:
		f, _ := values.Float64(v)
		if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			return nil, mongoerr.New(mongoerr.BadValue, "Expected field \"op\" to have a value exactly representable as a 64-bit integer, but found op: %v", f)
		}
		id = int64(f)
	}
	s.ops.killWhere(func(op *activeOp) bool { return op.id == id }, errKilled)
	return marshal(bson.D{{Key: "info", Value: "attempting to kill op"}}), nil
}
