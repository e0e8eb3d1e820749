package update

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// checkTopLevelDollars applies MongoDB's storage rule for the top-level
// fields of an updated or replacement document that start with '$'
// (validateDollarPrefixElement): only a DBRef's $ref, $id and $db may,
// in that order ($ref a string followed by $id, $db a string after $id);
// any other fails with DollarPrefixedFieldName. names are the fields to
// check, those the update wrote.
func checkTopLevelDollars(doc bson.Raw, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return checkDollars(doc, func(k string) bool { return slices.Contains(names, k) }, "")
}

// CheckUpsertedID applies to the fields of id, the document an upsert's
// new document or a replacement has as its _id, the rule
// checkTopLevelDollars applies to a replacement's top-level fields:
// MongoDB's storage validation of a whole new document (scanDocument)
// checks _id's fields as top-level ones. Its error names the field's path
// from _id.
func CheckUpsertedID(id bson.Raw) error {
	return checkDollars(id, func(string) bool { return true }, "_id.")
}

// checkDollars checks each field of doc that starts with '$' and that
// take accepts, with its siblings; prefix is doc's path. A document with
// no such field is read once and nothing is allocated.
func checkDollars(doc bson.Raw, take func(string) bool, prefix string) error {
	found := false
	for it := rawdoc.Iterate(doc); !found; {
		k, _, ok := it.Next()
		if !ok {
			return nil
		}
		found = len(k) > 0 && k[0] == '$' && take(string(k))
	}
	var keys []string
	var types []bson.Type
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		keys, types = append(keys, string(k)), append(types, v.Type)
	}
	for i, k := range keys {
		if len(k) > 0 && k[0] == '$' && take(k) {
			if err := checkDollarField(keys, types, i, prefix); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDollarField checks the field keys[i], which starts with '$', with
// its siblings; prefix is the path of the document holding them.
func checkDollarField(keys []string, types []bson.Type, i int, prefix string) error {
	name, j := keys[i], i
	if name == "$db" {
		if types[j] != bson.TypeString {
			return mongoerr.New(mongoerr.InvalidDBRef, "The DBRef $db field must be a String, not a %s", values.TypeName(types[j]))
		}
		if j--; j < 0 || keys[j] != "$id" {
			return mongoerr.New(mongoerr.InvalidDBRef, "Found $db field without a $id before it, which is invalid.")
		}
		name = "$id"
	}
	if name == "$id" {
		if j--; j < 0 || keys[j] != "$ref" {
			return mongoerr.New(mongoerr.InvalidDBRef, "Found $id field without a $ref before it, which is invalid.")
		}
		name = "$ref"
	}
	if name != "$ref" {
		return dollarFieldAt(keys[i], prefix+keys[i])
	}
	if types[j] != bson.TypeString {
		return mongoerr.New(mongoerr.InvalidDBRef, "The DBRef $ref field must be a String, not a %s", values.TypeName(types[j]))
	}
	if j+1 >= len(keys) || keys[j+1] != "$id" {
		return mongoerr.New(mongoerr.InvalidDBRef, "The DBRef $ref field must be followed by a $id field")
	}
	return nil
}
