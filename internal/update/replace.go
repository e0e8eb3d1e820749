package update

import (
	"bytes"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// compileReplacement accepts any replacement document: MongoDB validates a
// replacement when it applies one (checkReplacement), so a replacement
// that matches no document succeeds whatever it holds.
func compileReplacement(spec bson.Raw) (*Update, error) {
	return &Update{replacement: spec}, nil
}

// checkReplacement is MongoDB's storage validation of a replacement's
// top-level fields (ObjectReplaceExecutor::applyReplacementUpdate runs
// storage_validation::scanDocument before the _id immutability check),
// field by field in order: an _id must be of a storable type and its
// fields follow the top-level '$' rule (CheckUpsertedID), and a second _id
// fails; any other field starting with '$' must be a DBRef's
// (checkTopLevelDollars).
func checkReplacement(spec bson.Raw) error {
	ids := 0
	it := rawdoc.Iterate(spec)
	for {
		k, v, ok := it.Next()
		if !ok {
			return nil
		}
		switch {
		case string(k) == "_id":
			if err := checkIDType(v.Type); err != nil {
				return err
			}
			if v.Type == bson.TypeEmbeddedDocument {
				if err := CheckUpsertedID(v.Value); err != nil {
					return err
				}
			}
			if ids++; ids > 1 {
				return mongoerr.New(mongoerr.BadValue, "Can't have multiple _id fields in one document")
			}
		case len(k) > 0 && k[0] == '$':
			if err := checkTopLevelDollars(spec, []string{string(k)}); err != nil {
				return err
			}
		}
	}
}

// applyReplacement replaces doc with the replacement. The original _id is
// kept, first, when the replacement has none; a replacement _id must equal
// the original one. For an upsert's insert, doc is the seed: its _id is
// kept and its other fields are not. A replacement equal to doc as given
// is MongoDB's no-op and is not validated.
func (u *Update) applyReplacement(doc bson.Raw) (bson.Raw, error) {
	if bytes.Equal(u.replacement, doc) {
		return slices.Clone(u.replacement), nil
	}
	if err := checkReplacement(u.replacement); err != nil {
		return nil, err
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
