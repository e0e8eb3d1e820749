package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
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

// maxSubPipelineDepth bounds nested $lookup/$unionWith/$facet pipelines,
// as MongoDB's kMaxSubPipelineDepth does.
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
	depth  int
}

// sub returns a parser for a nested pipeline.
func (p *parser) sub(w where, noColl bool, scope *expr.Scope) (*parser, error) {
	if p.depth+1 > maxSubPipelineDepth {
		return nil, mongoerr.New(mongoerr.SubPipelineDepthExceeded, "Maximum number of nested sub-pipelines exceeded. Limit is %d", maxSubPipelineDepth)
	}
	return &parser{opts: p.opts, scope: scope, where: w, noColl: noColl, depth: p.depth + 1}, nil
}

// unimplementedStages are MongoDB stage names Folio does not implement.
var unimplementedStages = map[string]bool{
	"$changeStream": true, "$currentOp": true, "$listSessions": true,
	"$listLocalSessions": true, "$search": true, "$searchMeta": true,
	"$vectorSearch": true, "$listSearchIndexes": true, "$shardedDataDistribution": true,
	"$changeStreamSplitLargeEvent": true, "$listSampledQueries": true,
}

// pipeline parses a list of stage documents.
func (p *parser) pipeline(docs []bson.Raw) ([]stage, error) {
	var out []stage
	for i, doc := range docs {
		elems, err := doc.Elements()
		if err != nil || len(elems) != 1 {
			return nil, mongoerr.New(mongoerr.StageSpecNotSingleField, "A pipeline stage specification object must contain exactly one field.")
		}
		name, arg := elems[0].Key(), elems[0].Value()
		if err := p.checkPosition(name, i, len(docs)); err != nil {
			return nil, err
		}
		s, err := p.stage(name, arg)
		if err != nil {
			return nil, err
		}
		if m, ok := s.(*matchStage); ok && (i > 0 || p.where != topLevel) {
			if ts, _ := m.filter.Text(); ts != nil {
				return nil, mongoerr.New(mongoerr.TextMatchNotFirst, "$match with $text is only allowed as the first pipeline stage")
			}
		}
		// $sort followed by $limit keeps only the top documents.
		if l, ok := s.(*limitStage); ok && len(out) > 0 {
			if srt, ok := out[len(out)-1].(*sortStage); ok && (srt.limit == 0 || l.n < srt.limit) {
				srt.limit = l.n
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// checkPosition applies MongoDB's rules on where a stage may appear.
func (p *parser) checkPosition(name string, i, n int) error {
	if i == 0 && p.noColl && name != "$documents" {
		return mongoerr.New(mongoerr.InvalidNamespace, "{aggregate: 1} is not valid for '%s'; a collection is required.", name)
	}
	switch name {
	case "$changeStream":
		// A leading $changeStream is the command's (commands/changestream.go).
		if i != 0 {
			return mongoerr.New(mongoerr.StageMustBeFirst, "%s is only valid as the first stage in a pipeline", name)
		}
	case "$out", "$merge":
		switch p.where {
		case inFacet:
			return mongoerr.New(mongoerr.FacetStageNotAllowed, "%s is not allowed to be used within a $facet stage", name)
		case inLookup:
			return mongoerr.New(mongoerr.LookupSubPipelineStageNotAllowed, "%s is not allowed within a $lookup's sub-pipeline", name)
		case inUnion:
			return mongoerr.New(mongoerr.UnionWithSubPipelineStageNotAllowed, "%s is not allowed within a $unionWith's sub-pipeline", name)
		}
		if i != n-1 {
			return mongoerr.New(mongoerr.StageMustBeLast, "%s can only be the final stage in the pipeline", name)
		}
	case "$collStats", "$indexStats", "$planCacheStats", "$documents", "$currentOp", "$listLocalSessions", "$listSessions":
		if p.where == inFacet {
			return mongoerr.New(mongoerr.FacetStageNotAllowed, "%s is not allowed to be used within a $facet stage", name)
		}
		if i != 0 {
			return mongoerr.New(mongoerr.StageMustBeFirst, "%s is only valid as the first stage in a pipeline", name)
		}
		if name == "$documents" && !p.noColl {
			return mongoerr.New(mongoerr.InvalidNamespace, "$documents' is not allowed in user requests against a collection; use {aggregate: 1}")
		}
	case "$facet":
		if p.where == inFacet {
			return mongoerr.New(mongoerr.FacetStageNotAllowed, "$facet is not allowed to be used within a $facet stage")
		}
	case "$geoNear":
		// The collection scan runs its search (TakePushdown); a
		// sub-pipeline's first stage reads no collection scan here.
		if i != 0 || p.where != topLevel {
			return mongoerr.New(mongoerr.StageMustBeFirst, "$geoNear is only valid as the first stage in a pipeline")
		}
	}
	return nil
}

// stage parses one stage.
func (p *parser) stage(name string, arg bson.RawValue) (stage, error) {
	switch name {
	case "$match":
		return p.parseMatch(arg)
	case "$geoNear":
		return parseGeoNear(arg)
	case "$skip":
		return parseSkip(arg)
	case "$limit":
		return parseLimit(arg)
	case "$count":
		return parseCount(arg)
	case "$sample":
		return parseSample(arg)
	case "$project":
		return p.parseProject(arg)
	case "$addFields", "$set":
		return p.parseAddFields(name, arg)
	case "$unset":
		return parseUnset(arg)
	case "$replaceRoot":
		return p.parseReplaceRoot(arg)
	case "$replaceWith":
		return p.parseReplaceWith(arg)
	case "$group":
		return p.parseGroup(arg)
	case "$sortByCount":
		return p.parseSortByCount(arg)
	case "$bucket":
		return p.parseBucket(arg)
	case "$bucketAuto":
		return p.parseBucketAuto(arg)
	case "$sort":
		st, err := parseSort(arg)
		if c := p.opts.Collator; err == nil && c != nil {
			st.(*sortStage).sort = st.(*sortStage).sort.Collated(c)
		}
		return st, err
	case "$unwind":
		return parseUnwind(arg)
	case "$lookup":
		return p.parseLookup(arg)
	case "$unionWith":
		return p.parseUnionWith(arg)
	case "$facet":
		return p.parseFacet(arg)
	case "$out":
		return p.parseOut(arg)
	case "$merge":
		return p.parseMerge(arg)
	case "$collStats":
		return p.parseCollStats(arg)
	case "$indexStats":
		return p.parseIndexStats(arg)
	case "$planCacheStats":
		return p.parsePlanCacheStats(arg)
	case "$documents":
		return p.parseDocuments(arg)
	case "$graphLookup":
		return p.parseGraphLookup(arg)
	case "$redact":
		return p.parseRedact(arg)
	case "$setWindowFields":
		return p.parseSetWindowFields(arg)
	case "$fill":
		return p.parseFill(arg)
	case "$densify":
		return p.parseDensify(arg)
	case "$_internalUnpackBucket":
		return parseUnpackBucket(arg)
	}
	if unimplementedStages[name] {
		return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the %s stage yet", name)
	}
	return nil, mongoerr.New(mongoerr.UnknownPipelineStage, "Unrecognized pipeline stage name: '%s'", name)
}

// subPipeline reads an array of stage documents.
func subPipeline(v bson.RawValue, errCode mongoerr.Code, what string) ([]bson.Raw, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(errCode, "%s must be an array of stages, found %s", what, typeName(v))
	}
	var docs []bson.Raw
	for _, el := range arrayValues(v) {
		if el.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(errCode, "%s must be an array of objects, found an element of type %s", what, typeName(el))
		}
		docs = append(docs, el.Document())
	}
	return docs, nil
}
