package aggregate

import (
	"bytes"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/sorter"
)

// windowStage is $setWindowFields: the input is sorted by partition (the
// value of partitionBy, missing as null) then sortBy, as MongoDB's
// implicit $sort does (spilling with allowDiskUse); each partition is then
// held whole (see docBuffer: past the stage's limit, with allowDiskUse,
// on disk) and every output field computed over its window of it. The
// outputs of a partition stay in memory. Without allowDiskUse what the
// stage holds is bounded by internalDocumentSourceSetWindowFieldsMaxMemoryBytes
// (5414201 past it, MongoDB's check after each document it outputs); with
// it the partition spills past that limit and the outputs are bounded by
// the process budget alone (MongoDB bounds its window functions' state
// instead, which Folio, computing a partition's outputs at once, does not
// have).
type windowStage struct {
	partition *expr.Expr // nil: the whole input is one partition
	sort      *query.Sort
	// sortField is the path of a sortBy of one field ("" otherwise) and
	// sortDir its direction; sortValue reads that field as an expression
	// does, for range windows and the functions that need a position.
	sortField string
	sortDir   int
	sortValue *expr.Expr
	outputs   []*windowOutput
}

// windowOutput is one field of output: where it goes and its function.
type windowOutput struct {
	path []string
	fn   windowFunc
}

func (p *parser) parseSetWindowFields(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $setWindowFields stage specification must be an object, found %s", typeName(arg))
	}
	s := &windowStage{}
	var output bson.RawValue
	constArray := false
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "partitionBy":
			e, err := expr.Compile(f.val, p.scope)
			if err != nil {
				return nil, err
			}
			if e.IsConstant() {
				// one partition; an array is refused once the outputs
				// are read (document_source_set_window_fields::create)
				constArray = e.Constant().Type == bson.TypeArray
				continue
			}
			s.partition = e
		case "sortBy":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$setWindowFields.sortBy' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			srt, err := query.CompileSortPattern(f.val.Document())
			if err != nil {
				return nil, err
			}
			if srt.Empty() {
				return nil, mongoerr.New(mongoerr.SortSpecEmpty, "$sort stage must have at least one sort key")
			}
			if srt.NeedsRandVal() {
				return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support $setWindowFields sorted by {$meta: \"randVal\"} yet")
			}
			if c := p.opts.Collator; c != nil {
				srt = srt.Collated(c)
			}
			s.sort = srt
			if fields, dirs := srt.Fields(); len(fields) == 1 {
				s.sortField, s.sortDir = fields[0], dirs[0]
				// A rank's value is the sortBy's: its field, or for
				// {$meta: "textScore"} or {$meta: "geoNearDistance"}
				// that expression (MongoDB's
				// ExpressionFromRankAccumulator takes the sort part's
				// expression).
				value := stringValue("$" + fields[0])
				if srt.ByMeta() {
					value = f.val.Document().Index(0).Value()
				}
				if s.sortValue, err = expr.Compile(value, p.scope); err != nil {
					return nil, err
				}
			}
		case "output":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$setWindowFields.output' is the wrong type '%s', expected type 'object'", typeName(f.val))
			}
			output = f.val
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$setWindowFields.%s' is an unknown field.", f.key)
		}
	}
	if output.Type == 0 {
		return nil, mongoerr.MissingField("$setWindowFields.output")
	}
	var seen []string
	for _, f := range fieldsOf(output.Value) {
		// MongoDB's FieldRefSet refuses an output path equal to, inside or
		// holding one before it, each checked before its function is read.
		for _, prev := range seen {
			if prev == f.key || isPathPrefix(prev, f.key) || isPathPrefix(f.key, prev) {
				return nil, mongoerr.New(mongoerr.WindowOutputConflictingPaths, "$setWindowFields 'output' specification contains two conflicting paths")
			}
		}
		seen = append(seen, f.key)
		if err := expr.CheckFieldPath(f.key); err != nil {
			return nil, err
		}
		fn, err := p.parseWindowFunc(s, f.key, f.val)
		if err != nil {
			return nil, err
		}
		s.outputs = append(s.outputs, &windowOutput{path: splitPath(f.key), fn: fn})
	}
	if constArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "An expression used to partition cannot evaluate to value of type array")
	}
	return s, nil
}

func (s *windowStage) run(in Source, rt *runtime) Source {
	return &windowSource{in: in, stage: s, rt: rt}
}

