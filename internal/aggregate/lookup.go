package aggregate

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/values"
)

// maxDocumentSize is MongoDB's largest document (16 MiB).
const maxDocumentSize = 16 * 1024 * 1024

// DefaultMaxIntermediateDocBytes is MongoDB's default bound on a document
// a stage builds for the stages after it, which may exceed maxDocumentSize
// as long as what reaches the client does not (100 MiB: $lookup's
// internalLookupStageIntermediateDocumentMaxSizeBytes, $facet's
// internalQueryFacetMaxOutputDocSizeBytes).
const DefaultMaxIntermediateDocBytes = 100 * 1024 * 1024

// lookupStage is $lookup: each document gets, in the array field as, the
// documents of collection from that match it.
//
//   - Equality form (localField, foreignField): a foreign document matches
//     when its foreignField equals the document's localField value or, when
//     that is an array, one of its elements; a missing localField matches
//     like null (foreign documents where the field is null or missing).
//   - Pipeline form (let, pipeline): the pipeline runs over the whole
//     foreign collection with the let variables bound to expressions of the
//     local document.
//   - Both: the equality match selects the foreign documents the pipeline
//     runs over.
//
// Without from, the pipeline must start with $documents.
//
// _internalCollation, when not empty, is the collation of the foreign
// side (the equality match and the sub-pipeline) in place of the
// pipeline's (DocumentSourceLookUp's fromCollator).
type lookupStage struct {
	from string
	// read is the collection the foreign side reads when it is not from:
	// a time series collection's buckets, for a sub-pipeline starting
	// with $geoNear (subTimeseriesGeoNear).
	read         string
	as           []string
	localField   []string
	foreignField string
	letNames     []string
	letExprs     []*expr.Expr
	pipeline     []stage
	// foreignOpts are the options of the foreign side under
	// _internalCollation; nil: the pipeline's.
	foreignOpts *Options
	// unwind is the $unwind of as that follows the stage, which it runs
	// itself (absorbUnwind).
	unwind *unwindStage
}

