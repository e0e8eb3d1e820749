package commands

import (
	"sort"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

func init() {
	registerAdmin(currentOpCmd, "currentOp")
}

// activeOp is a command in progress, as currentOp lists it.
type activeOp struct {
	id    int64
	conn  *Conn
	ns    string
	name  string
	cmd   bson.Raw
	start time.Time

	mu          sync.Mutex
	msg         string
	done, total int64
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

// opRegistry holds the commands running now and, for top, the time
// spent on each collection by the commands that ended.
type opRegistry struct {
	mu   sync.Mutex
	next int64
	ops  map[int64]*activeOp
	top  map[string]*nsUsage
}

func (o *opRegistry) begin(r *Request, name string) *activeOp {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ops == nil {
		o.ops = map[int64]*activeOp{}
	}
	o.next++
	ns := r.DB
	if coll, ok := r.Cmd.Lookup(name).StringValueOK(); ok {
		ns += "." + coll
	} else if coll, ok := r.Cmd.Lookup("collection").StringValueOK(); ok && name == "getMore" {
		ns += "." + coll
	}
	op := &activeOp{id: o.next, conn: r.Conn, ns: ns, name: name, cmd: r.Cmd, start: time.Now()}
	o.ops[op.id] = op
	return op
}

func (o *opRegistry) end(op *activeOp) {
	elapsed := time.Since(op.start)
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.ops, op.id)
	o.record(op, elapsed)
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

// describe is op as currentOp reports it.
func (op *activeOp) describe(host string) bson.D {
	kind := opKinds[op.name]
	if kind == "" {
		kind = "command"
	}
	running := time.Since(op.start)
	d := bson.D{
		{Key: "type", Value: "op"},
		{Key: "host", Value: host},
		{Key: "active", Value: true},
		{Key: "opid", Value: op.id},
		{Key: "secs_running", Value: int64(running.Seconds())},
		{Key: "microsecs_running", Value: running.Microseconds()},
		{Key: "op", Value: kind},
		{Key: "ns", Value: op.ns},
		{Key: "command", Value: op.cmd},
	}
	if op.conn != nil {
		d = append(d,
			bson.E{Key: "desc", Value: "conn" + strconv.FormatInt(op.conn.ID, 10)},
			bson.E{Key: "connectionId", Value: op.conn.ID},
			bson.E{Key: "client", Value: op.conn.Remote},
		)
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.msg != "" {
		d = append(d,
			bson.E{Key: "msg", Value: op.msg},
			bson.E{Key: "progress", Value: bson.D{{Key: "done", Value: op.done}, {Key: "total", Value: op.total}}},
		)
	}
	return d
}

// currentOpStage turns a leading {$currentOp: {...}} stage of a
// collection-less aggregate into the $documents stage of the operations in
// progress, which the rest of the pipeline then filters and shapes, as
// mongosh's db.currentOp() does.
func (s *Service) currentOpStage(db string, stage bson.Raw) (bson.Raw, error) {
	if db != "admin" {
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "$currentOp must be run against the 'admin' database with {aggregate: 1}")
	}
	if _, ok := stage.Lookup("$currentOp").DocumentOK(); !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$currentOp options must be specified in an object")
	}
	ops := bson.A{}
	for _, op := range s.ops.list() {
		ops = append(ops, op.describe(s.Host))
	}
	return marshal(bson.D{{Key: "$documents", Value: bson.D{{Key: "$literal", Value: ops}}}}), nil
}

// currentOpArgs are currentOp's own fields; every other field filters the
// operations, as a query on their descriptions.
var currentOpArgs = map[string]bool{"currentOp": true, "$all": true, "$ownOps": true, "$truncateOps": true, "idleConnections": true, "idleSessions": true}

// currentOpCmd lists the operations in progress, with an index build's
// progress, filtered by the command's other fields.
func currentOpCmd(s *Service, r *Request) (bson.Raw, error) {
	filter := bson.D{}
	elems, _ := r.Cmd.Elements()
	for _, el := range elems {
		if !currentOpArgs[el.Key()] && !genericArgs[el.Key()] {
			filter = append(filter, bson.E{Key: el.Key(), Value: el.Value()})
		}
	}
	f, err := query.Compile(marshal(filter))
	if err != nil {
		return nil, err
	}
	inprog := bson.A{}
	for _, op := range s.ops.list() {
		d := op.describe(s.Host)
		if f.Match(marshal(d)) {
			inprog = append(inprog, d)
		}
	}
	return marshal(bson.D{{Key: "inprog", Value: inprog}}), nil
}
