package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// planCacheStatsStage is $planCacheStats: one document per entry of the
// collection's plan cache, each with the host it was read on (manual,
// $planCacheStats). It must be the pipeline's first stage and takes an
// empty document.
type planCacheStatsStage struct{ coll string }

func (p *parser) parsePlanCacheStats(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$planCacheStats value must be an object. Found: %s", typeName(arg))
	}
	if len(fieldsOf(arg.Value)) != 0 {
		// MongoDB names the argument's type here, not the field found.
		return nil, mongoerr.New(mongoerr.FailedToParse, "$planCacheStats parameters object must be empty. Found: object")
	}
	return planCacheStatsStage{p.coll}, nil
}

func (s planCacheStatsStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		entries, err := rt.opts.Env.PlanCacheStats(rt.opts.DB, s.coll)
		if err != nil {
			return nil, err
		}
		host := field{"host", stringValue(rt.hostName())}
		out := make([]bson.Raw, len(entries))
		for i, ent := range entries {
			out[i] = buildDoc(append(fieldsOf(ent), host))
		}
		return out, nil
	}}
}
