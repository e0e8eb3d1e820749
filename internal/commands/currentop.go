package commands

import (
	"github.com/folio-db/folio/internal/auth"

	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/cursors"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/sessions"
	"github.com/folio-db/folio/internal/values"
)

func init() {
	registerAdmin(currentOpCmd, currentOpSpec, "currentOp")
}

// activeOp is a command in progress, as currentOp lists it.
type activeOp struct {
	id   int64
	conn *Conn
	ns   string
	name string
	cmd  bson.Raw
	// writes is set for an aggregate writing its output ($out, $merge).
	writes bool
	// notInTop is set, by the operation's goroutine, for an operation
	// top does not count (a failed create).
	notInTop bool
	// interruptedByStepDown is set for a write or a transaction's
	// statement, which a step down interrupts (MongoDB's operations
	// that conflict with the state transition).
	interruptedByStepDown bool
	lsid                  string // the session's id, empty for none
	start                 time.Time
	// ctx is the operation's context; kill ends it with the error the
	// operation then fails with. deadline is its maxTimeMS's (zero:
	// none), where the registry's sweep kills it; written under the
	// registry's lock once the operation is registered.
	ctx      context.Context
	kill     context.CancelCauseFunc
	deadline time.Time

	// stats count the work of the operation's scans, which run under
	// ctx; out is what it returned or wrote. Only the operation's
	// goroutine touches them.
	stats engine.OpStats
	out   opOutcome
	// owesDurable is set by a write outside a transaction that left its
	// wait for durability to the command (deferDurable): run waits once
	// the command is done. Only the operation's goroutine touches it.
	owesDurable bool
	// awaitingFsync is set while the operation waits for the fsync lock.
	awaitingFsync atomic.Bool

	mu          sync.Mutex
	msg         string
	done, total int64
	// cursor is the cursor a getMore reads (setCursor), nil for none.
	cursor bson.D
	// live shows the plan the operation runs (its planSummary) while it
	// runs: its first scan's, or its cursor's.
	live engine.LivePlan
}

// setCursor records the cursor a getMore reads, which currentOp reports
// under "cursor" as MongoDB's CurOp reports its generic cursor.
func (op *activeOp) setCursor(c cursors.IdleCursor) {
	if op == nil {
		return
	}
	d := cursorReport(c)
	if bs, ok := c.Source.(*boundSource); ok && bs.opener != nil {
		bs.opener.stats.PublishTo(&op.live)
	}
	op.mu.Lock()
	op.cursor = append(d, bson.E{Key: "operationUsingCursorId", Value: op.id})
	op.mu.Unlock()
}

// cursorReport is the "cursor" document currentOp shows of an open cursor,
// idle or read by a getMore (GenericCursor, in its IDL's field order): with
// the command that opened it (originatingCommand).
func cursorReport(c cursors.IdleCursor) bson.D {
	d := bson.D{
		{Key: "cursorId", Value: c.ID},
		{Key: "createdDate", Value: bson.NewDateTimeFromTime(c.Created)},
		{Key: "lastAccessDate", Value: bson.NewDateTimeFromTime(c.LastUsed)},
		{Key: "nDocsReturned", Value: c.Returned},
		{Key: "nBatchesReturned", Value: c.Batches},
		{Key: "noCursorTimeout", Value: c.NoTimeout},
		{Key: "tailable", Value: c.Tailable},
		{Key: "awaitData", Value: c.AwaitData},
	}
	if bs, ok := c.Source.(*boundSource); ok && bs.opener != nil && bs.opener.cmd != nil {
		d = append(d, bson.E{Key: "originatingCommand", Value: bs.opener.cmd})
	}
	return d
}

