package update

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// compileReplacement accepts a replacement document: no top-level field may
// start with '$' but a DBRef's (MongoDB 5.0+ storage rules for
// replacements, checkTopLevelDollars), and _id must be storable. A second _id is refused when the replacement is applied, as
// MongoDB's storage validation of the new document does.
func compileReplacement(spec bson.Raw) (*Update, error) {
	elems, _ := spec.Elements()
	ids := 0
	var dollars []string
	for _, e := range elems {
		if k := e.Key(); len(k) > 0 && k[0] == '$' {
			dollars = append(dollars, k)
		}
		if e.Key() == "_id" {
			ids++
			if err := checkIDType(rawNode(e.Value())); err != nil {
				return nil, err
			}
		}
	}
	if err := checkTopLevelDollars(spec, dollars); err != nil {
		return nil, err
	}
	return &Update{replacement: spec, repeatedID: ids > 1}, nil
}

// applyReplacement replaces doc with the replacement. The original _id is
// kept, first, when the replacement has none; a replacement _id must equal
// the original one. For an upsert's insert, doc is the seed: its _id is
// kept and its other fields are not.
func (u *Update) applyReplacement(doc bson.Raw) (bson.Raw, error) {
	if u.repeatedID {
		return nil, mongoerr.New(mongoerr.BadValue, "Can't have multiple _id fields in one document")
	}
	orig, origErr := doc.LookupErr("_id")
	id, err := u.replacement.LookupErr("_id")
	if err == nil {
		if origErr == nil && values.Compare(id, orig) != 0 {
			return nil, mongoerr.New(mongoerr.ImmutableField,
				"After applying the update, the (immutable) field '_id' was found to have been altered to %s",
				values.ShellElement("_id", id))
		}
		return slices.Clone(u.replacement), nil
	}
	if origErr != nil {
		return slices.Clone(u.replacement), nil
	}
	idx, out := bsoncore.AppendDocumentStart(make([]byte, 0, len(u.replacement)+len(orig.Value)+8))
	out = bsoncore.AppendHeader(out, bsoncore.Type(orig.Type), "_id")
	out = append(out, orig.Value...)
	out = append(out, u.replacement[4:len(u.replacement)-1]...)
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	return out, nil
}
