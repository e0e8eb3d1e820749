package engine

import (
	"bytes"
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestPrepareInsert checks the stored form of an inserted document: _id
// first (moved there, or generated as an ObjectId when missing), the other
// fields in their order, and MongoDB's refusals (a second _id, a forbidden
// _id type, too deep a document).
func TestPrepareInsert(t *testing.T) {
	raw := func(d bson.D) bson.Raw {
		b, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// limit nests maxStorageDepth levels, the most MongoDB stores; deep
	// one more.
	limit := bson.D{{Key: "x", Value: 1}}
	for range maxStorageDepth - 1 {
		limit = bson.D{{Key: "x", Value: limit}}
	}
	deep := bson.D{{Key: "x", Value: limit}}
	// emptyBelow nests maxStorageDepth levels with leaf, which counts as
	// no level when empty, as the innermost value.
	emptyBelow := func(leaf any) bson.D {
		d := bson.D{{Key: "x", Value: leaf}}
		for range maxStorageDepth - 1 {
			d = bson.D{{Key: "x", Value: d}}
		}
		return d
	}
	for _, tc := range []struct {
		name string
		in   bson.D
		want bson.D // nil: the _id is generated, then in's fields
		code mongoerr.Code
	}{
		{"id first", bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 2}}, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 2}}, 0},
		{"id moved first", bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: "x"}, {Key: "b", Value: 2}},
			bson.D{{Key: "_id", Value: "x"}, {Key: "a", Value: 1}, {Key: "b", Value: 2}}, 0},
		{"id last", bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: 3}}, bson.D{{Key: "_id", Value: 3}, {Key: "a", Value: 1}}, 0},
		{"id generated", bson.D{{Key: "a", Value: 1}, {Key: "b", Value: bson.D{{Key: "c", Value: 2}}}}, nil, 0},
		{"id generated, empty", bson.D{}, nil, 0},
		{"two ids", bson.D{{Key: "_id", Value: 1}, {Key: "_id", Value: 2}}, nil, mongoerr.BadValue},
		{"two ids, later", bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: bson.A{}}, {Key: "_id", Value: 2}}, nil, mongoerr.BadValue},
		{"array id", bson.D{{Key: "_id", Value: bson.A{1}}}, nil, mongoerr.InvalidIdField},
		{"array id, moved", bson.D{{Key: "a", Value: 1}, {Key: "_id", Value: bson.A{1}}}, nil, mongoerr.InvalidIdField},
		{"too deep", deep, nil, mongoerr.Overflow},
		{"too deep in an array", bson.D{{Key: "a", Value: 1}, {Key: "y", Value: bson.A{limit}}}, nil, mongoerr.Overflow},
		{"deepest stored", append(bson.D{{Key: "_id", Value: 1}}, limit...), append(bson.D{{Key: "_id", Value: 1}}, limit...), 0},
		{"too deep and two ids", bson.D{{Key: "_id", Value: 1}, {Key: "_id", Value: 2}, {Key: "x", Value: limit}}, nil, mongoerr.Overflow},
		{"$ in id", bson.D{{Key: "_id", Value: bson.D{{Key: "$a", Value: 1}}}}, nil, mongoerr.DollarPrefixedFieldName},
		{"$ in id, deeper", bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: bson.A{bson.D{{Key: "b", Value: 1}, {Key: "$c", Value: 1}}}}}}}, nil, mongoerr.DollarPrefixedFieldName},
		{"$ in id, code scope", bson.D{{Key: "_id", Value: bson.D{{Key: "f", Value: bson.CodeWithScope{Code: "x", Scope: bson.D{{Key: "$s", Value: 1}}}}}}}, nil, mongoerr.DollarPrefixedFieldName},
		{"dbref id", bson.D{{Key: "_id", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: 1}, {Key: "$db", Value: "d"}, {Key: "x", Value: 1}}}},
			bson.D{{Key: "_id", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: 1}, {Key: "$db", Value: "d"}, {Key: "x", Value: 1}}}}, 0},
		{"dbref id nested", bson.D{{Key: "_id", Value: bson.D{{Key: "r", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: bson.D{{Key: "$x", Value: 1}}}}}}}},
			bson.D{{Key: "_id", Value: bson.D{{Key: "r", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: bson.D{{Key: "$x", Value: 1}}}}}}}}, 0},
		{"dbref id, $ref not first", bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: 1}, {Key: "$ref", Value: "c"}, {Key: "$id", Value: 1}}}}, nil, mongoerr.DollarPrefixedFieldName},
		{"dbref id, no $id", bson.D{{Key: "_id", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "x", Value: 1}}}}, nil, mongoerr.DollarPrefixedFieldName},
		{"dbref id, $ref not a string", bson.D{{Key: "_id", Value: bson.D{{Key: "$ref", Value: 1}, {Key: "$id", Value: 1}}}}, nil, mongoerr.DollarPrefixedFieldName},
		{"dbref id, $db not a string", bson.D{{Key: "_id", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: 1}, {Key: "$db", Value: 1}}}}, nil, mongoerr.DollarPrefixedFieldName},
		{"$ outside id", bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "$b", Value: 1}}}},
			bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "$b", Value: 1}}}}, 0},
		{"deepest stored, empty document below", append(bson.D{{Key: "_id", Value: 1}}, emptyBelow(bson.D{})...),
			append(bson.D{{Key: "_id", Value: 1}}, emptyBelow(bson.D{})...), 0},
		{"deepest stored, empty array below", append(bson.D{{Key: "_id", Value: 1}}, emptyBelow(bson.A{})...),
			append(bson.D{{Key: "_id", Value: 1}}, emptyBelow(bson.A{})...), 0},
		{"too deep, non-empty document below", emptyBelow(bson.D{{Key: "e", Value: bson.D{}}}), nil, mongoerr.Overflow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := raw(tc.in)
			got, id, err := prepareInsert(in)
			if tc.code != 0 {
				if !mongoerr.Is(err, tc.code) {
					t.Fatalf("error %v, want code %d", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("stored form %x: %v", []byte(got), err)
			}
			want := tc.want
			if want == nil {
				if id.Type != bson.TypeObjectID {
					t.Fatalf("generated _id %v, want an ObjectId", id)
				}
				want = append(bson.D{{Key: "_id", Value: id.ObjectID()}}, tc.in...)
			}
			if !bytes.Equal(got, raw(want)) {
				t.Errorf("stored %v, want %v", got, raw(want))
			}
			if !bytes.Equal(id.Value, got.Lookup("_id").Value) {
				t.Errorf("returned _id %v, stored %v", id, got.Lookup("_id"))
			}
		})
	}
}

