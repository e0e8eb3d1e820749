package commands

import (
	"errors"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/nsname"
	"github.com/folio-db/folio/internal/rawdoc"
)

// handler runs one command and returns its reply without the ok field.
type handler func(s *Service, r *Request) (bson.Raw, error)

// command is a registered command: its handler and the declaration of
// its fields, which r.args holds parsed when the handler runs.
type command struct {
	h    handler
	spec *argSpec
	// name is the name it is registered under, the one Name returns.
	name string
	// names are the command's name and its aliases ("isMaster" and
	// "ismaster"): MongoDB's Command::hasAlias.
	names []string
	admin bool // runs only against the admin database
	// test: a command that exists only with test commands enabled
	// (MongoDB's enableTestCommands).
	test bool
	// collection: the command names a collection of its database in its
	// first field (MongoDB's namespace: concatenate_with_db, or
	// CommandHelpers::parseNsCollectionRequired).
	collection bool
	// uncounted: the command does not count in opcounters.command
	// (MongoDB's shouldAffectCommandCounter false).
	uncounted bool
	// parsesInRun: the command's own fields are parsed when its handler
	// runs, after its session and transaction are checked, as MongoDB's
	// commitTransaction and abortTransaction parse their body in run
	// (parsedInRun).
	parsesInRun bool
}

// handlers maps command names to their commands; filled by each command
// family's init.
var handlers = map[string]command{}

func register(h handler, spec *argSpec, names ...string) {
	if len(spec.fields) > maxArgFields {
		panic("commands: too many fields declared for " + spec.path)
	}
	for _, n := range names {
		handlers[n] = command{h: h, spec: spec, name: n, names: names}
	}
}

// parsedInRun makes the registered command name parse its fields when its
// handler runs (command.parsesInRun).
func parsedInRun(name string) {
	c := handlers[name]
	h, spec := c.h, c.spec
	c.h = func(s *Service, r *Request) (bson.Raw, error) {
		if err := parseOwnArgs(r, spec); err != nil {
			return nil, err
		}
		return h(s, r)
	}
	c.parsesInRun = true
	handlers[name] = c
}

// parseOwnArgs parses r's own fields against spec, strictly when r declares
// apiStrict.
func parseOwnArgs(r *Request, spec *argSpec) (err error) {
	parse := parseCommand
	if r.Args.API.Strict {
		parse = parseStrictCommand
	}
	r.args, err = parse(r.Cmd, spec)
	return err
}

// registerAdmin registers commands that MongoDB runs only against the
// admin database: run refuses them elsewhere before their session or
// transaction is touched.
func registerAdmin(h handler, spec *argSpec, names ...string) {
	for _, n := range names {
		register(h, spec, n)
		c := handlers[n]
		c.admin = true
		handlers[n] = c
	}
}

// registerTest registers admin commands that exist only when the
// service's TestCommands is set, as MongoDB's test commands do.
func registerTest(h handler, spec *argSpec, names ...string) {
	registerAdmin(h, spec, names...)
	testOnly(names...)
}

// testOnly makes registered commands exist only when the service's
// TestCommands is set.
func testOnly(names ...string) {
	for _, n := range names {
		c := handlers[n]
		c.test = true
		handlers[n] = c
	}
}

// uncounted marks registered commands that opcounters.command leaves out:
// find and aggregate count as queries, getMore as a getmore, the write
// commands per statement (MongoDB's shouldAffectCommandCounter).
func uncounted(names ...string) {
	for _, n := range names {
		c := handlers[n]
		c.uncounted = true
		handlers[n] = c
	}
}

// namesCollection marks registered commands as naming a collection in
// their first field: their database is checked with it (checkNamespace).
func namesCollection(names ...string) {
	for _, n := range names {
		c := handlers[n]
		c.collection = true
		handlers[n] = c
	}
}

// checkNamespace applies what MongoDB checks of a command's database once
// the command is parsed (DatabaseName's rules came first, in run): for a
// command naming a collection (as a string), the namespace's
// (NamespaceString's and isValid), for the others the command
// dispatcher's. A '$' in the name is allowed here
// (DollarInDbNameBehavior::Allow), so that $external, where X.509 users
// live, takes commands; creating or writing a collection refuses it
// (engine.ValidateNamespace).
func checkNamespace(r *Request, c command) error {
	if c.collection {
		if coll, ok := rawdoc.StringView(r.args.first()); ok {
			return nsname.CheckSpecified(r.DB, coll) // keeps no part of coll
		}
	}
	return nsname.CheckCommandDatabase(r.DB)
}

// available reports whether the command c exists on s.
func (s *Service) available(c command) bool { return !c.test || s.TestCommands }

