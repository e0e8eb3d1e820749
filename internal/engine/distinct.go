package engine

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// Distinct returns the distinct values at the dotted path key among the
// documents a find (filter, hint) returns, in MongoDB's comparison order.
// Arrays on the way are traversed; an array at the end of the path
// contributes its elements, not itself. An index led by key whose keys
// decide the filter is read one entry per value (see distinctScan).
func (e *Engine) Distinct(db, coll, key string, o FindOptions) ([]bson.RawValue, error) {
	if key == "" {
		return nil, mongoerr.New(mongoerr.FieldPathEmpty, "FieldPath cannot be constructed with empty string")
	}
	if vals, ok, err := e.distinctScan(db, coll, key, o, opStatsOf(o.Ctx), nil); ok || err != nil {
		return vals, err
	}
	cur, err := e.Find(db, coll, o)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	parts := strings.Split(key, ".")
	collator, _ := CommandCollator(e.lookup(o.Txn, db, coll), o.Collation)
	set := newDistinctSet(collator)
	for {
		doc, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			break
		}
		rawdoc.AllElementsAlongPath(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, parts, func(name string, v bson.RawValue) {
			if err == nil {
				err = set.add(name, v)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return set.sorted()
}