// TestCheckUpdatedDepth: an updated document may nest maxStorageDepth
// levels, not counting empty documents and arrays, as MongoDB's storage
// validation of an update's result (storage_validation.cpp's scanDocument
// checks the level of each element; an empty object has none).
func TestCheckUpdatedDepth(t *testing.T) {
	nest := func(levels int, leaf any) bson.D {
		d := bson.D{{Key: "x", Value: leaf}}
		for range levels - 1 {
			d = bson.D{{Key: "x", Value: d}}
		}
		return d
	}
	for _, tc := range []struct {
		name string
		doc  bson.D
		ok   bool
	}{
		{"deepest", nest(maxStorageDepth, 1), true},
		{"one level too deep", nest(maxStorageDepth+1, 1), false},
		{"deepest, empty document below", nest(maxStorageDepth, bson.D{}), true},
		{"deepest, empty array below", nest(maxStorageDepth, bson.A{}), true},
		{"deepest, array of an empty document below", nest(maxStorageDepth-1, bson.A{bson.D{}}), true},
		{"one level too deep, empty document below", nest(maxStorageDepth+1, bson.D{}), false},
		{"empty", bson.D{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bson.Marshal(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			err = checkUpdatedDepth(b)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !mongoerr.Is(err, mongoerr.Overflow) {
				t.Fatalf("error %v, want Overflow", err)
			}
		})
	}
}

// TestCheckUpserted: an upsert's new document is validated as MongoDB's
// upsert stage validates it (scanDocument): the fields of an _id document
// as top-level fields of a replacement, naming their path from _id, and
// the nesting limit with the update's message; top-level '$' fields pass.
func TestCheckUpserted(t *testing.T) {
	nest := func(levels int) bson.D {
		d := bson.D{{Key: "x", Value: 1}}
		for range levels - 1 {
			d = bson.D{{Key: "x", Value: d}}
		}
		return d
	}
	for _, tc := range []struct {
		name string
		doc  bson.D
		code mongoerr.Code
		msg  string
	}{
		{"$ in _id", bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: 1}, {Key: "$x", Value: 1}}}}, mongoerr.DollarPrefixedFieldName,
			"The dollar ($) prefixed field '$x' in '_id.$x' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith."},
		{"_id a DBRef", bson.D{{Key: "_id", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "$id", Value: 1}, {Key: "$db", Value: "d"}}}}, 0, ""},
		{"_id a DBRef without $id", bson.D{{Key: "_id", Value: bson.D{{Key: "$ref", Value: "c"}, {Key: "x", Value: 1}}}}, mongoerr.InvalidDBRef,
			"The DBRef $ref field must be followed by a $id field"},
		{"_id $id without $ref", bson.D{{Key: "_id", Value: bson.D{{Key: "$id", Value: 1}}}}, mongoerr.InvalidDBRef,
			"Found $id field without a $ref before it, which is invalid."},
		{"top-level $", bson.D{{Key: "_id", Value: 1}, {Key: "$x", Value: 1}}, 0, ""},
		{"$ below _id's fields, left to prepareInsert", bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$b", Value: 1}}}}}}, 0, ""},
		{"deepest", append(bson.D{{Key: "_id", Value: 1}}, nest(maxStorageDepth)...), 0, ""},
		{"too deep", append(bson.D{{Key: "_id", Value: 1}}, nest(maxStorageDepth+1)...), mongoerr.Overflow,
			"Document exceeds maximum nesting depth of 180"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bson.Marshal(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			err = checkUpserted(b)
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var me *mongoerr.Error
			if !errors.As(err, &me) || me.Code != tc.code || me.Msg != tc.msg {
				t.Fatalf("error %v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}