func (p *parser) parseLookup(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $lookup stage specification must be an object, but found %s", typeName(arg))
	}
	s := &lookupStage{}
	var local, foreign, as string
	var haveFrom, haveLet bool
	var pipeline []bson.Raw
	havePipeline := false
	var let []field
	str := func(f field) (string, error) {
		if f.val.Type != bson.TypeString {
			// MongoDB shows the whole element, name and value, after "found".
			return "", mongoerr.New(mongoerr.FailedToParse, "$lookup argument '%s' must be a string, found %s: %s: %s", f.key, f.key, f.val, typeName(f.val))
		}
		return f.val.StringValue(), nil
	}
	var err error
	// MongoDB's lite parse reads from, then pipeline, before the full parse
	// reads the other arguments.
	fields := fieldsOf(arg.Value)
	liteRank := func(key string) int {
		switch key {
		case "from":
			return 0
		case "pipeline":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(fields, func(a, b field) int { return liteRank(a.key) - liteRank(b.key) })
	for _, f := range fields {
		switch f.key {
		case "from":
			haveFrom = true
			switch f.val.Type {
			case bson.TypeString:
				s.from = f.val.StringValue()
				if err := p.checkForeignNamespace("$lookup", s.from); err != nil {
					return nil, err
				}
			case bson.TypeEmbeddedDocument:
				db, coll, err := namespaceSpec("from", f.val)
				if err != nil {
					return nil, err
				}
				if !lookupFromOtherDB(db, coll) {
					return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup with syntax {from: {db:<>, coll:<>},..} is not supported for db: %s and coll: %s", db, coll)
				}
				return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support $lookup from %s.%s", db, coll)
			default:
				return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup 'from' field must be a string, but found %s", typeName(f.val))
			}
		case "as":
			as, err = str(f)
		case "localField":
			local, err = str(f)
		case "foreignField":
			foreign, err = str(f)
		case "let":
			if f.val.Type != bson.TypeEmbeddedDocument {
				// MongoDB quotes the whole element, name and value.
				return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup argument 'let: %s' must be an object, is type %s", f.val, typeName(f.val))
			}
			let = fieldsOf(f.val.Value)
			haveLet = true
		case "pipeline":
			pipeline, err = pipelineOption(f.val)
			havePipeline = true
		case "_internalCollation":
			if f.val.Type != bson.TypeEmbeddedDocument {
				return nil, mongoerr.New(mongoerr.ExpectedObjectParameter, "invalid parameter: expected an object (_internalCollation)")
			}
			if spec := f.val.Document(); len(spec) > 5 {
				coll, err := collation.Parse(spec)
				if err != nil {
					return nil, err
				}
				o := *p.opts
				o.Collator = coll
				s.foreignOpts = &o
			}
		default:
			return nil, mongoerr.New(mongoerr.FailedToParse, "unknown argument to $lookup: %s", f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	// MongoDB's DocumentSourceLookUp::createFromBson takes an empty as,
	// localField or foreignField for an absent one; without a pipeline it
	// needs both fields and no let (even an empty one). The fields' paths
	// are checked after, as its constructor builds them.
	if as == "" {
		return nil, mongoerr.New(mongoerr.FailedToParse, "must specify 'as' field for a $lookup")
	}
	haveLocal, haveForeign := local != "", foreign != ""
	if havePipeline {
		if haveLocal != haveForeign {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires both or neither of 'localField' and 'foreignField' to be specified")
		}
	} else {
		if !haveLocal || !haveForeign {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified")
		}
		if haveLet {
			return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup with a 'let' argument must also specify 'pipeline'")
		}
	}
	if !haveFrom && !(havePipeline && startsWithDocuments(pipeline)) {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$lookup requires a 'from' field, or a pipeline starting with $documents")
	}
	if err := expr.CheckFieldPath(as); err != nil {
		return nil, err
	}
	s.as = splitPath(as)
	if haveLocal {
		for _, path := range []string{local, foreign} {
			if err := expr.CheckFieldPath(path); err != nil {
				return nil, err
			}
		}
		s.localField, s.foreignField = splitPath(local), foreign
	}
	for _, f := range let {
		if err := expr.ValidateVarName(f.key); err != nil {
			return nil, err
		}
		e, err := expr.Compile(f.val, p.scope)
		if err != nil {
			return nil, err
		}
		s.letNames = append(s.letNames, f.key)
		s.letExprs = append(s.letExprs, e)
	}
	// MongoDB copies the context for the foreign side, a sub-pipeline
	// level, with a pipeline or without (copyForSubPipeline); a view read
	// brings its stages into it.
	scope := p.scope.With(s.letNames...)
	if s.foreignOpts != nil {
		scope = scope.Collated(s.foreignOpts.Collator)
	}
	sp, err := p.sub(inLookup, !haveFrom, s.from, scope)
	if err != nil {
		return nil, err
	}
	if s.foreignOpts != nil {
		sp.opts = s.foreignOpts
	}
	if err := sp.checkViewNesting(s.from); err != nil {
		return nil, err
	}
	if havePipeline {
		// With localField, the equality match comes before the stages.
		read, docs := s.from, pipeline
		if !haveLocal {
			if read, docs, err = sp.subTimeseriesGeoNear(s.from, pipeline); err != nil {
				return nil, err
			}
		}
		if read != s.from {
			s.read = read
		}
		if s.pipeline, err = sp.subPipeline(docs); err != nil {
			return nil, err
		}
		// MongoDB puts the equality match before the pipeline's stages,
		// so that a $text match is no longer first.
		if haveLocal && len(s.pipeline) > 0 && isTextMatch(s.pipeline[0]) {
			return nil, mongoerr.New(mongoerr.TextMatchNotFirst, "$match with $text is only allowed as the first pipeline stage")
		}
		if haveLocal && leadingGeoNear(s.pipeline) != nil {
			return nil, mongoerr.New(mongoerr.StageMustBeFirst, "$geoNear is only valid as the first stage in a pipeline")
		}
	}
	return s, nil
}

// checkForeignNamespace checks the collection a stage ($lookup,
// $graphLookup, $unionWith) reads, in the pipeline's database: a valid
// namespace names a collection, without a null byte, else
// InvalidNamespace.
func (p *parser) checkForeignNamespace(stageName, coll string) error {
	if coll == "" || strings.IndexByte(coll, 0) >= 0 {
		return mongoerr.New(mongoerr.InvalidNamespace, "invalid %s namespace: %s.%s", stageName, p.opts.DB, strings.ToValidUTF8(coll, "\uFFFD"))
	}
	return nil
}

// namespaceSpec reads a {db, coll} namespace document as MongoDB's
// NamespaceSpec IDL does (the from of $lookup and $graphLookup): both
// fields optional strings (null is absent), no other field.
func namespaceSpec(name string, v bson.RawValue) (db, coll string, err error) {
	for _, f := range fieldsOf(v.Value) {
		switch {
		case f.key != "db" && f.key != "coll":
			return "", "", mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s.%s' is an unknown field.", name, f.key)
		case f.val.Type == bson.TypeNull:
		case f.val.Type != bson.TypeString:
			return "", "", mongoerr.WrongType(name+"."+f.key, typeName(f.val), "string")
		case f.key == "db":
			db = f.val.StringValue()
		default:
			coll = f.val.StringValue()
		}
	}
	return db, coll, nil
}

// lookupFromOtherDB reports whether MongoDB's $lookup takes db.coll as a
// {db, coll} from (parseLookupFromAndResolveNamespace): only internal
// namespaces (the oplog, config.cache.chunks.*, the config server's
// config.collections and config.chunks), which Folio does not read this
// way; any other is refused with FailedToParse.
func lookupFromOtherDB(db, coll string) bool {
	switch {
	case db == "local":
		return coll == "oplog.rs"
	case db == "config":
		return strings.HasPrefix(coll, "cache.chunks.") || coll == "collections" || coll == "chunks"
	}
	return false
}

// startsWithDocumentsStage reports whether parsed stages begin with
// $documents, which generates the documents of a sub-pipeline: its
// $lookup or $unionWith reads no collection.
func startsWithDocumentsStage(stages []stage) bool {
	if len(stages) == 0 {
		return false
	}
	_, ok := stages[0].(*documentsStage)
	return ok
}

// startsWithDocuments reports whether a pipeline's first stage is
// $documents.
func startsWithDocuments(docs []bson.Raw) bool {
	if len(docs) == 0 {
		return false
	}
	elems, err := docs[0].Elements()
	return err == nil && len(elems) == 1 && elems[0].Key() == "$documents"
}

func (s *lookupStage) run(in Source, rt *runtime) Source {
	if s.unwind != nil {
		return &lookupUnwindSource{in: in, s: s, rt: rt}
	}
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		matches, err := s.lookup(doc, rt)
		if err != nil {
			return nil, err
		}
		return []bson.Raw{setPath(doc, s.as, buildArray(matches))}, nil
	}}
}

// shown is the stage's spec as explain shows it, as MongoDB's
// DocumentSourceLookUp serializes it there: from and as, then localField
// and foreignField, then let ({} when not given) and pipeline when it has
// one, then the $unwind of as it absorbed as unwinding
// ({preserveNullAndEmptyArrays, includeArrayIndex when given}); the
// values as written.
func (s *lookupStage) shown(spec bson.Raw) bson.D {
	out := bson.D{}
	add := func(key string) bool {
		v, err := spec.LookupErr(key)
		if err == nil {
			out = append(out, bson.E{Key: key, Value: v})
		}
		return err == nil
	}
	add("from")
	add("as")
	add("localField")
	add("foreignField")
	if _, err := spec.LookupErr("pipeline"); err == nil {
		if !add("let") {
			out = append(out, bson.E{Key: "let", Value: bson.D{}})
		}
		add("pipeline")
	}
	if s.unwind != nil {
		unwinding := bson.D{{Key: "preserveNullAndEmptyArrays", Value: s.unwind.preserve}}
		if s.unwind.index != nil {
			unwinding = append(unwinding, bson.E{Key: "includeArrayIndex", Value: strings.Join(s.unwind.index, ".")})
		}
		out = append(out, bson.E{Key: "unwinding", Value: unwinding})
	}
	return out
}

// runCounted is run for explain at executionStats: the stage's reads of
// the foreign collection, its sub-pipeline's included, add their work to
// figures that explain lists after the stage's spec (StageStats.Own).
func (s *lookupStage) runCounted(in Source, rt *runtime) Source {
	fig := &ScanFigures{}
	if rt.opts.Env != nil {
		o := *rt.opts
		o.Env = rt.opts.Env.Counted(fig)
		rt = &runtime{opts: &o, ectx: rt.ectx}
	}
	return &figuredSource{Source: s.run(in, rt), fig: fig}
}

// figuredSource is a stage's output with the figures of its reads.
type figuredSource struct {
	Source
	fig *ScanFigures
}

func (f *figuredSource) explainFigures() bson.D { return f.fig.explainFigures() }

// Meta is the metadata of the document read last.
func (f *figuredSource) Meta() docsrc.Meta { return docsrc.MetaOf(f.Source) }

// lookup finds the foreign documents of doc.
func (s *lookupStage) lookup(doc bson.Raw, rt *runtime) ([]bson.RawValue, error) {
	src, err := s.matches(doc, rt)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	// The matches held until the output document is built are bounded by
	// their total size, as MongoDB bounds them, and count against the
	// process-wide budget; they cannot spill.
	acct := sorter.NewAccount(math.MaxInt64, rt.opts.Budget)
	defer acct.Release()
	var out []bson.RawValue
	var size int64
	for {
		d, err := src.Next()
		if err != nil {
			return nil, err
		}
		if d == nil {
			return out, nil
		}
		// MongoDB (LookUpStage::doGetNext) refuses a match once the
		// approximate sizes of the matches before it total more than
		// internalLookupStageIntermediateDocumentMaxSizeBytes: the last
		// match may take the total past it.
		if limit := rt.lookupMaxBytes(); size > limit {
			return nil, mongoerr.New(mongoerr.LookupResultTooLarge,
				"Total size of documents in %s matching pipeline's $lookup stage exceeds %d bytes", s.from, limit)
		}
		size += lookupMatchSize(d)
		if !acct.Grow(lookupMatchSize(d)) {
			return nil, budgetExceeded("$lookup")
		}
		out = append(out, docValue(d))
	}
}

// matches opens the stream of the foreign documents of doc.
func (s *lookupStage) matches(doc bson.Raw, rt *runtime) (Source, error) {
	var src Source
	var err error
	pipeline := s.pipeline
	vars := make(map[string]bson.RawValue, len(s.letNames))
	for i, e := range s.letExprs {
		v, err := e.Eval(rt.ectx, doc)
		if err != nil {
			return nil, err
		}
		vars[s.letNames[i]] = v
	}
	if s.foreignOpts != nil {
		// The let variables are the local document's, under the
		// pipeline's collation; the foreign side reads under its own.
		// The reads go to rt's Env, which counts them under explain
		// (runCounted).
		fo := *s.foreignOpts
		fo.Env = rt.opts.Env
		rt = &runtime{opts: &fo, ectx: rt.ectx}
	}
	// inner is the runtime of the foreign side: the let variables bound.
	inner := rt.withVars(vars)
	switch {
	case s.from == "" || startsWithDocumentsStage(pipeline):
		// The equality match applies to the documents of the leading
		// $documents stage.
		src = &SliceSource{}
		if s.localField != nil {
			m, err := query.CompileCollated(s.equalityFilter(doc), nil, rt.opts.Collator)
			if err != nil {
				return nil, err
			}
			pipeline = append([]stage{pipeline[0], &matchStage{filter: m}}, pipeline[1:]...)
		}
	case s.localField != nil:
		src, err = rt.find(s.from, s.equalityFilter(doc))
	case leadingGeoNear(pipeline) != nil:
		var g *GeoNear
		if g, err = leadingGeoNear(pipeline).searchFor(inner.ectx); err == nil {
			src, err = rt.findNear(s.foreign(), g)
		}
	default:
		var filter bson.Raw
		if filter, pipeline = leadingText(pipeline); filter == nil {
			filter = scanFilter(pipeline, inner.ectx)
		}
		src, err = rt.find(s.foreign(), filter)
	}
	if err != nil {
		return nil, err
	}
	if pipeline != nil {
		src = runStages(pipeline, src, inner)
	}
	return src, nil
}

// foreign is the collection the foreign side reads.
func (s *lookupStage) foreign() string {
	if s.read != "" {
		return s.read
	}
	return s.from
}

// lookupUnwindSource is a $lookup that unwinds its matches, as MongoDB's
// LookUpStage::unwindResult: one document per match, the match at as (and
// its index at includeArrayIndex), read as the foreign side yields it, so
// that no array of the matches is built nor bounded; a document without
// matches passes with as missing (and a null index) only under
// preserveNullAndEmptyArrays. The results are those of the two stages run
// one after the other.
type lookupUnwindSource struct {
	in  Source
	s   *lookupStage
	rt  *runtime
	doc bson.Raw // the input document being unwound
	// meta is the metadata of doc, which its outputs keep.
	meta    docsrc.Meta
	matches Source // doc's matches; nil between input documents
	n       int64  // the matches of doc returned so far
}

func (u *lookupUnwindSource) Next() (bson.Raw, error) {
	for {
		if u.matches == nil {
			doc, err := u.in.Next()
			if doc == nil || err != nil {
				return nil, err
			}
			if u.matches, err = u.s.matches(doc, u.rt); err != nil {
				return nil, err
			}
			u.doc, u.meta, u.n = doc, docsrc.MetaOf(u.in), 0
		}
		d, err := u.matches.Next()
		if err != nil {
			return nil, err
		}
		if d != nil {
			u.n++
			return u.s.unwind.withIndex(setPath(u.doc, u.s.as, docValue(d)), values.Int64Value(u.n-1)), nil
		}
		err = u.matches.Close()
		u.matches = nil
		if err != nil {
			return nil, err
		}
		if u.n == 0 && u.s.unwind.preserve {
			return u.s.unwind.withIndex(setPath(u.doc, u.s.as, missing), null), nil
		}
	}
}

// Meta is the metadata of the input document of the last output.
func (u *lookupUnwindSource) Meta() docsrc.Meta { return u.meta }

func (u *lookupUnwindSource) Close() error {
	if u.matches != nil {
		u.matches.Close()
	}
	return u.in.Close()
}

// lookupMatchSize is the memory of a held match: its document, its
// RawValue in the slice (with append's slack) and the rounding of its
// allocation. TestLookupAccountingMatchesHeap keeps it within 1.5x of
// the heap.
func lookupMatchSize(d bson.Raw) int64 { return int64(len(d)) + 64 }

// equalityFilter is the query selecting the foreign documents whose
// foreignField equals one of the values at localField (null if none).
// Values are compared with $eq, so a regular expression matches only an
// equal regular expression.
func (s *lookupStage) equalityFilter(doc bson.Raw) bson.Raw {
	vals := valuesAtPath(docValue(doc), s.localField)
	if len(vals) == 0 {
		vals = []bson.RawValue{null}
	}
	start, d := bsoncore.AppendDocumentStart(nil)
	arr, d := bsoncore.AppendArrayElementStart(d, "$or")
	for i, v := range vals {
		eq := buildDoc([]field{{"$eq", v}})
		cond := buildDoc([]field{{s.foreignField, docValue(eq)}})
		d = bsoncore.AppendDocumentElement(d, strconv.Itoa(i), cond)
	}
	d, _ = bsoncore.AppendArrayEnd(d, arr)
	d, _ = bsoncore.AppendDocumentEnd(d, start)
	return d
}

// valuesAtPath lists the values at path in v, as MongoDB's $lookup and
// $graphLookup read localField and connectFromField
// (document_path_support::visitAllValuesAtPath): the first component names
// a field; canonical numeric components right after an array are positions
// in it; a further component looks into the documents of an array (not
// into nested arrays); an array at the end contributes its elements.
func valuesAtPath(v bson.RawValue, path []string) []bson.RawValue {
	if len(path) == 0 {
		if v.Type == bson.TypeArray {
			return arrayValues(v)
		}
		return []bson.RawValue{v}
	}
	if v.Type != bson.TypeEmbeddedDocument {
		return nil
	}
	c, err := v.Document().LookupErr(path[0])
	if err != nil {
		return nil
	}
	path = path[1:]
	for len(path) > 0 && c.Type == bson.TypeArray {
		i := rawdoc.ArrayIndex(path[0])
		if i < 0 {
			break
		}
		el, err := bson.Raw(c.Value).IndexErr(uint(i))
		if err != nil {
			return nil
		}
		c, path = el.Value(), path[1:]
	}
	if len(path) == 0 || c.Type != bson.TypeArray {
		return valuesAtPath(c, path)
	}
	var out []bson.RawValue
	for _, el := range arrayValues(c) {
		if el.Type == bson.TypeEmbeddedDocument {
			out = append(out, valuesAtPath(el, path)...)
		}
	}
	return out
}

// unionWithStage is $unionWith: the input documents, then those of
// another collection run through an optional pipeline.
type unionWithStage struct {
	coll string
	// read is the collection read when it is not coll, as lookupStage's.
	read     string
	pipeline []stage
}

func (p *parser) parseUnionWith(arg bson.RawValue) (stage, error) {
	s := &unionWithStage{}
	switch arg.Type {
	case bson.TypeString:
		s.coll = arg.StringValue()
		sp, err := p.sub(inUnion, false, s.coll, p.scope)
		if err == nil {
			err = sp.checkViewNesting(s.coll)
		}
		if err != nil {
			return nil, err
		}
		return s, p.checkForeignNamespace("$unionWith", s.coll)
	case bson.TypeEmbeddedDocument:
	default:
		return nil, mongoerr.New(mongoerr.FailedToParse, "the $unionWith stage specification must be an object or string, but found %s", typeName(arg))
	}
	var docs []bson.Raw
	haveColl, havePipeline := false, false
	for _, f := range fieldsOf(arg.Value) {
		switch f.key {
		case "coll":
			if f.val.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "BSON field '$unionWith.coll' is the wrong type '%s', expected type 'string'", typeName(f.val))
			}
			s.coll, haveColl = f.val.StringValue(), true
		case "pipeline":
			var err error
			if docs, err = subPipeline(f.val, mongoerr.TypeMismatch, "$unionWith.pipeline"); err != nil {
				return nil, err
			}
			havePipeline = true
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$unionWith.%s' is an unknown field.", f.key)
		}
	}
	if !haveColl && !(havePipeline && startsWithDocuments(docs)) {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$unionWith stage without explicit collection must have a pipeline with $documents as first stage")
	}
	sp, err := p.sub(inUnion, !haveColl, s.coll, p.scope)
	if err != nil {
		return nil, err
	}
	if err := sp.checkViewNesting(s.coll); err != nil {
		return nil, err
	}
	read, docs, err := sp.subTimeseriesGeoNear(s.coll, docs)
	if err != nil {
		return nil, err
	}
	if read != s.coll {
		s.read = read
	}
	if s.pipeline, err = sp.subPipeline(docs); err != nil {
		return nil, err
	}
	if haveColl {
		// MongoDB finds the namespace invalid once the sub-pipeline is
		// parsed, when it reads the collection.
		if err := p.checkForeignNamespace("$unionWith", s.coll); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *unionWithStage) run(in Source, rt *runtime) Source {
	return &unionSource{first: in, open: func() (Source, error) {
		var src Source = &SliceSource{}
		stages := s.pipeline
		if s.coll != "" && !startsWithDocumentsStage(stages) {
			coll := s.coll
			if s.read != "" {
				coll = s.read
			}
			var err error
			if g := leadingGeoNear(stages); g != nil {
				src, err = rt.findNear(coll, &g.search)
			} else {
				var filter bson.Raw
				if filter, stages = leadingText(stages); filter == nil {
					filter = scanFilter(stages, rt.ectx)
				}
				src, err = rt.find(coll, filter)
			}
			if err != nil {
				return nil, err
			}
		}
		return runStages(stages, src, rt), nil
	}}
}

// unionSource yields first, then the source open returns.
type unionSource struct {
	first, second Source
	open          func() (Source, error)
}

func (u *unionSource) Next() (bson.Raw, error) {
	if u.second == nil {
		doc, err := u.first.Next()
		if doc != nil || err != nil {
			return doc, err
		}
		if u.second, err = u.open(); err != nil {
			return nil, err
		}
	}
	return u.second.Next()
}

// Meta is the metadata of the document returned last, as it came: MongoDB's
// $unionWith returns its input's documents and its sub-pipeline's
// unchanged (DocumentSourceUnionWith::doGetNext).
func (u *unionSource) Meta() docsrc.Meta {
	if u.second != nil {
		return docsrc.MetaOf(u.second)
	}
	return docsrc.MetaOf(u.first)
}

func (u *unionSource) Close() error {
	if u.second != nil {
		u.second.Close()
	}
	return u.first.Close()
}
