package aggregate

import (
	"errors"
	"iter"
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
// score is there to {$meta: "textScore"}), read in batches (facetTee), and
// the stage outputs one document holding each sub-pipeline's results as an
// array under its name.
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
	// optimizeErr is the first of its pipelines' errors of optimizing an
	// expression (expr.OptimizeError). Every pipeline parses first, as
	// the whole pipeline does before MongoDB optimizes it; then the
	// $facet's optimize optimizes each of its pipelines as a pipeline
	// (DocumentSourceFacet::optimize calls Pipeline::optimizePipeline),
	// inside the optimization of the outer one: the error has
	// "Failed to optimize pipeline" twice.
	var optimizeErr error
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
		if err := deferOptimizeError(&optimizeErr, err); err != nil {
			return nil, err
		}
		s.names = append(s.names, f.key)
		s.pipelines = append(s.pipelines, ss)
	}
	if optimizeErr != nil {
		return nil, &expr.OptimizeError{Err: optimizeFailed(optimizeErr)}
	}
	return s, nil
}

func (s *facetStage) run(in Source, rt *runtime) Source {
	return &lazySource{in: in, compute: func() ([]bson.Raw, error) {
		tee := &facetTee{in: in, bytes: rt.facetBufferBytes(), acct: sorter.NewAccount(math.MaxInt64, rt.opts.Budget)}
		defer tee.acct.Release()
		// The output is bounded by its own limit (collectFacet), not
		// the stage's memory limit, and counts against the process-wide
		// budget.
		outAcct := sorter.NewAccount(math.MaxInt64, rt.opts.Budget)
		defer outAcct.Release()
		limit := rt.facetMaxOutputBytes()
		results := make([][]bson.RawValue, len(s.pipelines))
		errs := make([]error, len(s.pipelines))
		resume := make([]func() (struct{}, bool), len(s.pipelines))
		for i, ss := range s.pipelines {
			next, stop := iter.Pull(func(yield func(struct{}) bool) {
				src := runStages(ss, &teeReader{tee: tee, yield: yield}, rt)
				results[i], errs[i] = collectFacet(src, outAcct, limit)
				src.Close()
			})
			defer stop()
			resume[i] = next
		}
		// As MongoDB's DocumentSourceFacet::doGetNext: each sub-pipeline
		// in turn runs until it has read the batch or ended; then the
		// next batch is read.
		active := make([]int, len(s.pipelines))
		for i := range active {
			active[i] = i
		}
		for {
			if err := tee.load(); err != nil {
				return nil, err
			}
			waiting := active[:0]
			for _, i := range active {
				if _, ok := resume[i](); ok {
					waiting = append(waiting, i)
				} else if errs[i] != nil {
					return nil, errs[i]
				}
			}
			if active = waiting; len(active) == 0 {
				break
			}
		}
		out := make([]field, len(s.names))
		for i, name := range s.names {
			out[i] = field{name, buildArray(results[i])}
		}
		return []bson.Raw{buildDoc(out)}, nil
	}}
}

// DefaultFacetBufferBytes is the size of the batches of its input a
// $facet holds: MongoDB's internalQueryFacetBufferSizeBytes, 100 MiB.
const DefaultFacetBufferBytes = 100 * 1024 * 1024

// facetTee holds the batch of a $facet's input its sub-pipelines read, as
// MongoDB's TeeBuffer: the documents, with their metadata, that total
// bytes (internalQueryFacetBufferSizeBytes), or the first one when it is
// larger. Every sub-pipeline reads the whole batch, or ends, before the
// next replaces it, so a $facet holds one batch whatever its input's size.
type facetTee struct {
	in    Source
	bytes int64
	acct  *sorter.Account
	docs  []bson.Raw
	metas []docsrc.Meta
	// eof is set once in has returned its last document: the batch is
	// the last.
	eof bool
}

// load replaces the batch with the next documents of the input.
func (t *facetTee) load() error {
	t.acct.Shrink(t.acct.Used())
	clear(t.docs)
	t.docs, t.metas = t.docs[:0], t.metas[:0]
	for !t.eof && (len(t.docs) == 0 || t.acct.Used() < t.bytes) {
		doc, err := t.in.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			t.eof = true
			break
		}
		if !t.acct.Grow(heldDocSize(doc)) {
			return budgetExceeded("$facet")
		}
		t.docs = append(t.docs, doc)
		t.metas = append(t.metas, docsrc.MetaOf(t.in))
	}
	return nil
}

// teeReader is one sub-pipeline's source: the tee's batch, and past its
// end, once the sub-pipeline has yielded to the others, the next.
type teeReader struct {
	tee   *facetTee
	yield func(struct{}) bool
	pos   int
	meta  docsrc.Meta
}

// errFacetStopped ends a sub-pipeline whose $facet stopped early (on
// another's error).
var errFacetStopped = errors.New("aggregate: $facet stopped")

func (r *teeReader) Next() (bson.Raw, error) {
	for r.pos == len(r.tee.docs) {
		if r.tee.eof {
			return nil, nil
		}
		if !r.yield(struct{}{}) {
			return nil, errFacetStopped
		}
		r.pos = 0
	}
	r.meta = r.tee.metas[r.pos]
	r.pos++
	return r.tee.docs[r.pos-1], nil
}

// Meta is the metadata of the document returned last.
func (r *teeReader) Meta() docsrc.Meta { return r.meta }

func (r *teeReader) Close() error { return nil }

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
