package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

func init() {
	register(explainCmd, "explain")
}

// explainCmd explains a find, a count, a distinct or an
// aggregate, with verbosity queryPlanner or executionStats
// (allPlansExecution reports as executionStats: Folio considers one plan).
func explainCmd(s *Service, r *Request) (bson.Raw, error) {
	inner, err := argDoc("explain", "explain", r.Cmd.Lookup("explain"))
	if err != nil {
		return nil, err
	}
	execute := false
	err = eachArg(r.Cmd, func(key string, v bson.RawValue) (bool, error) {
		if key != "verbosity" {
			return false, nil
		}
		verbosity, err := argString("explain", key, v)
		switch verbosity {
		case "queryPlanner":
		case "executionStats", "allPlansExecution":
			execute = true
		default:
			if err == nil {
				err = mongoerr.New(mongoerr.FailedToParse, "verbosity string must be one of {'queryPlanner', 'executionStats', 'allPlansExecution'}")
			}
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	var out bson.D
	if Name(inner) == "aggregate" {
		var a *aggregateArgs
		if a, err = parseAggregate(s, r.DB, inner, r.Txn, r.Ctx); err == nil {
			out, err = explainAggregate(s, r.DB, a, execute)
		}
	} else {
		out, err = explainFind(s, r, inner, execute)
	}
	if err != nil {
		return nil, err
	}
	return explainReply(s, out, inner), nil
}

// explainFind explains a find, a count or a distinct of r.
func explainFind(s *Service, r *Request, inner bson.Raw, execute bool) (bson.D, error) {
	coll, err := collectionArg(inner)
	if err != nil {
		return nil, err
	}
	var o findArgs
	var key string
	name := Name(inner)
	switch name {
	case "find":
		o, err = parseFind(inner)
	case "count":
		o.FindOptions, err = parseCount(inner)
	case "distinct":
		key, o.FindOptions, err = parseDistinct(inner)
	default:
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not explain %s yet", name)
	}
	if err != nil {
		return nil, err
	}
	o.Ctx = r.Ctx
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
