package aggregate

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sorter"
)

// facetStage is $facet: every sub-pipeline runs over all the input
// documents, with their metadata (MongoDB's TeeBuffer hands each
// sub-pipeline the input Documents, metadata included: a $text search's
// score is there to {$meta: "textScore"}), and the stage outputs one
// document holding each sub-pipeline's results as an array under its name.
type facetStage struct {
	names     []string
	pipelines [][]stage
}

func (p *parser) parseFacet(arg bson.RawValue) (stage, error) {
	var fs []field
	if arg.Type == bson.TypeEmbeddedDocument {
		fs = fieldsOf(arg.Value)
	}
	if len(fs) == 0 {
		return nil, mongoerr.New(mongoerr.FacetSpecInvalid, "the $facet specification must be a non-empty object, but found: %s", arg)
	}
	s := &facetStage{}
	sp, err := p.sub(inFacet, false, p.coll, p.scope)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		// An output field's name is one field name, not a path.
		if err := expr.ValidFieldName(f.key); err != nil {
			return nil, err
		}
		if f.val.Type != bson.TypeArray {
			return nil, mongoerr.New(mongoerr.FacetArgumentNotArray, "arguments to $facet must be arrays, %s is type %s", f.key, typeName(f.val))
		}
		var docs []bson.Raw
		for _, el := range arrayValues(f.val) {
			if el.Type != bson.TypeEmbeddedDocument || len(fieldsOf(el.Value)) == 0 {
				return nil, mongoerr.New(mongoerr.FacetPipelineElementInvalid,
					"elements of arrays in $facet spec must be non-empty objects, %s argument contained an element of type %s: %s", f.key, typeName(el), el)
			}
			docs = append(docs, el.Document())
		}
		ss, err := sp.pipeline(docs)
		if err != nil {
			return nil, err
		}
		s.names = append(s.names, f.key)
		s.pipelines = append(s.pipelines, ss)
	}
	return s, nil
}

func (s *facetStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		acct := rt.holdAccount()
		defer acct.Release()
		var docs []bson.Raw
		var metas []docsrc.Meta
		for {
			doc, err := in.Next()
			if err != nil {
				return nil, err
			}
			if doc == nil {
				break
			}
			if !acct.Grow(heldDocSize(doc)) {
				return nil, rt.refused("$facet")
			}
			docs = append(docs, doc)
			metas = append(metas, docsrc.MetaOf(in))
		}
		out := make([]field, len(s.names))
		// The output is bounded by its own limit (collectFacet), not
		// the stage's memory limit, and counts against the process-wide
		// budget.
		outAcct := sorter.NewAccount(math.MaxInt64, rt.opts.Budget)
		defer outAcct.Release()
		for i, ss := range s.pipelines {
			src := runStages(ss, &SliceSource{Docs: docs, Metas: metas}, rt)
			vals, err := collectFacet(src, outAcct, rt.facetMaxOutputBytes())
			src.Close()
			if err != nil {
				return nil, err
			}
			out[i] = field{s.names[i], buildArray(vals)}
		}
		return []bson.Raw{buildDoc(out)}, nil
	}}
}

// collectFacet reads one sub-pipeline's results into the output document's
// array. The document may exceed a user document's 16 MiB for the stages
// after $facet, but MongoDB (DocumentSourceFacet::doGetNext) fails with
// 4031700 as soon as the results of all the sub-pipelines, counted as
// they arrive, total more than internalQueryFacetMaxOutputDocSizeBytes
// (limit, 100 MiB by default); acct holds the output of the sub-pipelines
// read before.
func collectFacet(src Source, acct *sorter.Account, limit int64) ([]bson.RawValue, error) {
	var vals []bson.RawValue
	for {
		d, err := src.Next()
		if d == nil || err != nil {
			return vals, err
		}
		n := heldDocSize(d)
		if total := acct.Used() + n; total > limit {
			return nil, mongoerr.New(mongoerr.FacetOutputTooLarge, "document constructed by $facet is %d bytes, which exceeds the limit of %d bytes", total, limit)
		}
		if !acct.Grow(n) {
			return nil, budgetExceeded("$facet")
		}
		vals = append(vals, docValue(d))
	}
}