// windowSource sorts its input on the first Next, then computes one
// partition at a time.
type windowSource struct {
	in      Source
	stage   *windowStage
	rt      *runtime
	sorter  *sorter.Sorter
	sorted  Source // the input in partition and sortBy order
	next    bson.Raw
	nextMet docsrc.Meta // next's metadata
	nextKey []byte
	acct    *sorter.Account
	part    *docBuffer        // the partition being output
	results [][]bson.RawValue // its outputs, per output field then position
	pos     int               // the next position to output
	meta    docsrc.Meta       // the metadata of the document output last
	started bool
	done    bool
}

// sortedEntries serves a sorter's entries as a Source, through sortedPass:
// they are read after the input's guard. Each read makes the entry's
// metadata the current one, as the guard does.
type sortedEntries struct {
	next func() (sorter.Entry, bool, error)
	meta *docsrc.Meta
}

func (s sortedEntries) Next() (bson.Raw, error) {
	e, ok, err := s.next()
	if !ok || err != nil {
		return nil, err
	}
	*s.meta = e.Meta
	return e.Doc, nil
}

func (s sortedEntries) Meta() docsrc.Meta { return *s.meta }

func (s sortedEntries) Close() error { return nil }

// partitionKey is the order-preserving encoding of doc's partition value
// (missing as null); arrays cannot partition.
func (s *windowStage) partitionKey(doc bson.Raw, rt *runtime) ([]byte, error) {
	if s.partition == nil {
		return nil, nil
	}
	v, err := s.partition.Eval(rt.ectx, doc)
	if err != nil {
		return nil, err
	}
	if v.Type == bson.TypeArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "An expression used to partition cannot evaluate to value of type array")
	}
	return rt.opts.Collator.ValueKey(nullIfMissing(v)), nil
}

// account is the memory of one partition and its outputs: the stage's
// limit binds without allowDiskUse, the process-wide budget always.
func (w *windowSource) account() *sorter.Account {
	limit := w.rt.windowMemoryLimit()
	if w.rt.opts.AllowDiskUse {
		limit = math.MaxInt64
	}
	return sorter.NewAccount(limit, w.rt.opts.Budget)
}

// overMemory is the error of the stage wanting need bytes more than its
// account grants: 5414201 past the stage's limit, the budget's refusal
// otherwise.
func (w *windowSource) overMemory(need int64) error {
	if used := w.acct.Used() + need; used > w.acct.Limit() {
		return mongoerr.New(mongoerr.WindowMemoryLimitExceeded,
			"Exceeded memory limit in DocumentSourceSetWindowFields, used %d bytes but max allowed is %d", used, w.acct.Limit())
	}
	return w.rt.refused("$setWindowFields")
}

func (w *windowSource) start() error {
	w.started = true
	w.acct = w.account()
	s, rt := w.stage, w.rt
	if s.partition == nil && s.sort == nil {
		w.sorted = w.in
		return nil
	}
	// The sort is MongoDB's generated $sort stage, under a $sort's limit.
	w.sorter = sorter.New(sorter.Options{
		MaxMemory: rt.sortMemoryLimit(), AllowDisk: rt.opts.AllowDiskUse, TempDir: rt.opts.TempDir, Budget: rt.opts.Budget,
	})
	var keys *sorter.SortKey
	if s.sort != nil {
		keys = sorter.NewSortKey(s.sort)
	}
	for {
		doc, err := w.in.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			break
		}
		key, err := s.partitionKey(doc, rt)
		if err != nil {
			return err
		}
		meta := docsrc.MetaOf(w.in)
		if keys != nil {
			sk, err := keys.OfMeta(doc, meta)
			if err != nil {
				return err
			}
			key = append(key, sk...)
		}
		if err := w.sorter.Add(sorter.Entry{Key: key, Doc: doc, Meta: meta}); err != nil {
			return err
		}
	}
	next, err := sortedPass(w.sorter, rt)
	if err != nil {
		return err
	}
	w.sorted = sortedEntries{next, rt.ectx.Meta}
	return nil
}

// readPartition reads the documents of the next partition.
func (w *windowSource) readPartition() (*docBuffer, error) {
	part := newDocBuffer(w.rt, w.acct, "$setWindowFields")
	part.limit, part.over = w.rt.windowMemoryLimit(), w.overMemory
	if w.next != nil {
		if err := part.add(w.next, w.nextMet); err != nil {
			return part, err
		}
	}
	for {
		doc, err := w.sorted.Next()
		if err != nil {
			return part, err
		}
		if doc == nil {
			w.done, w.next = true, nil
			return part, nil
		}
		key, err := w.stage.partitionKey(doc, w.rt)
		if err != nil {
			return part, err
		}
		meta := docsrc.MetaOf(w.sorted)
		if part.len() > 0 && string(key) != string(w.nextKey) {
			w.next, w.nextMet, w.nextKey = doc, meta, key
			return part, nil
		}
		w.nextKey = key
		if err := part.add(doc, meta); err != nil {
			return part, err
		}
	}
}

