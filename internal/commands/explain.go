package commands

import (
	"net"
	"os"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(explainCmd, explainSpec, "explain")
}

// explainSpec declares explain's fields; the command explained is parsed
// against its own declaration.
// https://www.mongodb.com/docs/v7.0/reference/command/explain/
var explainSpec = &argSpec{path: "explain", fields: []argField{
	arg("verbosity", tString),
}}

// explainCmd explains a find, a count, a distinct, an aggregate, an
// update, a delete or a findAndModify, with verbosity queryPlanner,
// executionStats or allPlansExecution.
func explainCmd(s *Service, r *Request) (bson.Raw, error) {
	innerv := r.args.first()
	if innerv.Type != bson.TypeEmbeddedDocument {
		return nil, wrongType("explain", "explain", innerv, "object")
	}
	inner := innerv.Document()
	// The command's default verbosity is allPlansExecution (mongosh's
	// explain() sends queryPlanner).
	var v engine.Verbosity
	switch r.args.str("verbosity") {
	case "queryPlanner":
		v = engine.QueryPlanner
	case "executionStats":
		v = engine.ExecutionStats
	case "", "allPlansExecution":
		v = engine.AllPlansExecution
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}")
	}
	if err := explainedDB(inner, r.DB); err != nil {
		return nil, err
	}
	var out bson.D
	name := Name(inner)
	if h, ok := handlers[name]; ok {
		name = h.names[0] // findandmodify is findAndModify
	}
	switch name {
	case "find", "count", "distinct", "aggregate", "update", "delete", "findAndModify":
	case "mapReduce":
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not explain %s yet", name)
	default:
		// A command MongoDB does not know fails with CommandNotFound;
		// one it knows but cannot explain, with IllegalOperation
		// (CommandInvocation::explain).
		if _, ok := handlers[name]; !ok {
			return nil, mongoerr.New(mongoerr.CommandNotFound, "Explain failed due to unknown command: %s", name)
		}
		return nil, mongoerr.New(mongoerr.IllegalOperation, "Cannot explain cmd: %s", name)
	}
	// The explained command runs under the explain's API parameters: under
	// apiStrict its unstable fields and stages fail as its own would.
	parse := parseCommand
	if r.Args.API.Strict {
		parse = parseStrictCommand
	}
	c, err := parse(inner, handlers[name].spec)
	if err == nil && r.Args.API.Strict {
		err = checkAPIStrict(name, &c)
	}
	if err != nil {
		return nil, err
	}
	// An aggregate's own explain option cannot go with the explain
	// command's verbosity (aggregation_request_helper::parseFromBSON).
	if name == "aggregate" && c.has("explain") {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'explain' option is illegal when a explain verbosity is also provided")
	}
	switch name {
	case "aggregate":
		var a *aggregateArgs
		if a, err = parseAggregate(s, r, &c, r.Ctx); err == nil {
			if err = s.checkAggregateUUID(r, &c, a); err == nil {
				err = s.onView(r, a)
			}
			switch {
			case err != nil:
			case len(a.stages) > 0 && Name(a.stages[0]) == "$changeStream":
				err = errExplainChangeStream()
			default:
				out, err = explainAggregate(s, r, a, v)
			}
		}
	case "update", "delete":
		out, err = explainWrite(s, r, &c, v)
	case "findAndModify":
		var coll string
		var spec engine.FindAndModifySpec
		if coll, spec, _, err = parseFindAndModify(s, r, &c); err == nil {
			out, err = s.Engine.ExplainFindAndModify(r.DB, coll, spec, v)
		}
	default:
		out, err = explainFind(s, r, &c, v)
	}
	if err != nil {
		return nil, err
	}
	return explainReply(s, out, withDB(inner, r.DB)), nil
}

// explainedDB checks that the command explained names no $db but the
// explain's (ExplainCmd::parse).
func explainedDB(cmd bson.Raw, db string) error {
	if v, err := cmd.LookupErr("$db"); err == nil {
		if got, _ := v.StringValueOK(); got != db {
			return mongoerr.New(mongoerr.InvalidNamespace, "Mismatched $db in explain command. Expected %s but got %s", db, got)
		}
	}
	return nil
}

// withDB is cmd as the server would have received it on its own, with its
// $db: how an explain shows the command it explains.
func withDB(cmd bson.Raw, db string) bson.Raw {
	if _, err := cmd.LookupErr("$db"); err == nil {
		return cmd
	}
	return appendFields(cmd, bsoncore.AppendStringElement(nil, "$db", db))
}

// explainFind explains a find, a count or a distinct of r.
func explainFind(s *Service, r *Request, c *cmdArgs, v engine.Verbosity) (bson.D, error) {
	coll, err := collectionArg(c.raw, r.DB)
	if err != nil {
		return nil, err
	}
	var o findArgs
	var key string
	name := c.spec.path
	switch c.spec {
	case findSpec:
		o, err = parseFind(c, s.allowDiskUseByDefault(), s.exprClock(r))
	case countSpec:
		o.FindOptions, err = parseCount(c)
	case distinctSpec:
		key, o.FindOptions, err = parseDistinct(c)
	}
	if err == nil && c.spec == findSpec {
		err = s.checkCollectionUUID(r, c, r.DB, coll)
	}
	if err != nil {
		return nil, err
	}
	if view, err := s.lookupView(r, r.DB, coll); err != nil || view != nil {
		if err != nil {
			return nil, err
		}
		return s.explainOnView(r, coll, c, o, key, v)
	}
	o.Ctx = r.Ctx
	o.Let = s.withScripts(o.Let, r, r.Ctx)
	switch name {
	case "count":
		return s.Engine.ExplainCount(r.DB, coll, o.FindOptions, v)
	case "distinct":
		return s.Engine.ExplainDistinct(r.DB, coll, key, o.FindOptions, v)
	}
	return s.Engine.Explain(r.DB, coll, o.FindOptions, v)
}

