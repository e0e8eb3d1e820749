package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
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
	id, err := extractInteger("op", v)
	if err != nil {
		return nil, err
	}
	s.ops.killWhere(func(op *activeOp) bool { return op.id == id }, errKilled)
	return marshal(bson.D{{Key: "info", Value: "attempting to kill op"}}), nil
}
