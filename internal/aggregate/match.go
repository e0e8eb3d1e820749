package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// matchStage is $match: it keeps the documents a query filter matches.
// Top-level $expr conditions (which the query language leaves to
// aggregation) are evaluated as expressions and must all be true. An $expr
// nested in the filter ($or, $and, $nor) sees the pipeline's variables as
// well: such a filter is compiled again for each run, against the run's
// variable values.
type matchStage struct {
	// written is the filter as written (nil for a stage the pipeline
	// made); spec is it without its top-level $expr conditions.
	written bson.Raw
	spec    bson.Raw
	filter  *query.Filter
	exprs   []*expr.Expr
	scope   *expr.Scope // the pipeline's variables, where the filter was parsed
}

func (p *parser) parseMatch(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.MatchSpecNotObject, "the match filter must be an expression in an object")
	}
	m := &matchStage{written: arg.Document()}
	elems, err := arg.Document().Elements()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid $match: %v", err)
	}
	start, rest := bsoncore.AppendDocumentStart(nil)
	for _, el := range elems {
		if el.Key() != "$expr" {
			rest = rawdoc.AppendElement(rest, el.Key(), el.Value())
			continue
		}
		e, err := expr.Compile(el.Value(), p.scope)
		if err != nil {
			return nil, err
		}
		m.exprs = append(m.exprs, e)
	}
	m.spec, _ = bsoncore.AppendDocumentEnd(rest, start)
	m.scope = p.scope
	if m.filter, err = query.CompileCollated(m.spec, &expr.Let{Scope: p.scope, Ctx: &expr.Context{}}, p.opts.Collator); err != nil {
		return nil, err
	}
	if m.filter.HasNear() {
		return nil, query.NearNotAllowed()
	}
	return m, nil
}

// shown is the stage's filter (its top-level $expr conditions included)
// as explain shows it: parsed as the stage's was, then normalized.
func (m *matchStage) shown(filter bson.Raw) any {
	var let *expr.Let
	if m.scope != nil {
		let = &expr.Let{Scope: m.scope, Ctx: &expr.Context{}}
	}
	return query.Shown(filter, let, m.filter.Collator())
}

func (m *matchStage) run(in Source, rt *runtime) Source {
	filter, compiled := m.filter, !m.filter.UsesExpr()
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		if !compiled {
			f, err := query.CompileCollated(m.spec, &expr.Let{Scope: m.scope, Ctx: rt.ectx}, rt.opts.Collator)
			if err != nil {
				return nil, err
			}
			filter, compiled = f, true
		}
		if ok, _, err := filter.MatchErr(doc); !ok || err != nil {
			return nil, err
		}
		for _, e := range m.exprs {
			v, err := e.Eval(rt.ectx, doc)
			if err != nil {
				return nil, err
			}
			if !values.Truthy(v) {
				return nil, nil
			}
		}
		return []bson.Raw{doc}, nil
	}}
}

// scanFilter is what the read of the collection a sub-pipeline ($lookup's,
// $unionWith's) starts with may take from the pipeline's leading $match,
// which stays in the pipeline and judges every document: the match's query
// conditions when they hold no $expr, and the conditions its top-level
// $expr clauses imply under the variables of ectx (expr.Expr.Rewrite;
// MongoDB's $lookup binds its let variables as constants, so that they
// reach RewriteExpr), which an index can bound. nil when there are none.
func scanFilter(stages []stage, ectx *expr.Context) bson.Raw {
	if len(stages) == 0 {
		return nil
	}
	m, ok := stages[0].(*matchStage)
	if !ok {
		return nil
	}
	var clauses []bson.Raw
	if !m.filter.UsesExpr() && len(m.spec) > len(emptyDoc) {
		clauses = append(clauses, m.spec)
	}
	for _, e := range m.exprs {
		if c, ok := e.Rewrite(ectx); ok {
			clauses = append(clauses, query.CondFilter(c))
		}
	}
	return joined(clauses)
}
