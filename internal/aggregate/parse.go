package aggregate

import (
	"math"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// where is the kind of pipeline being parsed: stages such as $out or
// $facet are only allowed in some of them.
type where int

const (
	topLevel where = iota
	inFacet
	inLookup
	inUnion
)

// maxSubPipelineDepth bounds nested $lookup/$unionWith pipelines, as
// MongoDB's internalMaxSubPipelineViewDepth does: one nested deeper fails
// with MaxSubPipelineDepthExceeded. A $facet's pipelines do not count: MongoDB
// parses them in the $facet's own context (Pipeline::parseFacetPipeline),
// not a copy for a sub-pipeline.
const maxSubPipelineDepth = 20

// parser holds what parsing a (sub-)pipeline needs: the options, the
// variables in scope and where the pipeline sits.
type parser struct {
	opts  *Options
	scope *expr.Scope
	where where
	// noColl marks a pipeline without a collection, which must start with
	// $documents.
	noColl bool
	// coll is the collection the pipeline reads: the command's, or the
	// foreign collection of a $lookup's or $unionWith's sub-pipeline
	// (MongoDB gives the sub-pipeline that namespace), which $collStats,
	// $indexStats and $planCacheStats describe.
	coll string
	// facetStage, in a sub-pipeline inside a $facet's pipeline, is the
	// stage of that pipeline ($lookup, $unionWith) it belongs to.
	facetStage string
	depth      int
	// ctx holds the values of the command's let variables, which are
	// constants while the pipeline is parsed.
	ctx *expr.Context
	// textScore is whether the stage being parsed may read {$meta:
	// "textScore"}, which a $facet's sub-pipelines inherit.
	textScore bool
	// geoNear is whether it may read {$meta: "geoNearDistance"} and
	// {$meta: "geoNearPoint"}, which a $facet's sub-pipelines inherit.
	geoNear bool
}

// sub returns a parser for a nested pipeline reading coll.
func (p *parser) sub(w where, noColl bool, coll string, scope *expr.Scope) (*parser, error) {
	depth := p.depth
	if w != inFacet {
		depth++
	}
	if depth > maxSubPipelineDepth {
		return nil, mongoerr.New(mongoerr.MaxSubPipelineDepthExceeded, "Maximum number of nested sub-pipelines exceeded. Limit is %d", maxSubPipelineDepth)
	}
	facetStage := p.facetStage
	if p.where == inFacet {
		switch w {
		case inLookup:
			facetStage = "$lookup"
		case inUnion:
			facetStage = "$unionWith"
		}
	}
	return &parser{opts: p.opts, scope: scope, where: w, noColl: noColl, coll: coll, facetStage: facetStage, depth: depth, ctx: p.ctx, textScore: w == inFacet && p.textScore, geoNear: w == inFacet && p.geoNear}, nil
}

// checkViewNesting parses the stages of the view coll names, when it is
// one, at the depth of this sub-pipeline reading it, for their nesting
// only: MongoDB resolves the views a pipeline involves before parsing it
// and parses a view's stages into the sub-pipeline that reads it, so the
// $lookups, $graphLookups and $unionWiths inside views count toward
// maxSubPipelineDepth. The views' other errors are met when they are read.
// A view whose first stage is a $text search gives the sub-pipeline's
// stages, which follow the view's, the text score to read.
func (p *parser) checkViewNesting(coll string) error {
	if p.opts.Env == nil || coll == "" {
		return nil
	}
	_, stages, isView, err := p.opts.Env.ResolveView(p.opts.DB, coll)
	if err != nil || !isView {
		return nil
	}
	vp := *p
	ss, err := vp.pipeline(stages)
	if err != nil && mongoerr.As(err).Code == mongoerr.MaxSubPipelineDepthExceeded {
		return err
	}
	if err == nil && len(ss) > 0 && isTextMatch(ss[0]) {
		p.textScore = true
	}
	return nil
}

// unavailableMeta is MongoDB's refusal (DepsTracker::setNeedsMetadata,
// 40218) of a stage reading the metadata names that its pipeline cannot
// give: the text score without a leading $text search (text), the
// $geoNear distance and point without a leading $geoNear (geo). It names
// the first in MongoDB's order of metadata types (distance, point, text
// score).
func unavailableMeta(names []string, text, geo bool) error {
	switch {
	case !geo && slices.Contains(names, "geoNearDistance"):
		return errMetaUnavailable("$geoNear distance")
	case !geo && slices.Contains(names, "geoNearPoint"):
		return errMetaUnavailable("$geoNear point")
	case !text && slices.Contains(names, "textScore"):
		return errMetaUnavailable("text score")
	}
	return nil
}

// errMetaUnavailable is DepsTracker's 40218 for the metadata what.
func errMetaUnavailable(what string) error {
	return mongoerr.New(mongoerr.TextScoreUnavailable, "query requires %s metadata, but it is not available", what)
}

// notInFacet are the stages MongoDB refuses in a $facet's pipeline
// (FacetRequirement::kNotAllowed). A $lookup or $unionWith takes the
// strictest requirement of its sub-pipeline's stages
// (StageConstraints::getStrictestConstraints), so one of these anywhere
// below it makes the $facet refuse the $lookup or $unionWith itself.
var notInFacet = map[string]bool{
	"$changeStream": true, "$out": true, "$merge": true, "$facet": true, "$geoNear": true,
	"$collStats": true, "$indexStats": true, "$planCacheStats": true, "$documents": true,
	"$currentOp": true, "$listLocalSessions": true, "$listSessions": true,
}

// unimplementedStages are MongoDB stage names Folio does not implement.
var unimplementedStages = map[string]bool{
	"$changeStream": true, "$currentOp": true, "$listSessions": true,
	"$listLocalSessions": true, "$shardedDataDistribution": true,
	"$listSampledQueries": true, "$listCatalog": true,
	"$listCachedAndActiveUsers": true, "$operationMetrics": true,
}

// atlasSearchStages are the stages of Atlas Search, which MongoDB 7.0's
// community server refuses as Folio does: they need a search index
// service (mongot) neither has.
var atlasSearchStages = map[string]bool{
	"$search": true, "$searchMeta": true, "$vectorSearch": true, "$listSearchIndexes": true,
}

// splitLargeEvent is the stage a change stream may end with (the commands
// layer runs it), refused in any other pipeline.
const splitLargeEvent = "$changeStreamSplitLargeEvent"

// maxPipelineLength is MongoDB's internalPipelineLengthLimit: the most
// stages a pipeline, or a sub-pipeline, may list.
const maxPipelineLength = 1000

// pipeline parses a list of stage documents.
func (p *parser) pipeline(docs []bson.Raw) ([]stage, error) {
	if len(docs) > maxPipelineLength {
		return nil, mongoerr.New(mongoerr.PipelineTooLong, "Pipeline length must be no longer than %d stages.", maxPipelineLength)
	}
	var out []stage
	// textScore: as MongoDB's Pipeline::getDependencies, the stages up to
	// the first that rebuilds its documents ($group and the stages made of
	// one, $bucketAuto, $facet) may read the text score only when the
	// pipeline starts with a $match on $text (or the $facet holding it
	// may): otherwise they fail with 40218 (DepsTracker::setNeedsMetadata).
	// Later stages are not checked; there a document without a score has
	// it missing (ExpressionMeta::evaluate).
	//
	// geoNear: likewise the $geoNear distance and point, available when
	// the pipeline reads a collection through a leading $geoNear
	// (PipelineD::buildInnerQueryExecutorGeoNear makes them available to
	// the dependency analysis, which otherwise has them unavailable); a
	// pipeline reading no collection is not analysed.
	textScore, geoNear := p.textScore, p.geoNear || p.noColl
	defer func(text, geo bool) { p.textScore, p.geoNear = text, geo }(p.textScore, p.geoNear)
	// optimizeErr is the first stage's error of optimizing an expression
	// (expr.OptimizeError), which MongoDB meets once every stage has
	// parsed (Pipeline::optimizePipeline after Pipeline::parse): a later
	// stage's error of parsing comes first.
	var optimizeErr error
	for i, doc := range docs {
		elems, err := doc.Elements()
		if err != nil || len(elems) != 1 {
			return nil, mongoerr.New(mongoerr.StageSpecNotSingleField, "A pipeline stage specification object must contain exactly one field.")
		}
		name, arg := elems[0].Key(), elems[0].Value()
		if err := p.checkPosition(name, i, len(docs)); err != nil {
			return nil, err
		}
		p.textScore, p.geoNear = textScore, geoNear
		s, err := p.stage(name, arg)
		if expr.IsOptimizeError(err) {
			s = failingStage{err}
		}
		if err := deferOptimizeError(&optimizeErr, err); err != nil {
			return nil, err
		}
		if p.facetStage != "" && notInFacet[name] {
			return nil, mongoerr.New(mongoerr.FacetStageNotAllowed, "%s is not allowed to be used within a $facet stage", p.facetStage)
		}
		if i == 0 && isTextMatch(s) {
			textScore = true
		}
		if i == 0 && name == "$geoNear" {
			geoNear = true
		}
		switch name {
		case "$lookup", "$unionWith", "$facet":
			// Their sub-pipelines were checked as they were parsed.
		default:
			if err := unavailableMeta(expr.MetaNames(arg), textScore, geoNear); err != nil {
				if p.where != inLookup && p.where != inUnion {
					return nil, err
				}
				// MongoDB analyses a $lookup's or $unionWith's
				// sub-pipeline as it prepares it to run
				// (lookup_subpipeline_text_score.js: a missing text
				// index of the outer $text search fails first).
				s = failingStage{err}
			}
		}
		switch name {
		case "$group", "$bucket", "$bucketAuto", "$count", "$sortByCount", "$facet":
			textScore, geoNear = true, true
		}
		// As MongoDB (Pipeline::validateCommon), each pipeline may start
		// with a $match on $text: a $lookup's or $unionWith's sub-pipeline
		// reads its collection's text index with it (leadingText); a
		// $facet's has no collection to read (DocumentSourceMatch::setSource).
		if isTextMatch(s) && (i > 0 || p.where == inFacet) {
			return nil, mongoerr.New(mongoerr.TextMatchNotFirst, "$match with $text is only allowed as the first pipeline stage")
		}
		if l, ok := s.(*limitStage); ok {
			limitSort(out, docs, l.n)
		}
		// A $lookup runs the $unwind of its as field right after it
		// itself, as MongoDB's optimizer has it absorb one
		// (DocumentSourceLookUp::doOptimizeAt).
		if u, ok := s.(*unwindStage); ok && len(out) > 0 {
			if l, ok := out[len(out)-1].(*lookupStage); ok && l.unwind == nil && slices.Equal(l.as, u.path) {
				l.unwind, s = u, absorbedStage{}
			}
		}
		out = append(out, s)
	}
	if optimizeErr != nil {
		return nil, optimizeErr
	}
	if err := p.markSortKeys(docs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkPosition applies MongoDB's rules on where a stage may appear.
func (p *parser) checkPosition(name string, i, n int) error {
	if i == 0 && p.noColl && name != "$documents" {
		return mongoerr.New(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for '%s'; a collection is required.", name)
	}
	// In a sub-pipeline, MongoDB's first stage of a change stream, its
	// oplog match, is refused wherever it stands.
	const oplogMatch = "$_internalChangeStreamOplogMatch"
	if p.where == inFacet && notInFacet[name] {
		if name == "$changeStream" {
			name = oplogMatch
		}
		return mongoerr.New(mongoerr.FacetStageNotAllowed, "%s is not allowed to be used within a $facet stage", name)
	}
	switch name {
	case "$changeStream":
		switch p.where {
		case inLookup:
			return mongoerr.New(mongoerr.LookupSubPipelineStageNotAllowed, "%s is not allowed within a $lookup's sub-pipeline", oplogMatch)
		case inUnion:
			return mongoerr.New(mongoerr.UnionWithSubPipelineStageNotAllowed, "%s is not allowed within a $unionWith's sub-pipeline", oplogMatch)
		}
		// A leading $changeStream is the command's (commands/changestream.go).
		if i != 0 {
			return mongoerr.New(mongoerr.StageMustBeFirst, "%s is only valid as the first stage in a pipeline", name)
		}
	case "$out", "$merge":
		if p.where == inUnion {
			return mongoerr.New(mongoerr.UnionWithSubPipelineStageNotAllowed, "%s is not allowed within a $unionWith's sub-pipeline", name)
		}
		if i != n-1 {
			return mongoerr.New(mongoerr.StageMustBeLast, "%s can only be the final stage in the pipeline", name)
		}
		// In a $lookup's sub-pipeline the position is checked first, as
		// MongoDB does (out_in_lookup_not_allowed.js).
		if p.where == inLookup {
			return mongoerr.New(mongoerr.LookupSubPipelineStageNotAllowed, "%s is not allowed within a $lookup's sub-pipeline", name)
		}
	case "$collStats", "$indexStats", "$planCacheStats", "$documents", "$currentOp", "$listLocalSessions", "$listSessions":
		if i != 0 {
			return mongoerr.New(mongoerr.StageMustBeFirst, "%s is only valid as the first stage in a pipeline", name)
		}
		// A sub-pipeline reads its $lookup's or $unionWith's collection,
		// the namespace these stages' lite parse checks
		// (unionWith_invalid_usage.js).
		if (name == "$listLocalSessions" || name == "$listSessions") && (p.where == inLookup || p.where == inUnion) && !p.noColl {
			if err := SessionsNamespace(name, p.opts.DB, p.coll); err != nil {
				return err
			}
		}
		// MongoDB 7.0 refuses $documents in a pipeline on a collection,
		// not in a $lookup's or $unionWith's sub-pipeline naming one
		// (SERVER-94144 did, after 7.0), which then reads no collection.
		if name == "$documents" && !p.noColl && p.where == topLevel {
			return mongoerr.New(mongoerr.InvalidNamespace, "$documents' is not allowed in user requests against a collection; use {aggregate: 1}")
		}
	case "$geoNear":
		// MongoDB allows $geoNear first in a pipeline, a $lookup's or
		// $unionWith's too, whose read of the collection runs its search
		// (TakePushdown, runtime.findNear). Inside a $facet, it refuses
		// the $lookup or $unionWith (pipeline).
		if i != 0 {
			return mongoerr.New(mongoerr.StageMustBeFirst, "$geoNear is only valid as the first stage in a pipeline")
		}
	}
	return nil
}

// SessionsNamespace checks the namespace db.coll (coll empty for
// {aggregate: 1}) a $listLocalSessions or $listSessions stage (name)
// reads, as their lite parse does: the first runs only on {aggregate: 1},
// the second only on config.system.sessions; else InvalidNamespace.
func SessionsNamespace(name, db, coll string) error {
	switch {
	case name == "$listLocalSessions" && coll != "":
		return mongoerr.New(mongoerr.InvalidNamespace, "$listLocalSessions must be run against the database with {aggregate: 1}, not a collection")
	case name == "$listSessions" && (db != "config" || coll != "system.sessions"):
		return mongoerr.New(mongoerr.InvalidNamespace, "$listSessions may only be run against config.system.sessions")
	}
	return nil
}

// stage parses one stage.
func (p *parser) stage(name string, arg bson.RawValue) (stage, error) {
	if parse, ok := stageParsers[name]; ok {
		return parse(p, arg)
	}
	if unimplementedStages[name] {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the %s stage yet", name)
	}
	if atlasSearchStages[name] {
		return nil, mongoerr.New(mongoerr.SearchOnlyOnAtlas, "%s stage is only allowed on MongoDB Atlas", name)
	}
	if name == splitLargeEvent {
		if d, ok := arg.DocumentOK(); !ok || len(d) > 5 {
			return nil, mongoerr.New(mongoerr.SplitStageSpecNotEmpty, "$changeStreamSplitLargeEvent spec should be an empty object")
		}
		return nil, mongoerr.New(mongoerr.IllegalOperation, "$changeStreamSplitLargeEvent can only be used in a $changeStream pipeline")
	}
	return nil, unknownStage(name)
}

func unknownStage(name string) error {
	return mongoerr.New(mongoerr.UnknownPipelineStage, "Unrecognized pipeline stage name: '%s'", name)
}

// stageParser parses a stage's argument.
type stageParser func(p *parser, arg bson.RawValue) (stage, error)

// stageParsers are the parsers of the stages Folio implements, by name
// (set in init: they parse sub-pipelines through stage).
var stageParsers map[string]stageParser

func init() {
	plain := func(parse func(bson.RawValue) (stage, error)) stageParser {
		return func(_ *parser, arg bson.RawValue) (stage, error) { return parse(arg) }
	}
	stageParsers = map[string]stageParser{
		"$match":       (*parser).parseMatch,
		"$geoNear":     (*parser).parseGeoNear,
		"$skip":        plain(parseSkip),
		"$limit":       plain(parseLimit),
		"$count":       plain(parseCount),
		"$sample":      plain(parseSample),
		"$project":     (*parser).parseProject,
		"$addFields":   func(p *parser, arg bson.RawValue) (stage, error) { return p.parseAddFields("$addFields", arg) },
		"$set":         func(p *parser, arg bson.RawValue) (stage, error) { return p.parseAddFields("$set", arg) },
		"$unset":       plain(parseUnset),
		"$replaceRoot": (*parser).parseReplaceRoot,
		"$replaceWith": (*parser).parseReplaceWith,
		"$group":       (*parser).parseGroup,
		"$sortByCount": (*parser).parseSortByCount,
		"$bucket":      (*parser).parseBucket,
		"$bucketAuto":  (*parser).parseBucketAuto,
		"$sort": func(p *parser, arg bson.RawValue) (stage, error) {
			st, err := parseSort(arg)
			if c := p.opts.Collator; err == nil && c != nil {
				st.(*sortStage).sort = st.(*sortStage).sort.Collated(c)
			}
			return st, err
		},
		"$unwind":                plain(parseUnwind),
		"$lookup":                (*parser).parseLookup,
		"$unionWith":             (*parser).parseUnionWith,
		"$facet":                 (*parser).parseFacet,
		"$out":                   (*parser).parseOut,
		"$merge":                 (*parser).parseMerge,
		"$collStats":             (*parser).parseCollStats,
		"$indexStats":            (*parser).parseIndexStats,
		"$planCacheStats":        (*parser).parsePlanCacheStats,
		"$documents":             (*parser).parseDocuments,
		"$graphLookup":           (*parser).parseGraphLookup,
		"$redact":                (*parser).parseRedact,
		"$setWindowFields":       (*parser).parseSetWindowFields,
		"$fill":                  (*parser).parseFill,
		"$densify":               (*parser).parseDensify,
		"$_internalUnpackBucket": plain(parseUnpackBucket),
		"$_unpackBucket":         plain(parseExternalUnpackBucket),
		computeGeoDistance:       plain(parseGeoDistance),
		applyOplogUpdate:         plain(parseApplyOplogUpdate),
		// Registered in every MongoDB build, used by its tests.
		"$_internalInhibitOptimization": plain(parseInhibitOptimization),
	}
}

// CheckStageNames fails with UnknownPipelineStage (40324) at the first
// stage whose name MongoDB does not have, as MongoDB does when it first
// reads a pipeline's stage names, before it parses the stages (an update's
// pipeline, the stages after $changeStream).
func CheckStageNames(stages []bson.Raw) error {
	for _, st := range stages {
		name := rawdoc.FirstKey(st)
		if _, ok := stageParsers[name]; !ok && !unimplementedStages[name] && !atlasSearchStages[name] && name != splitLargeEvent {
			return unknownStage(name)
		}
	}
	return nil
}

// subPipeline reads an array of stage documents.
func subPipeline(v bson.RawValue, errCode mongoerr.Code, what string) ([]bson.Raw, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(errCode, "%s must be an array of stages, found %s", what, typeName(v))
	}
	docs, bad := stageDocs(v)
	if bad != nil {
		return nil, mongoerr.New(errCode, "%s must be an array of objects, found an element of type %s", what, typeName(*bad))
	}
	return docs, nil
}

// pipelineOption reads a 'pipeline' option as MongoDB's
// parsePipelineFromBSON does: an array of objects, else TypeMismatch.
func pipelineOption(v bson.RawValue) ([]bson.Raw, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "'pipeline' option must be specified as an array")
	}
	docs, bad := stageDocs(v)
	if bad != nil {
		return nil, mongoerr.New(mongoerr.TypeMismatch, "Each element of the 'pipeline' array must be an object")
	}
	return docs, nil
}

// stageDocs returns the documents of an array of stages, or the first
// element that is not a document.
func stageDocs(v bson.RawValue) ([]bson.Raw, *bson.RawValue) {
	var docs []bson.Raw
	for _, el := range arrayValues(v) {
		if el.Type != bson.TypeEmbeddedDocument {
			return nil, &el
		}
		docs = append(docs, el.Document())
	}
	return docs, nil
}

// limitSort gives the $sort before a $limit of n among out, the stages
// parsed so far (from docs), the limit: it keeps only its top documents.
// As MongoDB's DocumentSourceSort::doOptimizeAt, the $limit reaches back
// over $skip stages, adding their counts (k+n for $skip k), and over the
// stages that pass each document on as one document
// (canSwapWithSkippingOrLimitingStage: the single-document
// transformations, and $lookup and $graphLookup without an $unwind of
// their own); a sum past an int64 limits nothing.
func limitSort(out []stage, docs []bson.Raw, n int64) {
	for at := len(out) - 1; at >= 0; at-- {
		switch st := out[at].(type) {
		case *sortStage:
			if st.limit == 0 || n < st.limit {
				st.limit = n
			}
			return
		case *skipStage:
			if n > math.MaxInt64-st.n {
				return
			}
			n += st.n
			continue
		}
		if !oneToOne(out[at], docs[at]) {
			return
		}
	}
}

// oneToOne reports whether stage st (parsed from spec) passes each input
// document on as one output document, which a $limit or $skip may move
// ahead of (MongoDB's canSwapWithSkippingOrLimitingStage): the
// single-document transformations, and $lookup and $graphLookup without an
// $unwind they run themselves.
func oneToOne(st stage, spec bson.Raw) bool {
	if l, ok := st.(*lookupStage); ok {
		return l.unwind == nil
	}
	switch spec.Index(0).Key() {
	case "$project", "$addFields", "$set", "$unset", "$replaceRoot", "$replaceWith", "$graphLookup":
		return true
	}
	return false
}

// absorbedStage stands in the pipeline for a stage whose work the stage
// before it does (a $lookup's $unwind): it passes its input on.
type absorbedStage struct{}

func (absorbedStage) run(in Source, _ *runtime) Source { return in }

// failingStage fails as it runs.
type failingStage struct{ err error }

func (f failingStage) run(in Source, _ *runtime) Source { return &failingSource{in: in, err: f.err} }

type failingSource struct {
	in  Source
	err error
}

func (f *failingSource) Next() (bson.Raw, error) { return nil, f.err }

func (f *failingSource) Close() error { return f.in.Close() }
