package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

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

// explainCmd explains a find, a count, a distinct or an
// aggregate, with verbosity queryPlanner or executionStats
// (allPlansExecution reports as executionStats: Folio considers one plan).
func explainCmd(s *Service, r *Request) (bson.Raw, error) {
	innerv := r.args.first()
	if innerv.Type != bson.TypeEmbeddedDocument {
		return nil, wrongType("explain", "explain", innerv, "object")
	}
	inner := innerv.Document()
	execute := false
	switch r.args.str("verbosity") {
	case "", "queryPlanner":
	case "executionStats", "allPlansExecution":
		execute = true
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}")
	}
	var out bson.D
	name := Name(inner)
	switch name {
	case "find", "count", "distinct", "aggregate":
	default:
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not explain %s yet", name)
	}
	c, err := parseCommand(inner, handlers[name].spec)
	if err != nil {
		return nil, err
	}
	if name == "aggregate" {
		var a *aggregateArgs
		if a, err = parseAggregate(s, r, &c, r.Ctx); err == nil {
			if err = s.onView(r, a); err == nil {
				out, err = explainAggregate(s, r.DB, a, execute)
			}
		}
	} else {
		out, err = explainFind(s, r, &c, execute)
	}
	if err != nil {
		return nil, err
	}
	return explainReply(s, out, inner), nil
}

// explainFind explains a find, a count or a distinct of r.
func explainFind(s *Service, r *Request, c *cmdArgs, execute bool) (bson.D, error) {
	coll, err := collectionArg(c.raw)
	if err != nil {
		return nil, err
	}
	var o findArgs
	var key string
	name := c.spec.path
	switch c.spec {
	case findSpec:
		o, err = parseFind(c, s.allowDiskUseByDefault(), s.exprClock())
	case countSpec:
		o.FindOptions, err = parseCount(c)
	case distinctSpec:
		key, o.FindOptions = parseDistinct(c)
	}
	if err != nil {
		return nil, err
	}
	if v, err := s.lookupView(r, r.DB, coll); err != nil || v != nil {
		if err != nil {
			return nil, err
		}
		return s.explainOnView(r, coll, c, o, key, execute)
	}
	o.Ctx = r.Ctx
	o.Let = s.withScripts(o.Let, r, r.Ctx)
	switch name {
	case "count":
		return s.Engine.ExplainCount(r.DB, coll, o.FindOptions, execute)
	case "distinct":
		return s.Engine.ExplainDistinct(r.DB, coll, key, o.FindOptions, execute)
	}
	return s.Engine.Explain(r.DB, coll, o.FindOptions, execute)
}

// explainOnView explains a find, count or distinct on a view as MongoDB
// does: as the aggregation it runs (see findView, countView,
// distinctView).
func (s *Service) explainOnView(r *Request, view string, c *cmdArgs, o findArgs, key string, execute bool) (bson.D, error) {
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
	return explainAggregate(s, r.DB, a, execute)
}

// explainReply is an explain's answer: out, then the command explained
// and serverInfo.
func explainReply(s *Service, out bson.D, cmd bson.Raw) bson.Raw {
	out = append(out,
		bson.E{Key: "command", Value: cmd},
		bson.E{Key: "serverInfo", Value: bson.D{{Key: "host", Value: s.Host}, {Key: "version", Value: mongoVersion}, {Key: "gitVersion", Value: "folio"}}},
	)
	return marshal(out)
}
