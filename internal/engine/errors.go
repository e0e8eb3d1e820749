package engine

import (
	"encoding/hex"
	"slices"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// duplicateIDError is MongoDB's DuplicateKey error for the _id index.
func duplicateIDError(c *Collection, id bson.RawValue) *mongoerr.Error {
	if coll := c.DefaultCollator(); coll != nil {
		return dupKey(c, idIndexName, idKeyPattern, coll.Document(), []string{"_id"}, []bson.RawValue{coll.Transform(id)})
	}
	return dupKey(c, idIndexName, idKeyPattern, nil, []string{"_id"}, []bson.RawValue{id})
}

// duplicateKeyError is MongoDB's DuplicateKey error for key k of the unique
// index ix.
func duplicateKeyError(c *Collection, ix *Index, k indexKey) *mongoerr.Error {
	paths := make([]string, len(ix.Fields))
	for i, f := range ix.Fields {
		paths[i] = f.Path
	}
	if ix.text != nil {
		// MongoDB names a key's values by the key pattern's fields: a
		// text index's term is _fts's and its score _ftsx's.
		elems, _ := ix.keyPattern().Elements()
		paths = paths[:0]
		for _, e := range elems {
			paths = append(paths, e.Key())
		}
	}
	if ix.coll == nil {
		return dupKey(c, ix.Name, ix.keyPattern(), nil, paths, k.vals)
	}
	// A collated index's keys are collation keys, which MongoDB reports
	// with the index's collation.
	vals := make([]bson.RawValue, len(k.vals))
	for i, v := range k.vals {
		vals[i] = ix.coll.Transform(v)
	}
	return dupKey(c, ix.Name, ix.keyPattern(), ix.coll.Document(), paths, vals)
}

// dupKey builds error 11000 with MongoDB's message and its extra fields:
// keyPattern, keyValue, and for an index with a collation (coll) the
// collation. A string of the key that may not be UTF-8 (every string under
// a collation, which is a collation key, and any invalid one) is shown in
// lowercase hex, "0x"-prefixed in the message, and hexEncoded lists which
// of keyValue's values are.
func dupKey(c *Collection, index string, pattern bson.Raw, coll bson.Raw, paths []string, vals []bson.RawValue) *mongoerr.Error {
	var shown strings.Builder
	keyValue := bson.D{}
	hexEncoded, anyHex := bson.A{}, false
	for i, p := range paths {
		if i > 0 {
			shown.WriteString(", ")
		}
		v := vals[i]
		hexed := v.Type == bson.TypeString && (coll != nil || !utf8.ValidString(v.StringValue()))
		hexEncoded, anyHex = append(hexEncoded, hexed), anyHex || hexed
		if hexed {
			h := hex.EncodeToString([]byte(v.StringValue()))
			shown.WriteString(p + ": \"0x" + h + "\"")
			keyValue = append(keyValue, bson.E{Key: p, Value: h})
			continue
		}
		shown.WriteString(p + ": " + values.Shell(v))
		keyValue = append(keyValue, bson.E{Key: p, Value: v})
	}
	collShown := ""
	if coll != nil {
		collShown = " collation: " + collation.Show(coll)
	}
	err := mongoerr.New(mongoerr.DuplicateKey,
		"E11000 duplicate key error collection: %s.%s index: %s%s dup key: { %s }", c.DB, c.Name, index, collShown, shown.String())
	err.Extra = bson.D{{Key: "keyPattern", Value: pattern}, {Key: "keyValue", Value: keyValue}}
	if anyHex {
		err.Extra = append(err.Extra, bson.E{Key: "hexEncoded", Value: hexEncoded})
	}
	if coll != nil {
		err.Extra = append(err.Extra, bson.E{Key: "collation", Value: coll})
	}
	return err
}

func sortWriteErrors(werrs []WriteError) {
	slices.SortStableFunc(werrs, func(a, b WriteError) int { return a.Index - b.Index })
}