// setProgress records a long operation's progress (an index build).
func (op *activeOp) setProgress(msg string, done, total int64) {
	if op == nil {
		return
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	op.msg, op.done, op.total = msg, done, total
}

// opRegistry holds the commands running now, the context every operation
// descends from, which shutdown ends, and, for top, the time spent on each
// collection by the commands that ended.
type opRegistry struct {
	mu   sync.Mutex
	next int64
	ops  map[int64]*activeOp
	// root is the parent of every connection's and operation's context;
	// interrupt ends it with InterruptedAtShutdown. draining refuses new
	// operations.
	root      context.Context
	interrupt context.CancelCauseFunc
	draining  bool
	top       map[string]*nsUsage
	// lastDropped is the namespace whose top figures went last, until
	// the next operation on it ends (record).
	lastDropped string
	// nextSweep is when the sweep of expired operations runs next (zero:
	// when signalled), sweepWake its signal (see maxtime.go).
	nextSweep time.Time
	sweepWake chan struct{}
}

// rootContext returns the registry's root context, made on first use.
// The caller holds mu.
func (o *opRegistry) rootContext() context.Context {
	if o.root == nil {
		o.root, o.interrupt = context.WithCancelCause(context.Background())
		o.ops = map[int64]*activeOp{}
	}
	return o.root
}

// begin registers the command r runs and makes its operation context,
// r.Ctx: a child of the connection's context (ended when the client
// disconnects) or of the root, bounded by the command's maxTimeMS. getMore
// reads its maxTimeMS itself: it bounds an awaitData cursor's wait, not
// the operation.
func (o *opRegistry) begin(r *Request, name string) (*activeOp, error) {
	rule := secondaryRule(r, name) // an aggregate is never run there when it writes
	op := &activeOp{conn: r.Conn, name: name, lsid: r.Args.Session.lsid, start: time.Now(),
		writes:                name == "aggregate" && rule == never,
		interruptedByStepDown: rule == never || r.Args.Session.inTxn}
	if name != "getMore" {
		// A getMore's maxTimeMS is how long an awaitData cursor waits;
		// the cursor's own time limit bounds its reads.
		op.deadline = r.Args.Deadline
	}
	op.ns, op.cmd = opNamespace(r.DB, r.Cmd, name), redactCommand(r.Cmd)
	var parent context.Context
	if r.Conn != nil && r.Conn.Ctx != nil {
		parent = r.Conn.Ctx
	} else {
		o.mu.Lock()
		parent = o.rootContext()
		o.mu.Unlock()
	}
	op.ctx, op.kill = context.WithCancelCause(parent)
	o.mu.Lock()
	o.rootContext()
	if o.draining {
		o.mu.Unlock()
		op.kill(nil)
		return nil, mongoerr.New(mongoerr.ShutdownInProgress, "The server is shutting down")
	}
	o.next++
	op.id = o.next
	o.ops[op.id] = op
	if !op.deadline.IsZero() {
		o.watchDeadline(op)
	}
	o.mu.Unlock()
	if !op.deadline.IsZero() && !op.deadline.After(op.start) {
		op.kill(errMaxTimeMS) // already past: it ends at once
	}
	op.bind(r)
	return op, nil
}

// opNamespace is the namespace of the operation cmd runs, which currentOp
// shows and top and latencyStats file it under (MongoDB's
// CommandInvocation::ns): the collection its first field names, a
// getMore's collection, the full namespace of a command whose IDL
// declares namespace: type (dataSize, renameCollection's source,
// shardCollection), the explained command's for explain (CmdExplain's ns
// is its inner invocation's), and otherwise the database.
func opNamespace(db string, cmd bson.Raw, name string) string {
	first := rawdoc.Lookup(cmd, name)
	switch name {
	case "getMore":
		first = rawdoc.Lookup(cmd, "collection")
	case "dataSize", "datasize", "renameCollection", "shardCollection", "shardcollection":
		if full, ok := rawdoc.StringView(first); ok {
			return strings.Clone(full)
		}
		return db
	case "explain":
		if inner, ok := first.DocumentOK(); ok {
			return opNamespace(db, inner, rawdoc.FirstKey(inner))
		}
		return db
	}
	if coll, ok := rawdoc.StringView(first); ok {
		return db + "." + coll
	}
	return db
}

// bind makes r.Ctx the operation's context as its command sees it: ended
// with op.ctx, reporting op's deadline, counting its scans' work into
// op.stats, reading r's view, planned under r's apiStrict.
func (op *activeOp) bind(r *Request) {
	ctx := op.ctx
	if !op.deadline.IsZero() {
		ctx = deadlineCtx{ctx, op.deadline}
	}
	op.stats.Publish(&op.live)
	r.Ctx = engine.WithOpStats(ctx, &op.stats)
	if r.view != nil {
		r.Ctx = engine.WithReadView(r.Ctx, r.view)
	}
	if r.Args.API.Strict {
		r.Ctx = engine.WithAPIStrict(r.Ctx)
	}
}

// maxReportedCommand is the size past which currentOp abbreviates a
// command (CurOp's maxQuerySize).
const maxReportedCommand = 1000

// reportedCommand is cmd as currentOp shows it: whole, or when truncate
// is set, abbreviated past maxReportedCommand bytes (abbreviatedCommand).
func reportedCommand(cmd bson.Raw, truncate bool) any {
	if !truncate {
		return cmd
	}
	return abbreviatedCommand(cmd, maxReportedCommand)
}

// abbreviatedCommand is cmd, or when it is larger than limit bytes, cmd as
// MongoDB's appendAsObjOrString abbreviates it for currentOp and the
// profiler: {$truncated: <its text cut to limit bytes, ending in "...">,
// comment: <its comment, when it has one>}.
func abbreviatedCommand(cmd bson.Raw, limit int) any {
	if len(cmd) <= limit {
		return cmd
	}
	text := values.ShellDoc(cmd)
	if len(text) > limit {
		text = text[:limit-3] + "..."
	}
	d := bson.D{{Key: "$truncated", Value: strings.ToValidUTF8(text, "\uFFFD")}}
	if c, err := cmd.LookupErr("comment"); err == nil {
		d = append(d, bson.E{Key: "comment", Value: c})
	}
	return d
}

// errMaxTimeMS is the error of an operation past its maxTimeMS.
var errMaxTimeMS = mongoerr.New(mongoerr.MaxTimeMSExpired, "operation exceeded time limit")

func (o *opRegistry) end(op *activeOp) {
	elapsed := time.Since(op.start)
	o.mu.Lock()
	delete(o.ops, op.id)
	o.record(op, elapsed)
	o.mu.Unlock()
	op.kill(nil)
}

// killWhere ends, with err, the context of every running operation for
// which match holds, and returns how many it ended.
func (o *opRegistry) killWhere(match func(*activeOp) bool, err error) int {
	n := 0
	for _, op := range o.list() {
		if match(op) {
			op.kill(err)
			n++
		}
	}
	return n

}

func (o *opRegistry) list() []*activeOp {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]*activeOp, 0, len(o.ops))
	for _, op := range o.ops {
		out = append(out, op)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// opKinds are the op names currentOp reports for CRUD commands.
var opKinds = map[string]string{
	"find": "query", "insert": "insert", "update": "update", "delete": "remove", "getMore": "getmore",
}

// describe is op as currentOp reports it at now, in the order of MongoDB's
// reportCurrentOpForClient and CurOp::reportState: the client's fields,
// then the operation's; truncate abbreviates a command larger than
// maxReportedCommand.
func (op *activeOp) describe(host string, truncate bool, now time.Time) bson.D {
	kind := opKinds[op.name]
	if kind == "" {
		kind = "command"
	}
	running := now.Sub(op.start)
	d := bson.D{{Key: "type", Value: "op"}, {Key: "host", Value: host}}
	d = clientReport(d, op.conn, true, now)
	d = append(d, bson.E{Key: "opid", Value: op.id})
	if op.ctx.Err() != nil {
		// killed (killOp, killSessions, a disconnect, shutdown) or past
		// its maxTimeMS, and not yet returned
		d = append(d, bson.E{Key: "killPending", Value: true})
	}
	if op.lsid != "" {
		// the session it runs in, as an idle cursor's
		d = append(d, bson.E{Key: "lsid", Value: sessions.LSID(op.lsid)})
	}
	d = append(d,
		bson.E{Key: "secs_running", Value: int64(running.Seconds())},
		bson.E{Key: "microsecs_running", Value: running.Microseconds()},
		bson.E{Key: "op", Value: kind},
		bson.E{Key: "ns", Value: op.ns},
		bson.E{Key: "command", Value: reportedCommand(op.cmd, truncate)},
	)
	if ps := op.live.Summary(); ps != "" {
		// the plan it runs (a getMore: its cursor's)
		d = append(d, bson.E{Key: "planSummary", Value: ps})
	}
	op.mu.Lock()
	if op.cursor != nil {
		d = append(d, bson.E{Key: "cursor", Value: op.cursor})
	}
	if op.msg != "" {
		d = append(d,
			bson.E{Key: "msg", Value: op.msg},
			bson.E{Key: "progress", Value: bson.D{{Key: "done", Value: op.done}, {Key: "total", Value: op.total}}},
		)
	}
	op.mu.Unlock()
	// locks names the locks the operation holds or awaits by resource type,
	// in MongoDB's legacy mode names (fillLockerInfo): of Folio's, only the
	// fsync lock, which a write awaits in IX mode ("w") on the Global
	// resource, as lockInfo lists it.
	waiting := op.awaitingFsync.Load()
	locks := bson.D{}
	if waiting {
		locks = bson.D{{Key: "Global", Value: "w"}}
	}
	return append(d, bson.E{Key: "locks", Value: locks}, bson.E{Key: "waitingForLock", Value: waiting})
}

// currentOpTimeLayout is how currentOp writes its time (MongoDB's
// Date_t::toString: ISO 8601 in the server's local time).
const currentOpTimeLayout = "2006-01-02T15:04:05.000-0700"

// clientReport appends to d what currentOp reports of the connection c
// (nil for an internal operation) running an operation or, active false,
// none: its description, id and address, the application name and client
// metadata of its handshake, whether it is active, the time of the
// report, and its authenticated user (MongoDB's Client::reportState and
// reportCurrentOpForClient).
func clientReport(d bson.D, c *Conn, active bool, now time.Time) bson.D {
	if c != nil {
		d = append(d,
			bson.E{Key: "desc", Value: "conn" + strconv.FormatInt(c.ID, 10)},
			bson.E{Key: "connectionId", Value: c.ID},
			bson.E{Key: "client", Value: c.Remote},
		)
		if m := c.metadata.Load(); m != nil {
			if m.appName != "" {
				d = append(d, bson.E{Key: "appName", Value: m.appName})
			}
			d = append(d, bson.E{Key: "clientMetadata", Value: m.doc})
		}
	}
	d = append(d,
		bson.E{Key: "active", Value: active},
		bson.E{Key: "currentOpTime", Value: now.Local().Format(currentOpTimeLayout)},
	)
	if u, ok := c.userName(); ok {
		d = append(d, bson.E{Key: "effectiveUsers", Value: bson.A{u.Doc()}})
	}
	return d
}

// idleSessionReport is an open transaction no command runs in as
// currentOp reports it (TransactionParticipant::reportStashedState): the
// client of its last command, its lsid, and its statistics as
// SingleTransactionStats::report writes them (parameters with the read
// concern it began with when one was given, its read timestamp, its start and expiry in
// local time, how long it has been open, active and inactive).
func idleSessionReport(host string, t sessions.IdleTxn) bson.D {
	d := bson.D{{Key: "type", Value: "idleSession"}, {Key: "host", Value: host}, {Key: "desc", Value: "inactive transaction"}}
	if c, ok := t.Client.(*Conn); ok {
		d = append(d,
			bson.E{Key: "client", Value: c.Remote},
			bson.E{Key: "connectionId", Value: c.ID},
		)
		if m := c.metadata.Load(); m != nil {
			d = append(d, bson.E{Key: "appName", Value: m.appName}, bson.E{Key: "clientMetadata", Value: m.doc})
		}
	}
	params := bson.D{{Key: "txnNumber", Value: t.TxnNumber}, {Key: "autocommit", Value: false}}
	if t.ReadConcern != "" {
		params = append(params, bson.E{Key: "readConcern", Value: bson.D{{Key: "level", Value: t.ReadConcern}}})
	}
	return append(d,
		bson.E{Key: "lsid", Value: sessions.LSID(t.ID)},
		bson.E{Key: "transaction", Value: bson.D{
			{Key: "parameters", Value: params},
			{Key: "readTimestamp", Value: t.ReadTime.Timestamp()},
			{Key: "startWallClockTime", Value: t.Start.Local().Format(currentOpTimeLayout)},
			{Key: "timeOpenMicros", Value: t.Open.Microseconds()},
			{Key: "timeActiveMicros", Value: t.Active.Microseconds()},
			{Key: "timeInactiveMicros", Value: t.Open.Microseconds() - t.Active.Microseconds()},
			{Key: "expiryTime", Value: t.Expiry.Local().Format(currentOpTimeLayout)},
		}},
		bson.E{Key: "waitingForLock", Value: false},
		bson.E{Key: "active", Value: false},
	)
}

// currentOpOptions are what a currentOp lists besides the running
// operations: connections running none (idleConnections), open
// transactions no command runs in (idleSessions), cursors between
// getMores (idleCursors); with ownOps, only user's operations,
// connections and cursors.
type currentOpOptions struct {
	idleConnections, idleSessions, idleCursors bool
	// truncateOps abbreviates large commands (reportedCommand): the
	// command's default, the stage's option.
	truncateOps bool
	// ownOps keeps only what belongs to user: the command's $ownOps, the
	// stage's allUsers: false. As in MongoDB, it applies only under access
	// control (without it, every operation is shown).
	ownOps bool
	user   auth.UserName
}

// exclusive restricts o to the operations of r's user when access control
// is on; ownOps asks for it.
func (s *Service) exclusive(o *currentOpOptions, r *Request, ownOps bool) {
	o.ownOps = ownOps && s.Access.Enabled
	if o.ownOps {
		o.user, _ = r.Conn.userName()
	}
}

// mine reports whether what c runs (or ran) is o's user's to see.
func (o currentOpOptions) mine(c *Conn) bool {
	if !o.ownOps {
		return true
	}
	them, ok := c.userName()
	return ok && them == o.user
}

// currentOps describes the operations o asks for: the running ones, then
// the idle connections, sessions and cursors.
func (s *Service) currentOps(o currentOpOptions) []bson.D {
	ops := s.ops.list()
	out := make([]bson.D, 0, len(ops))
	busy := map[int64]bool{}
	now := time.Now()
	host := aggregate.HostNameAndPort(s.port())
	for _, op := range ops {
		if !o.mine(op.conn) {
			continue
		}
		out = append(out, op.describe(host, o.truncateOps, now))
		if op.conn != nil {
			busy[op.conn.ID] = true
		}
	}
	if o.idleConnections {
		for _, c := range s.conns.list() {
			if !busy[c.ID] && o.mine(c) {
				out = append(out, clientReport(bson.D{{Key: "type", Value: "op"}, {Key: "host", Value: host}}, c, false, now))
			}
		}
	}
	if o.idleSessions && s.Sessions != nil {
		for _, t := range s.Sessions.IdleTransactions(now) {
			out = append(out, idleSessionReport(host, t))
		}
	}
	if o.idleCursors {
		for _, c := range s.Cursors.Idle() {
			if o.ownOps && c.User != o.user.String() {
				continue
			}
			d := bson.D{{Key: "type", Value: "idleCursor"}, {Key: "host", Value: host}, {Key: "ns", Value: c.DB + "." + c.Coll}}
			if c.Session != "" {
				d = append(d, bson.E{Key: "lsid", Value: sessions.LSID(c.Session)})
			}
			// the plan of the command that opened the cursor, at the top
			// level as MongoDB's getCurrentOps moves it there
			if bs, ok := c.Source.(*boundSource); ok && bs.opener != nil {
				if ps := bs.opener.stats.PlanSummary(); ps != "" {
					d = append(d, bson.E{Key: "planSummary", Value: ps})
				}
			}
			out = append(out, append(d, bson.E{Key: "cursor", Value: cursorReport(c)}))
		}
	}
	return out
}

// parseCurrentOpStage reads the options of a $currentOp stage: booleans,
// idleSessions on by default; allUsers (false by default) says whether
// others' operations are shown too, under access control. localOps changes
// nothing on one node; truncateOps abbreviates large commands; Folio takes
// no backtraces, so it refuses to be asked to.
// https://www.mongodb.com/docs/v7.0/reference/operator/aggregation/currentOp/
func (s *Service) parseCurrentOpStage(r *Request, spec bson.Raw) (currentOpOptions, error) {
	o := currentOpOptions{idleSessions: true}
	allUsers := false
	elems, err := spec.Elements()
	if err != nil {
		return o, mongoerr.New(mongoerr.InvalidBSON, "invalid $currentOp options: %v", err)
	}
	for _, el := range elems {
		v := el.Value()
		opt := map[string]*bool{"idleConnections": &o.idleConnections, "idleSessions": &o.idleSessions, "idleCursors": &o.idleCursors,
			"allUsers": &allUsers, "localOps": new(bool), "truncateOps": &o.truncateOps, "backtrace": new(bool)}[el.Key()]
		if opt == nil {
			return o, mongoerr.New(mongoerr.FailedToParse, "Unrecognized option '%s' in $currentOp stage.", el.Key())
		}
		if v.Type != bson.TypeBoolean {
			return o, mongoerr.New(mongoerr.FailedToParse, "The '%s' parameter of the $currentOp stage must be a boolean value, but found: %s", el.Key(), values.TypeName(v.Type))
		}
		*opt = v.Boolean()
		if *opt && el.Key() == "backtrace" {
			return o, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the $currentOp option '%s'", el.Key())
		}
	}
	s.exclusive(&o, r, !allUsers)
	return o, nil
}

// currentOpStage turns a leading {$currentOp: {...}} stage of an aggregate
// on coll (empty for {aggregate: 1}) into the $documents stage of the
// operations it asks for, which the rest of the pipeline then filters and
// shapes, as mongosh's db.currentOp() does. MongoDB checks the spec in two
// passes: its lite parse refuses a spec that is not a document and a
// non-boolean allUsers or localOps (TypeMismatch), then the stage's parse
// refuses any namespace but admin's {aggregate: 1} (InvalidNamespace) before
// reading the options (DocumentSourceCurrentOp::LiteParsed::parse and
// createFromBson).
func (s *Service) currentOpStage(r *Request, coll string, stage bson.Raw) (bson.Raw, error) {
	v := stage.Lookup("$currentOp")
	spec, ok := v.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "$currentOp options must be specified in an object, but found: %s", values.TypeName(v.Type))
	}
	for _, key := range []string{"allUsers", "localOps"} {
		if o := spec.Lookup(key); o.Type != 0 && o.Type != bson.TypeBoolean {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "The '%s' parameter of the $currentOp stage must be a boolean value, but found: %s", key, values.TypeName(o.Type))
		}
	}
	if r.DB != "admin" || coll != "" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
	}
	o, err := s.parseCurrentOpStage(r, spec)
	if err != nil {
		return nil, err
	}
	ops := bson.A{}
	for _, d := range s.currentOps(o) {
		ops = append(ops, d)
	}
	return marshal(bson.D{{Key: "$documents", Value: bson.D{{Key: "$literal", Value: ops}}}}), nil
}

