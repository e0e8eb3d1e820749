package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// redactStage is $redact: its expression is evaluated at each level of a
// document ($$CURRENT the subdocument, $$ROOT the whole document) and must
// yield $$KEEP (the subdocument stays whole), $$PRUNE (it goes) or
// $$DESCEND (its scalar fields stay and its subdocuments, also those in
// arrays, are redacted in turn). A pruned top-level document is dropped.
type redactStage struct{ e *expr.Expr }

// The values of $redact's variables, as MongoDB binds them.
var (
	redactDescend = stringValue("descend")
	redactPrune   = stringValue("prune")
	redactKeep    = stringValue("keep")
	redactVars    = map[string]bson.RawValue{"DESCEND": redactDescend, "PRUNE": redactPrune, "KEEP": redactKeep}
)

func (p *parser) parseRedact(arg bson.RawValue) (stage, error) {
	e, err := expr.Compile(arg, p.scope.With("DESCEND", "PRUNE", "KEEP"))
	if err != nil {
		return nil, err
	}
	return &redactStage{e: e}, nil
}

func (s *redactStage) run(in Source, rt *runtime) Source {
	rt = rt.withVars(redactVars)
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		out, keep, err := s.redact(rt, doc, doc)
		if err != nil || !keep {
			return nil, err
		}
		return []bson.Raw{out}, nil
	}}
}

// redact applies the expression to cur; keep is false when it is pruned.
func (s *redactStage) redact(rt *runtime, root, cur bson.Raw) (bson.Raw, bool, error) {
	v, err := s.e.EvalAt(rt.ectx, root, cur)
	if err != nil {
		return nil, false, err
	}
	switch {
	case v.Type == bson.TypeString && values.Equal(v, redactKeep):
		return cur, true, nil
	case v.Type == bson.TypeString && values.Equal(v, redactPrune):
		return nil, false, nil
	case v.Type == bson.TypeString && values.Equal(v, redactDescend):
	default:
		return nil, false, mongoerr.New(mongoerr.RedactBadResult,
			"$redact's expression should not return anything aside from the variables $$KEEP, $$DESCEND, and $$PRUNE, but returned %s", values.ValueString(v))
	}
	fs := fieldsOf(cur)
	out := fs[:0]
	for _, f := range fs {
		nv, keep, err := s.redactValue(rt, root, f.val)
		if err != nil {
			return nil, false, err
		}
		if keep {
			out = append(out, field{f.key, nv})
		}
	}
	return buildDoc(out), true, nil
}

// redactValue redacts a field's value: documents are redacted, arrays
// element by element (pruned documents leave them), other values stay.
func (s *redactStage) redactValue(rt *runtime, root bson.Raw, v bson.RawValue) (bson.RawValue, bool, error) {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		d, keep, err := s.redact(rt, root, v.Document())
		return docValue(d), keep, err
	case bson.TypeArray:
		var out []bson.RawValue
		for _, el := range arrayValues(v) {
			nv, keep, err := s.redactValue(rt, root, el)
			if err != nil {
				return missing, false, err
			}
			if keep {
				out = append(out, nv)
			}
		}
		return buildArray(out), true, nil
	}
	return v, true, nil
}
