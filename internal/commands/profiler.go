package commands

import (
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// The profiler and the slow-operation log (settings in profile.go). Both
// describe an operation with the same record: what it was (op, ns,
// command), the work of its scans (keysExamined, docsExamined,
// planSummary, and the first query's queryHash and planCacheKey), what it
// returned or wrote, how long it took and for whom.
// The profiler stores it in the database's system.profile in MongoDB's
// entry shape (locks, numYield and execStats elided); the log writes it as
// MongoDB's "Slow query" line.

// opOutcome is what an operation returned or wrote, as its handler
// reports it for the profiler and the slow log.
type opOutcome struct {
	// cursor is set for a command answering with a cursor: nreturned
	// documents in its batch, cursorID left open (0: exhausted).
	cursor    bool
	nreturned int64
	cursorID  int64
	// origin is a getMore's cursor's opening command.
	origin bson.Raw
	// getMore is the cursor a getMore asked for, which its entry names
	// even when the getMore exhausted it or failed, as MongoDB's
	// getmore_cmd.cpp records the request's cursorid in OpDebug first.
	getMore int64
	// writes, when set, are a write's counts (insert, or an update or
	// delete statement).
	writes *writeCounts
}

// writeCounts are the counts of a write's profile entry.
type writeCounts struct {
	kind                    string // insert, update or remove
	n, nModified, nUpserted int64
	// failed marks an update or delete statement that failed, whose entry
	// shows no counts: MongoDB records them in OpDebug only once the
	// statement's executor has finished (write_ops_exec.cpp,
	// performSingleUpdateOp and performSingleDeleteOp).
	failed bool
}

// noteCursor records a cursor reply: n documents, the cursor left open
// (id 0: none).
func (op *activeOp) noteCursor(n int, id int64) {
	if op != nil {
		op.out.cursor, op.out.nreturned, op.out.cursorID = true, op.out.nreturned+int64(n), id
	}
}

// noteGetMore records the cursor a getMore asked for.
func (op *activeOp) noteGetMore(id int64) {
	if op != nil {
		op.out.getMore = id
	}
}

// noteInserted records an insert's count.
func (op *activeOp) noteInserted(n int) {
	if op != nil {
		op.out.writes = &writeCounts{kind: "insert", n: int64(n)}
	}
}

// noteFindAndModify records a findAndModify's counts, as MongoDB's
// profiler shows them: ndeleted of a remove, else nMatched, nModified and
// nUpserted (find_and_modify.cpp, recordUpdateResultInOpDebug).
func (op *activeOp) noteFindAndModify(remove bool, res engine.FindAndModifyResult) {
	if op == nil {
		return
	}
	w := &writeCounts{kind: "update", n: res.N}
	switch {
	case remove:
		w.kind = "remove"
	case res.UpsertedID.Type != 0:
		w.n, w.nUpserted = 0, 1
	case res.Modified:
		w.nModified = 1
	}
	op.out.writes = w
}

// opRecord is one operation as the profiler and the slow log describe it.
type opRecord struct {
	op     string // query, getmore, insert, update, remove or command
	ns     string
	cmd    bson.Raw
	stats  engine.OpStats
	out    opOutcome
	err    error
	reslen int // the reply's size; -1 for a statement of a command
	d      time.Duration
	conn   *Conn
}

// scanned reports whether the record shows keys and documents examined:
// for CRUD operations, and commands that scanned.
func (rec *opRecord) scanned() bool {
	return rec.op != "command" && rec.op != "insert" || rec.stats.KeysExamined+rec.stats.DocsExamined > 0 || rec.stats.PlanSummary() != ""
}

// maxProfiledCommand is the size beyond which a profile entry shows a
// command abbreviated (abbreviatedCommand), as MongoDB's OpDebug::append
// does.
const maxProfiledCommand = 50 << 10

// entry is rec as a system.profile document, ending as MongoDB's
// introspect.cpp profile() ends it: ts, client, appName (when the client's
// handshake named its application), allUsers, user.
func (rec *opRecord) entry(now time.Time) bson.Raw {
	d := bson.D{{Key: "op", Value: rec.op}, {Key: "ns", Value: rec.ns}, {Key: "command", Value: abbreviatedCommand(rec.cmd, maxProfiledCommand)}}
	if rec.out.origin != nil {
		d = append(d, bson.E{Key: "originatingCommand", Value: abbreviatedCommand(rec.out.origin, maxProfiledCommand)})
	}
	switch {
	case rec.out.getMore != 0:
		d = append(d, bson.E{Key: "cursorid", Value: rec.out.getMore})
	case rec.out.cursor && rec.out.cursorID != 0:
		d = append(d, bson.E{Key: "cursorid", Value: rec.out.cursorID})
	}
	if rec.scanned() {
		d = append(d, bson.E{Key: "keysExamined", Value: rec.stats.KeysExamined}, bson.E{Key: "docsExamined", Value: rec.stats.DocsExamined})
	}
	d = append(d, rec.planFields()...)
	d = append(d, rec.writeFields()...)
	if rec.out.cursor {
		if rec.out.cursorID == 0 {
			d = append(d, bson.E{Key: "cursorExhausted", Value: true})
		}
		d = append(d, bson.E{Key: "nreturned", Value: rec.out.nreturned})
	}
	d = append(d, rec.hashFields()...)
	d = append(d, rec.errorFields()...)
	if rec.reslen >= 0 {
		d = append(d, bson.E{Key: "responseLength", Value: int64(rec.reslen)}, bson.E{Key: "protocol", Value: "op_msg"})
	}
	d = append(d, bson.E{Key: "millis", Value: rec.d.Milliseconds()})
	if ps := rec.stats.PlanSummary(); ps != "" {
		d = append(d, bson.E{Key: "planSummary", Value: ps})
	}
	d = append(d, bson.E{Key: "ts", Value: bson.NewDateTimeFromTime(now)})
	client, app, users, user := "", "", bson.A{}, ""
	if rec.conn != nil {
		client = rec.conn.Remote
		if host, _, err := net.SplitHostPort(client); err == nil {
			client = host
		}
		app = rec.conn.AppName
		if u, ok := rec.conn.userName(); ok {
			users, user = bson.A{u.Doc()}, u.String()
		}
	}
	d = append(d, bson.E{Key: "client", Value: client})
	if app != "" {
		d = append(d, bson.E{Key: "appName", Value: app})
	}
	d = append(d, bson.E{Key: "allUsers", Value: users}, bson.E{Key: "user", Value: user})
	return marshal(d)
}

// planFields are how the operation's plan was chosen and run, each only
// when true, as MongoDB's OpDebug shows them after docsExamined: a blocking
// sort (hasSortStage), a trial among candidates (fromMultiPlanner), a plan
// from the plan cache (fromPlanCache), a cached plan replaced
// (replanned, replanReason).
func (rec *opRecord) planFields() []bson.E {
	st := &rec.stats
	var f []bson.E
	if st.SortStage {
		f = append(f, bson.E{Key: "hasSortStage", Value: true})
	}
	if st.MultiPlanned {
		f = append(f, bson.E{Key: "fromMultiPlanner", Value: true})
	}
	if st.FromPlanCache {
		f = append(f, bson.E{Key: "fromPlanCache", Value: true})
	}
	if st.ReplanReason != "" {
		f = append(f, bson.E{Key: "replanned", Value: true}, bson.E{Key: "replanReason", Value: st.ReplanReason})
	}
	return f
}

// hashFields are the queryHash and planCacheKey of the operation's first
// query, those it has, as MongoDB's OpDebug shows them after nreturned
// (engine.OpStats.QueryHashes); computed here, only for a record written.
func (rec *opRecord) hashFields() []bson.E {
	qh, key := rec.stats.QueryHashes()
	var f []bson.E
	if qh != "" {
		f = append(f, bson.E{Key: "queryHash", Value: qh})
	}
	if key != "" {
		f = append(f, bson.E{Key: "planCacheKey", Value: key})
	}
	return f
}

// writeFields are the counts of a write's entry, then the index keys its
// writes added and removed when it wrote documents that could (MongoDB's
// OpDebug keysInserted and keysDeleted).
func (rec *opRecord) writeFields() []bson.E {
	w := rec.out.writes
	var f []bson.E
	switch {
	case w == nil:
		return nil
	case w.failed:
	case w.kind == "insert":
		f = []bson.E{{Key: "ninserted", Value: w.n}}
	case w.kind == "remove":
		f = []bson.E{{Key: "ndeleted", Value: w.n}}
	default:
		f = []bson.E{{Key: "nMatched", Value: w.n}, {Key: "nModified", Value: w.nModified}, {Key: "nUpserted", Value: w.nUpserted}}
	}
	if rec.stats.Inserted {
		f = append(f, bson.E{Key: "keysInserted", Value: rec.stats.KeysInserted})
	}
	if rec.stats.Deleted {
		f = append(f, bson.E{Key: "keysDeleted", Value: rec.stats.KeysDeleted})
	}
	return f
}

// errorFields are ok: 0 and the error of a failed operation.
func (rec *opRecord) errorFields() []bson.E {
	if rec.err == nil {
		return nil
	}
	e := mongoerr.As(rec.err)
	return []bson.E{{Key: "ok", Value: 0.0}, {Key: "errMsg", Value: e.Msg}, {Key: "errName", Value: e.Code.Name()}, {Key: "errCode", Value: int32(e.Code)}}
}

// logAttrs are rec's attributes in MongoDB's "Slow query" line, the
// client's application name after ns when its handshake gave one
// (OpDebug::report). A command
// (or originating command) longer than limit bytes as text is cut there,
// and its size in BSON bytes is given under "truncated", as MongoDB's
// maxLogSizeKB does; rendering a bulk insert whole would cost more than
// running it.
func (rec *opRecord) logAttrs(limit int) []any {
	var cut []any
	text := func(name string, doc bson.Raw) string {
		s, truncated := bsoncore.Document(doc).StringN(limit)
		if truncated {
			cut = append(cut, name, len(doc))
		}
		return s
	}
	a := []any{"type", "command", "ns", rec.ns}
	if rec.conn != nil && rec.conn.AppName != "" {
		a = append(a, "appName", rec.conn.AppName)
	}
	a = append(a, "command", text("command", rec.cmd))
	if rec.out.origin != nil {
		a = append(a, "originatingCommand", text("originatingCommand", rec.out.origin))
	}
	if cut != nil {
		a = append(a, slog.Group("truncated", cut...))
	}
	if ps := rec.stats.PlanSummary(); ps != "" {
		a = append(a, "planSummary", ps)
	}
	if rec.scanned() {
		a = append(a, "keysExamined", rec.stats.KeysExamined, "docsExamined", rec.stats.DocsExamined)
	}
	for _, f := range rec.planFields() {
		a = append(a, f.Key, f.Value)
	}
	if rec.out.cursor {
		if rec.out.cursorID == 0 {
			a = append(a, "cursorExhausted", true)
		}
		a = append(a, "nreturned", rec.out.nreturned)
	}
	if w := rec.out.writes; w != nil {
		for _, f := range rec.writeFields() {
			a = append(a, f.Key, f.Value)
		}
	}
	for _, f := range rec.hashFields() {
		a = append(a, f.Key, f.Value)
	}
	if rec.reslen >= 0 {
		a = append(a, "reslen", rec.reslen)
	}
	if rec.conn != nil {
		a = append(a, "remote", rec.conn.Remote)
	}
	if rec.err != nil {
		e := mongoerr.As(rec.err)
		a = append(a, "ok", 0, "errCode", int32(e.Code), "errName", e.Code.Name(), "errMsg", e.Msg)
	}
	return append(a, "durationMillis", rec.d.Milliseconds())
}

// statementProfiled are the write commands whose statements are profiled
// one by one (profileStatement) rather than as one command.
var statementProfiled = map[string]bool{"update": true, "delete": true}

// observe counts the keys and documents r examined (s.Scanned), and logs
// and profiles r, a command that took d and answered reply or failed with
// err.
func (s *Service) observe(r *Request, name string, d time.Duration, reply bson.Raw, err error) {
	op := r.op
	if op == nil {
		// refused before it ran (parse, authorization, admission)
		return
	}
	if n := op.stats.KeysExamined; n != 0 {
		s.Scanned.Keys.Add(n)
	}
	if n := op.stats.DocsExamined; n != 0 {
		s.Scanned.Docs.Add(n)
	}
	kind := opKinds[name]
	if kind == "" {
		kind = "command"
	}
	rec := opRecord{op: kind, ns: op.ns, cmd: op.cmd, stats: op.stats, out: op.out, err: err, reslen: len(reply), d: d, conn: r.Conn}
	s.record(r.DB, &rec, true, !statementProfiled[name])
	if err == nil {
		s.observeForAdvice(name, op, d, reply)
	}
}

// record logs rec when mayLog is set and it is slow, and profiles it in
// db when mayProfile is set and the database's level asks for it (2, or 1
// and slow); a database's filter replaces "slow" (and the sampling) for
// both.
func (s *Service) record(db string, rec *opRecord, mayLog, mayProfile bool) {
	p := s.prof.of(db)
	mayProfile = mayProfile && p.level > 0
	if !mayLog && !mayProfile {
		return
	}
	now := time.Now()
	var entry bson.Raw
	var log, prof bool
	if p.filter != nil {
		entry = rec.entry(now)
		match := p.filter.Match(entry)
		log, prof = mayLog && match, mayProfile && (p.level == 2 || match)
	} else {
		slow := rec.d.Milliseconds() >= s.SlowMS()
		log, prof = mayLog && slow, mayProfile && (p.level == 2 || slow)
		if rate := s.sampleRate(); (log || prof) && rate < 1 && rand.Float64() >= rate {
			return
		}
	}
	if log && s.Log != nil {
		s.Log.Info("Slow query", rec.logAttrs(s.maxLogSize())...)
	}
	if !prof {
		return
	}
	if entry == nil {
		entry = rec.entry(now)
	}
	if err := s.Engine.AppendProfile(db, entry); err != nil && s.Log != nil {
		s.Log.Warn("profiler: recording an operation failed", "ns", rec.ns, "err", err)
	}
}

// profileStatement starts one statement of an update or delete (kind
// update or remove), which the profiler records on its own, as MongoDB
// does: its scans' work, its counts, and stmt as its command (an update
// statement as updateOpEntry shows it). The returned done records it; the
// statement's work stays counted in the command's too.
func (s *Service) profileStatement(r *Request, kind string, stmt bson.Raw) (done func(w writeCounts, err error)) {
	op := r.op
	if op == nil || s.prof.active.Load() == 0 {
		return func(writeCounts, error) {}
	}
	saved := op.stats
	op.stats = engine.OpStats{}
	op.stats.Publish(&op.live)
	start := time.Now()
	return func(w writeCounts, err error) {
		st := op.stats
		op.stats = saved
		op.stats.Add(st)
		w.kind, w.failed = kind, err != nil
		cmd := stmt
		if kind == "update" {
			cmd = updateOpEntry(stmt)
		}
		rec := opRecord{op: kind, ns: op.ns, cmd: cmd, stats: st, out: opOutcome{writes: &w}, err: err, reslen: -1, d: time.Since(start), conn: r.Conn}
		s.record(r.DB, &rec, false, true)
	}
}

// updateOpEntry is an update statement (parsed, so well formed) as
// MongoDB's profiler and currentOp show it: the statement re-serialized
// from its parsed UpdateOpEntry (write_ops.idl), fields in the IDL's
// order (q, u, c, arrayFilters, hint, multi, upsert, upsertSupplied,
// collation, sampleId), multi and upsert always present, a hint only when
// not empty and an index name as {$hint: name} (serializeHintToBSON).
func updateOpEntry(stmt bson.Raw) bson.Raw {
	d := bson.D{{Key: "q", Value: stmt.Lookup("q")}, {Key: "u", Value: stmt.Lookup("u")}}
	for _, f := range []string{"c", "arrayFilters"} {
		if v, err := stmt.LookupErr(f); err == nil {
			d = append(d, bson.E{Key: f, Value: v})
		}
	}
	if h, err := stmt.LookupErr("hint"); err == nil {
		if name, ok := h.StringValueOK(); ok {
			d = append(d, bson.E{Key: "hint", Value: bson.D{{Key: "$hint", Value: name}}})
		} else if doc, ok := h.DocumentOK(); ok && len(doc) > 5 {
			d = append(d, bson.E{Key: "hint", Value: h})
		}
	}
	flag := func(f string) bool {
		v, err := stmt.LookupErr(f)
		return err == nil && v.Boolean()
	}
	d = append(d, bson.E{Key: "multi", Value: flag("multi")}, bson.E{Key: "upsert", Value: flag("upsert")})
	if v, err := stmt.LookupErr("upsertSupplied"); err == nil {
		d = append(d, bson.E{Key: "upsertSupplied", Value: v})
	}
	for _, f := range []string{"collation", "sampleId"} {
		if v, err := stmt.LookupErr(f); err == nil {
			d = append(d, bson.E{Key: f, Value: v})
		}
	}
	return marshal(d)
}
