package commands

import (
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// handler runs one command and returns its reply without the ok field.
type handler func(s *Service, r *Request) (bson.Raw, error)

// handlers maps command names to their handlers; filled by each command
// family's init.
var handlers = map[string]handler{}

func register(h handler, names ...string) {
	for _, n := range names {
		handlers[n] = h
	}
}

// registerAdmin registers commands that MongoDB runs only against the
// admin database.
func registerAdmin(h handler, names ...string) {
	for _, n := range names {
		handlers[n] = func(s *Service, r *Request) (bson.Raw, error) {
			if r.DB != "admin" {
				return nil, mongoerr.New(mongoerr.Unauthorized, "%s may only be run against the admin database.", n)
			}
			return h(s, r)
		}
	}
}

// Name is the command name of cmd: its first field.
func Name(cmd bson.Raw) string {
	el, err := cmd.IndexErr(0)
	if err != nil {
		return ""
	}
	return el.Key()
}

// Run executes r and always returns a reply document: the handler's reply
// with ok: 1, or MongoDB's error reply.
func (s *Service) Run(r *Request) bson.Raw {
	name := Name(r.Cmd)
	h := handlers[name]
	if h == nil {
		if name == "" {
			return s.errorReply(mongoerr.New(mongoerr.FailedToParse, "Empty command object"))
		}
		return s.errorReply(mongoerr.New(mongoerr.CommandNotFound, "no such command: '%s'", name))
	}
	s.Ops.Command.Add(1)
	if err := engine.ValidateDBName(r.DB); err != nil {
		return s.errorReply(err)
	}
	if err := checkReadConcern(r.Cmd); err != nil {
		return s.errorReply(err)
	}
	r.op = s.ops.begin(r, name)
	defer s.ops.end(r.op)
	reply, err := s.runInSession(r, name, h)
	if err != nil {
		return s.errorReply(err)
	}
	return withOK(reply)
}

// errorReply is ErrorReply for a command that failed, counted in
// serverStatus.asserts.
func (s *Service) errorReply(err error) bson.Raw {
	if mongoerr.As(err).Code == mongoerr.InternalError {
		s.Asserts.Regular.Add(1)
	} else {
		s.Asserts.User.Add(1)
	}
	return ErrorReply(err)
}

// withOK appends ok: 1.0 to a reply document.
func withOK(doc bson.Raw) bson.Raw {
	if len(doc) == 0 {
		doc = bson.Raw{5, 0, 0, 0, 0}
	}
	out := make([]byte, 0, len(doc)+12)
	out = append(out, doc[:len(doc)-1]...)
	out = bsoncore.AppendDoubleElement(out, "ok", 1)
	out = append(out, 0)
	return bsoncore.UpdateLength(out, 0, int32(len(out)))
}

// ErrorReply is MongoDB's reply for a failed command: ok: 0, errmsg, code,
// codeName, then any error labels and extra fields.
func ErrorReply(err error) bson.Raw {
	var me *mongoerr.Error
	if !errors.As(err, &me) {
		me = mongoerr.New(mongoerr.InternalError, "%v", err)
	}
	d := bson.D{
		{Key: "ok", Value: 0.0},
		{Key: "errmsg", Value: me.Msg},
		{Key: "code", Value: int32(me.Code)},
		{Key: "codeName", Value: me.Code.Name()},
	}
	if len(me.Labels) > 0 {
		d = append(d, bson.E{Key: "errorLabels", Value: me.Labels})
	}
	d = append(d, me.Extra...)
	return marshal(d)
}

// marshal encodes a reply built as bson.D; replies built by handlers are
// always encodable.
func marshal(d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(err)
	}
	return b
}