// currentOpExplained is the spec of a valid $currentOp stage as MongoDB's
// DocumentSourceCurrentOp::serialize writes it: only the options that
// differ from their defaults (idleSessions false, the others true), in
// its order.
func currentOpExplained(stage bson.Raw) bson.D {
	spec := stage.Lookup("$currentOp").Document()
	out := bson.D{}
	for _, o := range []struct {
		name string
		def  bool
	}{{"idleConnections", false}, {"idleSessions", true}, {"allUsers", false}, {"localOps", false},
		{"truncateOps", false}, {"idleCursors", false}, {"backtrace", false}} {
		if v, ok := spec.Lookup(o.name).BooleanOK(); ok && v != o.def {
			out = append(out, bson.E{Key: o.name, Value: v})
		}
	}
	return out
}

// currentOpSpec declares currentOp's own fields; every other field
// filters the operations, as a query on their descriptions (idleConnections
// and idleSessions included, as in MongoDB's command).
// https://www.mongodb.com/docs/v7.0/reference/command/currentOp/
var currentOpSpec = &argSpec{path: "currentOp", open: "a query on the operations' descriptions", fields: []argField{
	arg("$all", tBool),
	arg("$ownOps", tBool),
	ignore("$truncateOps", tBool, "an internal field of MongoDB's command; the command always truncates"),
}}

