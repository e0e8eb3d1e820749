package commands

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/auth"
	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/expr"
)

// commits reports whether r is a write that commits when it returns (so
// ticks the cluster clock): a write command outside a transaction, an
// aggregate ending in $out or $merge, a commitTransaction. Statements of an
// open transaction commit with it.
func commits(r *Request, name string) bool {
	switch {
	case name == "commitTransaction":
		return true
	case name == "abortTransaction" || !takesWriteConcern(r, name) || r.Args.Session.inTxn:
		return false
	case name == "aggregate":
		return hasOutputStage(&r.args)
	}
	return true
}

// notesWriteTime are the commands whose every write is a document write
// whose commit the engine notes under the operation's context
// (engine.OpStats.OpTime), an implicit create before it aside.
var notesWriteTime = map[string]bool{"insert": true, "update": true, "delete": true,
	"findAndModify": true, "findandmodify": true, "commitTransaction": true}

// writeTime is the operationTime of a command that commits, once it ran:
// as MongoDB's (the client's lastOp), the time of the last oplog entry its
// writes made, so that a change stream started at it sees them, when the
// engine noted it; else, for a write that logged nothing or a command whose
// writes the engine does not note (DDL, $out's rename), a new time, past
// every write before it.
func (s *Service) writeTime(op *activeOp, name string) clock.Time {
	if t := clock.Time(op.stats.OpTime); t != 0 && notesWriteTime[name] {
		s.Clock.Advance(t) // TiKV's clock learns of a commit's time only so
		return t
	}
	return s.Clock.Tick()
}

// hasOutputStage reports whether an aggregate's pipeline ends in $out or
// $merge.
func hasOutputStage(c *cmdArgs) bool {
	p, ok := c.value("pipeline").ArrayOK()
	if !ok {
		return false
	}
	vals, err := p.Values()
	if err != nil || len(vals) == 0 {
		return false
	}
	last, ok := vals[len(vals)-1].DocumentOK()
	if !ok {
		return false
	}
	name := Name(last)
	return name == "$out" || name == "$merge"
}

// exprClock is the clock r's expressions read, taken once per command,
// so that all its statements see the same values, as MongoDB's runtime
// constants: $$NOW, on a replica set member $$CLUSTER_TIME, the cluster
// time (a standalone has no cluster clock, as in MongoDB), and
// $$USER_ROLES, the roles of the connection's user (userRoles).
func (s *Service) exprClock(r *Request) expr.Clock {
	if r.clock.Now.IsZero() {
		r.clock = expr.Clock{Now: time.Now(), UserRoles: s.userRoles(r)}
		if s.ReplSetName != "" {
			t := s.Clock.Now()
			r.clock.ClusterTime = bson.RawValue{Type: bson.TypeTimestamp, Value: bsoncore.AppendTimestamp(r.clusterTime[:0], t.Secs(), t.Inc())}
		}
	}
	return r.clock
}

// userRoles is $$USER_ROLES for r: the roles of the connection's user
// (authedUser.rolesVar); none (the empty array) without one.
func (s *Service) userRoles(r *Request) bson.RawValue {
	u, err := s.privileges(r.Conn)
	if err != nil || u == nil {
		return bson.RawValue{}
	}
	return u.rolesVar
}

// rolesVariable is the value of $$USER_ROLES for a user holding roles,
// as MongoDB's Variables::defineUserRoles marshals the session's
// authenticated role names, the user's roles and those they inherit
// (User::getIndirectRoles): a {_id: "<db>.<role>", role, db} document for
// each.
func rolesVariable(roles []auth.RoleName) bson.RawValue {
	arr := bson.A{}
	for _, rn := range roles {
		arr = append(arr, bson.D{{Key: "_id", Value: rn.DB + "." + rn.Role}, {Key: "role", Value: rn.Role}, {Key: "db", Value: rn.DB}})
	}
	t, v, err := bson.MarshalValue(arr)
	if err != nil {
		panic(err) // an array of documents of strings always marshals
	}
	return bson.RawValue{Type: t, Value: v}
}

// zeroSignature is the $clusterTime signature of a node without
// authentication keys: a 20-byte zero hash and key id 0.
var zeroSignature = [20]byte{}

// clusterTimeFieldsLen is the length of the fields clusterTimeFields
// appends: $clusterTime {clusterTime, signature {hash, keyId}} and
// operationTime.
const clusterTimeFieldsLen = 125

// clusterTimeFields are the $clusterTime and operationTime elements a
// replica set member ends every reply with, errors included; a standalone
// reports neither (nil). operationTime is the time of r's write, or for a
// command that wrote nothing the cluster time when it started.
func (s *Service) clusterTimeFields(r *Request) []byte {
	if s.ReplSetName == "" {
		return nil
	}
	now := s.Clock.Now()
	op := r.writeTime
	if op == 0 {
		op = r.readTime
	}
	if op == 0 {
		op = now
	}
	out := r.timeFields[:0]
	ct, out := bsoncore.AppendDocumentElementStart(out, "$clusterTime")
	out = bsoncore.AppendTimestampElement(out, "clusterTime", now.Secs(), now.Inc())
	sig, out := bsoncore.AppendDocumentElementStart(out, "signature")
	out = bsoncore.AppendBinaryElement(out, "hash", bson.TypeBinaryGeneric, zeroSignature[:])
	out = bsoncore.AppendInt64Element(out, "keyId", 0)
	out, _ = bsoncore.AppendDocumentEnd(out, sig)
	out, _ = bsoncore.AppendDocumentEnd(out, ct)
	return bsoncore.AppendTimestampElement(out, "operationTime", op.Secs(), op.Inc())
}

// batchWrites are the commands whose replies a replica set member stamps
// with electionId and opTime.
var batchWrites = map[string]bool{"insert": true, "update": true, "delete": true}

// term is the replica set term of Folio's one-member set: its elections
// after a step down keep it (MongoDB's add one; drivers compare the
// electionId, which changes).
const term = 1

// withOpTime inserts electionId and opTime {ts, t} after a write reply's
// first field (n), where a replica set member reports them.
func withOpTime(reply bson.Raw, electionID bson.ObjectID, t clock.Time) bson.Raw {
	first, err := reply.IndexErr(0)
	if err != nil {
		return reply
	}
	head := 4 + len(first)
	out := make([]byte, 0, len(reply)+64)
	out = append(out, reply[:head]...)
	out = bsoncore.AppendObjectIDElement(out, "electionId", electionID)
	op, out := bsoncore.AppendDocumentElementStart(out, "opTime")
	out = bsoncore.AppendTimestampElement(out, "ts", t.Secs(), t.Inc())
	out = bsoncore.AppendInt64Element(out, "t", term)
	out, _ = bsoncore.AppendDocumentEnd(out, op)
	out = append(out, reply[head:]...)
	return bsoncore.UpdateLength(out, 0, int32(len(out)))
}
