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
			out, err = explainAggregate(s, r.DB, a, execute)
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
		o, err = parseFind(c, s.allowDiskUseByDefault())
	case countSpec:
		o.FindOptions, err = parseCount(c)
	case distinctSpec:
		key, o.FindOptions = parseDistinct(c)
	}
	if err != nil {
		return nil, err
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

// explainReply is an explain's answer: out, then the command explained
// and serverInfo.
func explainReply(s *Service, out bson.D, cmd bson.Raw) bson.Raw {
	out = append(out,
		bson.E{Key: "command", Value: cmd},
		bson.E{Key: "serverInfo", Value: bson.D{{Key: "host", Value: s.Host}, {Key: "version", Value: mongoVersion}, {Key: "gitVersion", Value: "folio"}}},
	)
	return marshal(out)
}