// explainWrite explains an update or a delete command of one statement,
// as MongoDB explains a write batch of size one; nothing is written.
func explainWrite(s *Service, r *Request, c *cmdArgs, v engine.Verbosity) (bson.D, error) {
	name := c.spec.path
	docsField := "updates"
	if name == "delete" {
		docsField = "deletes"
	}
	coll, a, err := parseBatch(s, r, c, name, docsField)
	if err == nil {
		err = a.acquireErr
	}
	if err != nil {
		return nil, err
	}
	if len(a.docs) != 1 {
		return nil, mongoerr.New(mongoerr.InvalidLength, "explained write batches must be of size 1")
	}
	if a.ts != nil {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not explain %s on a time series collection yet", name)
	}
	wo := engine.WriteOptions{Txn: r.Txn, Ctx: r.Ctx}
	if name == "delete" {
		st, err := parseDeleteStatement(a.docs[0])
		if err == nil {
			wo.Let, err = s.scriptVars(a.let, r, r.Ctx)
		}
		if err != nil {
			return nil, err
		}
		wo.Collation = st.collation
		return s.Engine.ExplainDelete(r.DB, coll, st.filter, int(st.limit), st.hint, wo, v)
	}
	u, err := parseUpdateStatement(a.docs[0])
	if err == nil {
		err = u.replacementMulti()
	}
	if err == nil {
		err = s.bindUpdateVars(r, &u, a.let)
	}
	if err != nil {
		return nil, err
	}
	wo.Collation, wo.Let = u.collation, u.Let
	u.WriteOptions = wo
	return s.Engine.ExplainUpdate(r.DB, coll, u.UpdateSpec, v)
}

// explainOnView explains a find, count or distinct on a view as MongoDB
// does: as the aggregation it runs (see findView, countView,
// distinctView).
func (s *Service) explainOnView(r *Request, view string, c *cmdArgs, o findArgs, key string, v engine.Verbosity) (bson.D, error) {
	var stages bson.A
	var more bson.D
	var err error
	switch c.spec {
	case findSpec:
		stages, more, err = findViewAggregate(c, o)
	case countSpec:
		stages, more = countViewStages(o.FindOptions), viewResultFields(c)
	case distinctSpec:
		stages, more = distinctViewStages(key, o.FindOptions), viewResultFields(c)
	}
	if err != nil {
		return nil, err
	}
	raw := marshal(append(append(bson.D{{Key: "aggregate", Value: view}, {Key: "pipeline", Value: stages}}, more...), bson.E{Key: "$db", Value: r.DB}))
	args, err := parseCommand(raw, aggregateSpec)
	if err != nil {
		return nil, err
	}
	a, err := parseAggregate(s, r, &args, r.Ctx)
	if err == nil {
		err = s.onView(r, a)
	}
	if err != nil {
		return nil, err
	}
	return explainAggregate(s, r, a, v)
}

// explainReply is an explain's answer: out, then the command explained
// and serverInfo.
func explainReply(s *Service, out bson.D, cmd bson.Raw) bson.Raw {
	out = append(out,
		bson.E{Key: "command", Value: cmd},
		bson.E{Key: "serverInfo", Value: serverInfo(s.Host)},
	)
	return marshal(out)
}

// serverInfo is an explain's serverInfo, as MongoDB's generateServerInfo
// writes it: the machine's host name, the server's port (of hostPort, the
// host:port it advertises), version and git version.
func serverInfo(hostPort string) bson.D {
	host, _ := os.Hostname()
	_, port := splitHostPort(hostPort)
	return bson.D{{Key: "host", Value: host}, {Key: "port", Value: int32(port)}, {Key: "version", Value: mongoVersion}, {Key: "gitVersion", Value: "folio"}}
}

// splitHostPort splits a host:port (0 without a port).
func splitHostPort(hostPort string) (string, int) {
	host, p, err := net.SplitHostPort(hostPort)
	if err != nil {
		return hostPort, 0
	}
	port, _ := strconv.Atoi(p)
	return host, port
}

// port is the server's port, of the host:port it advertises.
func (s *Service) port() int {
	_, p := splitHostPort(s.Host)
	return p
}

// prettyHostName is the host serverStatus, hostInfo and dbHash report, as
// MongoDB's prettyHostName: the machine's host name, and the server's port
// after it unless that is the default, 27017.
func (s *Service) prettyHostName() string {
	host, _ := os.Hostname()
	if p := s.port(); p != 0 && p != 27017 {
		host += ":" + strconv.Itoa(p)
	}
	return host
}
