package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/rawdoc"
)

// hintChoice is a resolved hint: an index, the _id order, or none.
type hintChoice struct {
	ix      *Index
	idOrder bool
	natural int // $natural direction, 0 when not hinted
}

// idHint is a hint of the _id index: the document store in _id order, or
// a sharded collection's _id index.
func idHint(c *Collection) hintChoice {
	if c != nil && c.shard != nil {
		return hintChoice{ix: c.shard.idIndex}
	}
	return hintChoice{idOrder: true}
}

// resolveHint finds the index a hint names by name or key pattern. MongoDB
// fails a hint that names no index, or a hidden one (hidden indexes are not
// offered to the planner), with BadValue (2), and a key pattern that several
// indexes share with IndexNotFound (27).
func resolveHint(c *Collection, hint bson.RawValue, strict bool) (hintChoice, error) {
	if hint.Type == 0 {
		return hintChoice{}, nil
	}
	notFound := mongoerr.New(mongoerr.BadValue, "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index")
	switch hint.Type {
	case bson.TypeString:
		name := hint.StringValue()
		// a clustered collection's clustered index goes by its own name
		// (MongoDB's hintMatchesClusterKey), and it has no _id index
		idName := idIndexName
		if c != nil && c.Clustered() {
			idName = c.Options.ClusteredName()
		}
		if name == idName {
			return idHint(c), nil
		}
		if c != nil {
			if ix := c.FindIndex(name); ix != nil && ix.plannable(strict) {
				return hintChoice{ix: ix}, nil
			}
		}
		return hintChoice{}, notFound
	case bson.TypeEmbeddedDocument:
		key := hint.Document()
		elems, err := key.Elements()
		if err != nil {
			return hintChoice{}, notFound
		}
		if len(elems) == 0 {
			return hintChoice{}, nil
		}
		if err := query.CheckNatural(key, "hint"); err != nil {
			return hintChoice{}, err
		}
		if len(elems) == 1 && elems[0].Key() == "$natural" {
			dir := 1
			if numberValue(elems[0].Value()) < 0 {
				dir = -1
			}
			return hintChoice{natural: dir}, nil
		}
		if SameKeyPattern(key, idKeyPattern) {
			return idHint(c), nil
		}
		var found []*Index
		if c != nil {
			for _, ix := range c.Indexes() {
				if ix.plannable(strict) && SameKeyPattern(ix.keyPattern(), key) {
					found = append(found, ix)
				}
			}
		}
		switch len(found) {
		case 0:
			return hintChoice{}, notFound
		case 1:
			return hintChoice{ix: found[0]}, nil
		}
		return hintChoice{}, mongoerr.New(mongoerr.IndexNotFound,
			"error processing query: planner returned error :: caused by :: Hint matched multiple indexes, must hint by index name. Matched: %s and %s",
			found[0].Spec, found[1].Spec)
	}
	return hintChoice{}, mongoerr.New(mongoerr.FailedToParse, "Hint must be a string or an object")
}

// checkNaturalSort applies MongoDB's rules to a find's sort holding
// $natural, before the sort is parsed: it is {$natural: ±1} alone, and a
// hint beside it must be $natural in the same direction (BadValue).
func checkNaturalSort(sort bson.Raw, hint bson.RawValue) error {
	dir := rawdoc.Lookup(sort, "$natural")
	if err := query.CheckNatural(sort, "sort"); err != nil || dir.Type == 0 {
		return err
	}
	if hint.Type == 0 || hint.Type == bson.TypeEmbeddedDocument && rawdoc.Len(hint.Value) == 0 {
		return nil
	}
	h := bson.RawValue{}
	if hint.Type == bson.TypeEmbeddedDocument {
		h = rawdoc.Lookup(hint.Value, "$natural")
	}
	switch {
	case h.Type == 0:
		return mongoerr.New(mongoerr.BadValue, "index hint not allowed with $natural sort order")
	case int(numberValue(h)) != int(numberValue(dir)):
		return mongoerr.New(mongoerr.BadValue, "$natural hint must be in the same direction as $natural sort order")
	}
	return nil
}

// checkNearNatural applies MongoDB's rule that a $near (one, top-level)
// takes no $natural sort nor $natural hint (BadValue,
// CanonicalQuery::isValid).
func checkNearNatural(f *query.Filter, sort bson.Raw, hint bson.RawValue) error {
	near, err := f.GeoNear()
	if err != nil || near == nil {
		return err
	}
	if rawdoc.Lookup(sort, "$natural").Type != 0 && query.CheckNatural(sort, "sort") == nil {
		return mongoerr.New(mongoerr.BadValue, "geoNear expression not allowed with $natural sort order")
	}
	if hint.Type == bson.TypeEmbeddedDocument && rawdoc.Lookup(hint.Value, "$natural").Type != 0 {
		return mongoerr.New(mongoerr.BadValue, "geoNear expression not allowed with $natural hint")
	}
	return nil
}
