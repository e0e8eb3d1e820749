package engine

import (
	"bytes"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/aggregate"
	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/update"
)

// updater applies one compiled update to a document: an operator or
// replacement update, or an aggregation pipeline.
type updater interface {
	Apply(doc bson.Raw, pos int, insert bool) (out bson.Raw, delta []byte, modified bool, err error)
}

// changeOf is the change upd makes to a document it modifies, with the
// delta Apply returned: substitute for a replacement document.
func changeOf(upd updater, delta []byte) change {
	if isReplacement(upd) {
		return substituted
	}
	return change{kind: replace, delta: delta}
}

// isReplacement reports whether upd replaces whole documents (not an
// update pipeline nor operators).
func isReplacement(upd updater) bool {
	u, ok := upd.(*update.Update)
	return ok && u.IsReplacement()
}

// compileUpdate compiles an update document (pipeline false) with the
// query language as the matcher of $pull conditions and array filters, or
// an update pipeline (pipeline true: spec holds the stages as an array)
// seeing the variables of let. Both follow the statement's collation
// (coll, nil for simple), as the filter does. clk is the cluster clock
// (WriteOptions.Clock) of the operators' timestamps.
func compileUpdate(spec bson.Raw, arrayFilters []bson.Raw, pipeline bool, coll string, let *expr.Let, c *collation.Collator, clk clock.Source) (updater, error) {
	if pipeline {
		if len(arrayFilters) > 0 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "arrayFilters may not be specified for pipeline-style updates")
		}
		return compilePipelineUpdate(spec, coll, let, c)
	}
	return update.Compile(spec, update.Options{
		ArrayFilters: arrayFilters,
		Compile: func(filter bson.Raw) (update.Matcher, error) {
			// kBanAllSpecialFeatures
			return query.CompileAllowed(filter, nil, c, query.NoFeatures)
		},
		Collator: c,
		Clock:    clk,
	})
}

// pipelineUpdate is an update given as an aggregation pipeline (MongoDB
// 4.2+), run on each document on its own. The _id may not change.
type pipelineUpdate struct {
	p *aggregate.Pipeline
}

func compilePipelineUpdate(spec bson.Raw, coll string, let *expr.Let, c *collation.Collator) (*pipelineUpdate, error) {
	vals, err := bson.RawArray(spec).Values()
	if err != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid update pipeline: %v", err)
	}
	stages := make([]bson.Raw, len(vals))
	for i, v := range vals {
		doc, ok := v.DocumentOK()
		if !ok {
			return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
		}
		el, err := doc.IndexErr(0)
		if err == nil && !aggregate.AllowedInUpdate(el.Key()) {
			return nil, mongoerr.New(mongoerr.InvalidOptions, "%s is not allowed to be used within an update", el.Key())
		}
		stages[i] = doc
	}
	p, err := aggregate.Parse(stages, aggregate.Options{Coll: coll, Bound: let, Collator: c, Unoptimized: true})
	if err != nil {
		return nil, err
	}
	return &pipelineUpdate{p: p}, nil
}

// Apply runs the pipeline on doc. A result without _id keeps the
// document's; one with another _id fails with ImmutableField (66). There
// is no delta: the oplog diffs the two documents, as MongoDB does for
// pipeline updates.
func (u *pipelineUpdate) Apply(doc bson.Raw, _ int, insert bool) (bson.Raw, []byte, bool, error) {
	out, err := u.p.Run(&oneDoc{doc: doc}).Next()
	if err != nil {
		return nil, nil, false, err
	}
	if out == nil {
		out = bson.Raw(bsoncore.NewDocumentBuilder().Build())
	}
	if id, err := doc.LookupErr("_id"); err == nil {
		got, err := out.LookupErr("_id")
		switch {
		case err != nil:
			out = withID(id, out)
		case !bytes.Equal(got.Value, id.Value) || got.Type != id.Type:
			return nil, nil, false, mongoerr.New(mongoerr.ImmutableField,
				"Performing an update on the path '_id' would modify the immutable field '_id'")
		}
	}
	// An upsert's new document is checked by the upsert (checkUpsertSize).
	if !insert && len(out) > MaxDocumentSize {
		return nil, nil, false, mongoerr.New(mongoerr.UpdateResultTooLarge, "Resulting document after update is larger than %d", MaxDocumentSize)
	}
	return out, nil, !bytes.Equal(out, doc), nil
}

// withID returns doc with the _id element first.
func withID(id bson.RawValue, doc bson.Raw) bson.Raw {
	start, out := bsoncore.AppendDocumentStart(make([]byte, 0, len(doc)+len(id.Value)+8))
	out = rawdoc.AppendElement(out, "_id", id)
	out = append(out, doc[4:len(doc)-1]...)
	out, _ = bsoncore.AppendDocumentEnd(out, start)
	return out
}

// oneDoc is a pipeline source of a single document.
type oneDoc struct {
	doc  bson.Raw
	done bool
}

func (o *oneDoc) Next() (bson.Raw, error) {
	if o.done {
		return nil, nil
	}
	o.done = true
	return o.doc, nil
}

func (o *oneDoc) Close() error { return nil }
