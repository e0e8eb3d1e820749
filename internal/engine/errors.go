package engine

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// duplicateIDError is MongoDB's DuplicateKey error for the _id index.
func duplicateIDError(c *Collection, id bson.RawValue) *mongoerr.Error {
	if coll := c.DefaultCollator(); coll != nil {
		return dupKey(c, idIndexName, idKeyPattern, " collation: "+collation.Show(coll.Document()), []string{"_id"}, []bson.RawValue{coll.Transform(id)})
	}
	return dupKey(c, idIndexName, idKeyPattern, "", []string{"_id"}, []bson.RawValue{id})
}

// duplicateKeyError is MongoDB's DuplicateKey error for key k of the unique
// index ix.
func duplicateKeyError(c *Collection, ix *Index, k indexKey) *mongoerr.Error {
	paths := make([]string, len(ix.Fields))
	for i, f := range ix.Fields {
		paths[i] = f.Path
	}
	if ix.coll == nil {
		return dupKey(c, ix.Name, ix.keyPattern(), "", paths, k.vals)
	}
	// A collated index's keys are collation keys, which MongoDB reports
	// with the index's collation.
	vals := make([]bson.RawValue, len(k.vals))
	for i, v := range k.vals {
		vals[i] = ix.coll.Transform(v)
	}
	return dupKey(c, ix.Name, ix.keyPattern(), " collation: "+collation.Show(ix.coll.Document()), paths, vals)
}

// dupKey builds error 11000 with MongoDB's message and its keyPattern and
// keyValue fields.
func dupKey(c *Collection, index string, pattern bson.Raw, coll string, paths []string, vals []bson.RawValue) *mongoerr.Error {
	var shown strings.Builder
	keyValue := bson.D{}
	for i, p := range paths {
		if i > 0 {
			shown.WriteString(", ")
		}
		shown.WriteString(p + ": " + values.Display(vals[i]))
		keyValue = append(keyValue, bson.E{Key: p, Value: vals[i]})
	}
	err := mongoerr.New(mongoerr.DuplicateKey,
		"E11000 duplicate key error collection: %s.%s index: %s%s dup key: { %s }", c.DB, c.Name, index, coll, shown.String())
	err.Extra = bson.D{{Key: "keyPattern", Value: pattern}, {Key: "keyValue", Value: keyValue}}
	return err
}

func sortWriteErrors(werrs []WriteError) {
	slices.SortStableFunc(werrs, func(a, b WriteError) int { return a.Index - b.Index })
}