// Name is the command name of cmd: its first field. A registered name
// is the registry's string, not a copy (several layers ask it of each
// command).
func Name(cmd bson.Raw) string {
	el, err := cmd.IndexErr(0)
	if err != nil {
		return ""
	}
	if c, ok := handlers[string(bsoncore.Element(el).KeyBytes())]; ok {
		return c.name
	}
	return el.Key()
}

// Run executes r and always returns a reply document: the handler's reply
// with ok: 1, or MongoDB's error reply; a replica set member's replies end
// with $clusterTime and operationTime. run is the one place an operation's
// context (r.Ctx) is made.
func (s *Service) Run(r *Request) bson.Raw {
	start := time.Now()
	name := Name(r.Cmd)
	if r.Conn != nil && r.Conn.exhaust.Load() != notExhaust && !(r.ExhaustAllowed && IsHandshake(name)) {
		// another request ends the connection's exhaust hello
		s.Hello.setExhaust(r.Conn, notExhaust)
	}
	c, known := handlers[name]
	known = known && s.available(c)
	reply, err := s.run(r, name, c, known)
	d := time.Since(start) - r.awaited
	s.countCommand(c, known, err)
	if s.Metrics != nil {
		s.Metrics.Command(metricsName(name, known), outcome(err), d)
	}
	s.observe(r, name, d, reply, err)
	if err != nil {
		me := *mongoerr.As(err) // a copy: errors may be shared values
		me.Labels = replyLabels(r, name, me.Labels, me.Code, mongoerr.OK)
		if s.ReplSetName != "" && mongoerr.NotPrimary(me.Code) {
			// a replica set member's not-primary errors carry the
			// topologyVersion, so that a driver can tell a stale error from
			// news
			me.Extra = append(slices.Clip(me.Extra), bson.E{Key: "topologyVersion", Value: s.topologyVersion()})
		}
		out := s.errorReply(&me)
		if r.waitedForWriteConcern && !refusedBeforeRun(err) {
			out = withWriteConcernError(out, r.Args.WriteConcern)
		}
		return appendFields(out, s.clusterTimeFields(r))
	}
	return withOK(reply, s.clusterTimeFields(r), len(reply) > 0 && &reply[0] == r.ownedReply)
}