func (w *windowSource) Next() (bson.Raw, error) {
	if !w.started {
		if err := w.start(); err != nil {
			return nil, err
		}
	}
	for w.part == nil || w.pos >= w.part.len() {
		if w.done {
			return nil, nil
		}
		w.release()
		w.acct = w.account()
		var err error
		if w.part, err = w.readPartition(); err != nil {
			return nil, err
		}
		if w.part.len() == 0 {
			continue
		}
		if w.results, err = w.stage.compute(w.part, w.rt, w.acct, w.overMemory); err != nil {
			return nil, err
		}
		w.pos = 0
	}
	d, err := w.part.at(w.pos)
	if err != nil {
		return nil, err
	}
	// MongoDB sets the outputs as $addFields sets computed fields (through
	// arrays), each output a constant (document_source_set_window_fields.cpp).
	for i, o := range w.stage.outputs {
		d = setComputedPath(d, o.path, nullIfMissing(w.results[i][w.pos]))
	}
	w.meta = w.part.meta(w.pos)
	w.pos++
	return d, nil
}

// Meta is the metadata of the document output last: its input
// document's, which MongoDB keeps on the document it adds the outputs to
// (lost when the partition spilled).
func (w *windowSource) Meta() docsrc.Meta { return w.meta }

// release drops the partition output last.
func (w *windowSource) release() {
	if w.part != nil {
		w.part.close()
		w.part, w.results = nil, nil
	}
	if w.acct != nil {
		w.acct.Release()
	}
}

func (w *windowSource) Close() error {
	if w.sorter != nil {
		w.sorter.Close()
	}
	w.release()
	return w.in.Close()
}

// compute computes the output fields of one partition: per field, a value
// per position, held in acct (over's error past it).
func (s *windowStage) compute(docs *docBuffer, rt *runtime, acct *sorter.Account, over func(need int64) error) ([][]bson.RawValue, error) {
	part := &partition{docs: docs, stage: s, rt: rt}
	results := make([][]bson.RawValue, len(s.outputs))
	for i, o := range s.outputs {
		results[i] = make([]bson.RawValue, docs.len())
		if err := o.fn.compute(part, results[i]); err != nil {
			return nil, err
		}
		for _, v := range results[i] {
			if n := int64(len(v.Value)) + 24; !acct.Grow(n) {
				return nil, over(n)
			}
		}
	}
	return results, nil
}

// partition is the documents of one partition, in sortBy order, with
// their sortBy values read once.
type partition struct {
	docs   *docBuffer
	stage  *windowStage
	rt     *runtime
	sorted []bson.RawValue
	steps  int
}

// step counts a unit of a window function's work (a document read or a
// window position) and fails with the operation's interruption every
// stepsPerCheck units: the functions run after the stage's input ended,
// past its guard, and a sliding window costs its width per position.
func (p *partition) step() error {
	p.steps++
	if p.steps%stepsPerCheck != 0 {
		return nil
	}
	return mongoerr.Interruption(p.rt.opts.Ctx)
}

const stepsPerCheck = 256

// sortValues are the values of the one sortBy field, per document.
func (p *partition) sortValues() ([]bson.RawValue, error) {
	if p.sorted != nil || p.stage.sortValue == nil {
		return p.sorted, nil
	}
	p.sorted = make([]bson.RawValue, p.docs.len())
	for i := range p.sorted {
		d, err := p.doc(i)
		if err != nil {
			return nil, err
		}
		v, err := p.stage.sortValue.Eval(p.rt.ectx, d)
		if err != nil {
			return nil, err
		}
		p.sorted[i] = p.own(v)
	}
	return p.sorted, nil
}

// doc is the document at position i, counted as a step; its metadata
// becomes the one {$meta: ...} reads.
func (p *partition) doc(i int) (bson.Raw, error) {
	if err := p.step(); err != nil {
		return nil, err
	}
	*p.rt.ectx.Meta = p.docs.meta(i)
	return p.docs.at(i)
}

// own returns v, copied out of its document when the partition is
// spilled, so that keeping it does not keep a whole document read back
// from disk.
func (p *partition) own(v bson.RawValue) bson.RawValue {
	if p.docs.spilled() {
		v.Value = bytes.Clone(v.Value)
	}
	return v
}
