// Package aggregate runs aggregation pipelines over a stream of documents.
// It implements the stages drivers use for countDocuments ($match, $skip,
// $limit, $count, $group with $sum); MongoDB stages it does not implement
// yet fail with NotImplemented, and unknown stages with MongoDB's 40324.
package aggregate

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// Source is a stream of documents; Next returns nil at the end.
type Source interface {
	Next() (bson.Raw, error)
	Close() error
}

// stage transforms one stream into another.
type stage interface {
	run(in Source) Source
}

// Pipeline is a parsed aggregation pipeline.
type Pipeline struct {
	stages []stage
}

// knownStages are MongoDB stage names Folio does not implement yet.
var knownStages = map[string]bool{
	"$project": true, "$addFields": true, "$set": true, "$unset": true, "$sort": true, "$unwind": true,
	"$lookup": true, "$facet": true, "$bucket": true, "$bucketAuto": true, "$sortByCount": true,
	"$replaceRoot": true, "$replaceWith": true, "$sample": true, "$out": true, "$merge": true,
	"$collStats": true, "$indexStats": true, "$graphLookup": true, "$geoNear": true, "$redact": true,
	"$unionWith": true, "$densify": true, "$fill": true, "$setWindowFields": true, "$documents": true,
	"$changeStream": true, "$currentOp": true, "$listSessions": true, "$planCacheStats": true,
}

// Parse parses the stage documents of a pipeline.
func Parse(stages []bson.Raw) (*Pipeline, error) {
	p := &Pipeline{}
	for _, doc := range stages {
		elems, err := doc.Elements()
		if err != nil || len(elems) != 1 {
			return nil, mongoerr.New(mongoerr.Code(40323), "A pipeline stage specification object must contain exactly one field.")
		}
		name, arg := elems[0].Key(), elems[0].Value()
		var s stage
		switch name {
		case "$match":
			s, err = parseMatch(arg)
		case "$skip":
			s, err = parseSkip(arg)
		case "$limit":
			s, err = parseLimit(arg)
		case "$count":
			s, err = parseCount(arg)
		case "$group":
			s, err = parseGroup(arg)
		default:
			if knownStages[name] {
				return nil, mongoerr.New(mongoerr.NotImplemented, "Folio does not support the %s stage yet", name)
			}
			return nil, mongoerr.New(mongoerr.Code(40324), "Unrecognized pipeline stage name: '%s'", name)
		}
		if err != nil {
			return nil, err
		}
		p.stages = append(p.stages, s)
	}
	return p, nil
}

// Run streams src through the pipeline.
func (p *Pipeline) Run(src Source) Source {
	for _, s := range p.stages {
		src = s.run(src)
	}
	return src
}
