package commands

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/engine"
	"github.com/folio-db/folio/internal/mongoerr"
)

// checkPipelineCollation refuses an aggregate whose collation (the one it
// names, else its collection's default) is not simple when a stage left
// after the engine's scan could compare strings: the leading $match and
// $sort run in the scan under the collation, but the aggregation stages
// and expressions do not follow collations yet. Stages that compare
// nothing ($limit, $skip, $count, $unset) and a $group by a constant
// counting or summing numbers run as they are.
func checkPipelineCollation(c *engine.Collection, doc bson.Raw, stages []bson.Raw) error {
	var coll *collation.Collator
	var err error
	switch {
	case doc != nil:
		coll, err = collation.Parse(doc)
	case c != nil:
		coll = c.DefaultCollator()
	}
	if err != nil || coll == nil {
		return err
	}
	for _, st := range stages {
		if !collationFree(st) {
			return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the stage %s with a collation other than simple yet", Name(st))
		}
	}
	return nil
}

// collationFree reports whether a stage's result is the same under every
// collation.
func collationFree(st bson.Raw) bool {
	switch Name(st) {
	case "$limit", "$skip", "$count", "$unset":
		return true
	case "$group":
		g, ok := st.Index(0).Value().DocumentOK()
		if !ok {
			return false
		}
		elems, _ := g.Elements()
		for _, el := range elems {
			v := el.Value()
			if el.Key() == "_id" {
				if v.Type != bson.TypeNull && v.Type != bson.TypeInt32 && v.Type != bson.TypeInt64 && v.Type != bson.TypeDouble {
					return false
				}
				continue
			}
			acc, ok := v.DocumentOK()
			if !ok {
				return false
			}
			a, err := acc.IndexErr(0)
			if err != nil || a.Key() != "$sum" && a.Key() != "$count" {
				return false
			}
			if av := a.Value(); a.Key() == "$sum" && av.Type != bson.TypeInt32 && av.Type != bson.TypeInt64 && av.Type != bson.TypeDouble {
				return false
			}
		}
		return true
	}
	return false
}