// run parses r's generic arguments, admits it and runs its handler: c,
// the command r names (name), when known (registered and available).
func (s *Service) run(r *Request, name string, c command, known bool) (bson.Raw, error) {
	if !known {
		if name == "" {
			return nil, mongoerr.New(mongoerr.FailedToParse, "Empty command object")
		}
		return nil, mongoerr.New(mongoerr.CommandNotFound, "no such command: '%s'", name)
	}
	if !c.uncounted {
		s.Ops.Command.Add(1)
	}
	// DatabaseName's rules, which MongoDB applies as it reads the
	// request
	if err := nsname.CheckDatabaseName(r.DB); err != nil {
		return nil, err
	}
	if err := parseGeneric(r.Cmd, &r.Args, s.ReplSetName != ""); err != nil {
		return nil, err
	}
	var err error
	if err := s.checkAPIDeclared(r.Args.API); err != nil {
		return nil, err
	}
	if err := s.keySession(r); err != nil {
		return nil, err
	}
	if !c.parsesInRun {
		if err := parseOwnArgs(r, c.spec); err != nil {
			return nil, err
		}
	}
	if err := checkNamespace(r, c); err != nil {
		return nil, err
	}
	if a := r.Args.Session; a.inTxn {
		// validateSessionOptions: before the transaction is touched
		if err := checkTxnCommand(r.DB, txnCollection(r, c, name), name, a.startTransaction); err != nil {
			return nil, err
		}
	}
	if c.admin && r.DB != "admin" {
		// before any privilege check, as MongoDB's
		// checkAuthorizationImplPreParse
		return nil, mongoerr.New(mongoerr.Unauthorized, "%s may only be run against the admin database.", name)
	}
	if s.Access.Enabled {
		if err := s.authorize(r, name); err != nil {
			return nil, err
		}
	}
	if err := s.admit(r, name); err != nil {
		return nil, err
	}
	if !r.Args.Deadline.IsZero() && s.neverExpire() {
		r.Args.Deadline = time.Time{}
	}
	op, err := s.ops.begin(r, name)
	if err != nil {
		return nil, err
	}
	r.op = op
	defer s.ops.end(op)
	// registered before the member's role is read: a step down either
	// finds the operation or is found
	if err := s.checkMember(r, name); err != nil {
		return nil, err
	}
	if err := s.bypassWriteBlock(r, name); err != nil {
		return nil, err
	}
	if err := noteClient(r, name); err != nil {
		return nil, err
	}
	if err := s.applyFailCommand(r, c.names); err != nil {
		return nil, err
	}
	if !op.deadline.IsZero() {
		if err := s.expireAtOnce(); err != nil {
			return nil, err
		}
	}
	if s.fsync.held.Load() && commits(r, name) {
		op.awaitingFsync.Store(true)
		err := s.fsync.wait(r.Ctx)
		op.awaitingFsync.Store(false)
		if err != nil {
			return nil, err
		}
	}
	reply, err := s.runInSession(r, name, c.h)
	if op.owesDurable {
		// the durability its writes deferred (deferDurable), owed whether
		// or not a statement failed, as MongoDB waits for the write
		// concern of a command that wrote before it failed
		if derr := s.Engine.Durable(r.Args.WriteConcern.Journal()); err == nil {
			err = derr
		}
	}
	if s.Access.Enabled && writesAuthCollections(r, name) {
		// users or roles may have changed under the connections' feet
		s.Access.changed()
	}
	if commits(r, name) {
		r.writeTime = s.writeTime(op, name)
	}
	r.waitedForWriteConcern = s.ReplSetName != "" && waitsForWriteConcern(r, name)
	if err != nil {
		return nil, err
	}
	wc := r.Args.WriteConcern
	if wc.Unacknowledged() && batchWrites[name] {
		// w: 0: the client asked for no answer (a driver sends it with
		// moreToCome and reads none). One that still reads it gets, from
		// insert, update and delete, only their reply's fields with
		// defaults (MongoDB's shouldSkipOutput); any other command answers
		// in full.
		return unacknowledgedReply(name), nil
	}
	if s.ReplSetName != "" && batchWrites[name] && !r.Args.Session.inTxn {
		reply = withOpTime(reply, s.state().electionID, r.writeTime)
	}
	if r.waitedForWriteConcern {
		reply = withWriteConcernError(reply, wc)
	}
	if r.failWCE != nil {
		reply = withFailedWriteConcern(r, name, reply)
	}
	return reply, nil
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

// admit applies the generic arguments that decide whether a command may
// run: the Stable API, the client's cluster time (gossiped in before
// afterClusterTime is checked against the clock), the write concern.
func (s *Service) admit(r *Request, name string) error {
	if err := checkAPI(r, name); err != nil {
		return err
	}
	if r.Args.ClusterTime != 0 && s.ReplSetName != "" {
		s.Clock.Advance(r.Args.ClusterTime)
	}
	r.readTime = s.Clock.Now()
	if err := s.checkWriteConcern(r, name); err != nil {
		return err
	}
	if err := s.applyDefaultWriteConcern(r, name); err != nil {
		return err
	}
	if err := s.checkReadConcern(r, name); err != nil {
		return err
	}
	return s.checkAfterClusterTime(r.Args.ReadConcern)
}

// withOK appends ok: 1.0 and then trailer (encoded elements) to a reply
// document: in place when the reply is owned (built for this request
// alone, see Request.own) and has room, else in one copy.
func withOK(doc bson.Raw, trailer []byte, owned bool) bson.Raw {
	if len(doc) == 0 {
		doc = bson.Raw{5, 0, 0, 0, 0}
	}
	size := len(doc) + 12 + len(trailer)
	var out []byte
	if owned && cap(doc) >= size {
		out = doc[:len(doc)-1]
	} else {
		out = append(make([]byte, 0, size), doc[:len(doc)-1]...)
	}
	out = bsoncore.AppendDoubleElement(out, "ok", 1)
	out = append(out, trailer...)
	out = append(out, 0)
	return bsoncore.UpdateLength(out, 0, int32(len(out)))
}

// appendFields appends encoded elements to a document; an empty doc (a
// handler's nil reply) is an empty document.
func appendFields(doc bson.Raw, fields []byte) bson.Raw {
	if len(fields) == 0 {
		return doc
	}
	if len(doc) == 0 {
		doc = bson.Raw{5, 0, 0, 0, 0}
	}
	out := make([]byte, 0, len(doc)+len(fields))
	out = append(out, doc[:len(doc)-1]...)
	out = append(out, fields...)
	out = append(out, 0)
	return bsoncore.UpdateLength(out, 0, int32(len(out)))
}

// ParseErrorReply is the reply to a request that failed to parse (a
// malformed OP_MSG or OP_QUERY read whole): err's reply, then on a replica
// set member $clusterTime and operationTime, as MongoDB's receivedCommands
// appends them to it (appendClusterAndOperationTime).
func (s *Service) ParseErrorReply(err error) bson.Raw {
	return appendFields(ErrorReply(err), s.clusterTimeFields(&Request{}))
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

// metricsName is the command's name as metrics label it: a known
// command's name, else "unknown" (so that garbage cannot grow the label
// set).
func metricsName(name string, known bool) string {
	if !known {
		return "unknown"
	}
	return name
}

// outcome is "ok", or the name of the code err fails with.
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return mongoerr.As(err).Code.Name()
}
