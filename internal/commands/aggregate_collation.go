package commands

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// aggregateCollator is an aggregate's collation: the one it names (doc),
// else its collection's default (c nil: none); nil for the simple one.
func aggregateCollator(c *engine.Collection, doc bson.Raw) (*collation.Collator, error) {
	switch {
	case doc != nil:
		return collation.Parse(doc)
	case c != nil:
		return c.DefaultCollator(), nil
	}
	return nil, nil
}

// checkPipelineCollation refuses, under a collation other than simple, a
// stage left after the engine's scan that would not follow it. The scan
// (the leading $match and $sort) follows it; so do $match without $expr,
// $sort, and $group's and $sortByCount's grouping when their keys are
// field paths or constants and their accumulators compare nothing. Stages
// that compare nothing run as they are. Aggregation expressions and
// sub-pipelines ($lookup, $graphLookup, $facet, $unionWith) do not follow
// collations yet.
func checkPipelineCollation(coll *collation.Collator, stages []bson.Raw) error {
	if coll == nil {
		return nil
	}
	for _, st := range stages {
		if !collationFree(st) {
			return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the stage %s with a collation other than simple yet", Name(st))
		}
	}
	return nil
}

// collationFree reports whether a stage follows the pipeline's collation
// (or compares nothing).
func collationFree(st bson.Raw) bool {
	arg := st.Index(0).Value()
	switch Name(st) {
	case "$limit", "$skip", "$count", "$unset", "$sort", "$unwind":
		return true
	case "$match":
		d, ok := arg.DocumentOK()
		return ok && !strings.Contains(string(d), "$expr\x00")
	case "$project":
		d, ok := arg.DocumentOK()
		if !ok {
			return false
		}
		elems, _ := d.Elements()
		for _, el := range elems {
			switch v := el.Value(); v.Type {
			case bson.TypeBoolean, bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
			default:
				return false
			}
		}
		return true
	case "$sortByCount":
		return plainKey(arg)
	case "$group":
		g, ok := arg.DocumentOK()
		if !ok {
			return false
		}
		elems, _ := g.Elements()
		for _, el := range elems {
			v := el.Value()
			if el.Key() == "_id" {
				if !plainKey(v) {
					return false
				}
				continue
			}
			acc, ok := v.DocumentOK()
			if !ok {
				return false
			}
			a, err := acc.IndexErr(0)
			if err != nil {
				return false
			}
			switch a.Key() {
			case "$sum", "$avg", "$count", "$first", "$last", "$push":
			default:
				return false
			}
			if av := a.Value(); av.Type != bson.TypeEmbeddedDocument && !plainKey(av) {
				return false
			} else if av.Type == bson.TypeEmbeddedDocument && a.Key() != "$count" {
				return false
			}
		}
		return true
	}
	return false
}

// plainKey reports whether a group key is a field path, a constant other
// than an operator expression, or a document of such: its evaluation
// compares nothing.
func plainKey(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		elems, _ := v.Document().Elements()
		for _, el := range elems {
			if strings.HasPrefix(el.Key(), "$") || !plainKey(el.Value()) {
				return false
			}
		}
		return true
	case bson.TypeArray:
		return false
	case bson.TypeString:
		return !strings.HasPrefix(v.StringValue(), "$$")
	}
	return true
}