// currentOpCmd lists the operations in progress, with an index build's
// progress, filtered by the command's other fields. As MongoDB runs it (a
// $currentOp stage), $all adds the idle connections, and the open
// transactions no command runs in are listed too.
func currentOpCmd(s *Service, r *Request) (bson.Raw, error) {
	filter := bson.D{}
	_ = r.args.eachExtra(func(key string, v bson.RawValue) error {
		filter = append(filter, bson.E{Key: key, Value: v})
		return nil
	})
	f, err := query.Compile(marshal(filter))
	if err != nil {
		return nil, err
	}
	o := currentOpOptions{idleSessions: true, idleConnections: r.args.bool("$all"), truncateOps: true}
	s.exclusive(&o, r, r.args.bool("$ownOps"))
	inprog := bson.A{}
	for _, d := range s.currentOps(o) {
		if f.Match(marshal(d)) {
			inprog = append(inprog, d)
		}
	}
	reply := bson.D{{Key: "inprog", Value: inprog}}
	if s.fsync.held.Load() {
		// with MongoDB's hint on how to release it (CurrentOpCommand's
		// appendToResponse)
		reply = append(reply, bson.E{Key: "fsyncLock", Value: true},
			bson.E{Key: "info", Value: "use db.fsyncUnlock() to terminate the fsync write/snapshot lock"})
	}
	return marshal(reply), nil
}
