package changestream

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/oplog"
)

// TestUpdateDescription: the updateDescription of an update event, from
// the document before and after, through the oplog's $v: 2 diff.
func TestUpdateDescription(t *testing.T) {
	// L is a long string: the documents and sub-documents holding it are
	// larger than their diffs, which MongoDB logs only then.
	for _, tc := range []struct{ old, next, want string }{
		{`{"_id": 1, "p": "L", "a": 1}`, `{"_id": 1, "p": "L", "a": 2}`,
			`{"updatedFields": {"a": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "p": "L", "a": 1, "b": 1}`, `{"_id": 1, "p": "L", "b": 1, "c": "x"}`,
			`{"updatedFields": {"c": "x"}, "removedFields": ["a"], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "s": {"n": 1, "m": "L"}}`, `{"_id": 1, "s": {"n": 2, "m": "L"}}`,
			`{"updatedFields": {"s.n": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "p": "L", "s": {"n": 1, "m": 1}}`, `{"_id": 1, "p": "L", "s": {"n": 2, "m": 1}}`,
			`{"updatedFields": {"s": {"n": 2, "m": 1}}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "p": "L", "arr": [1, 2, 3, 4, 5, 6]}`, `{"_id": 1, "p": "L", "arr": [1, 2, 3, 4, 5, 6, 7]}`,
			`{"updatedFields": {"arr.6": 7}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "p": "L", "arr": [1, 2, 3, 4, 5, 6]}`, `{"_id": 1, "p": "L", "arr": [1, 2, 3, 4]}`,
			`{"updatedFields": {}, "removedFields": [], "truncatedArrays": [{"field": "arr", "newSize": 4}], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "arr": [{"a": 1, "b": "L"}, {"a": 2, "b": "L"}]}`, `{"_id": 1, "arr": [{"a": 1, "b": "L"}, {"a": 3, "b": "L"}]}`,
			`{"updatedFields": {"arr.1.a": 3}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		// a numeric field name after the first, or a dotted one, makes the
		// path ambiguous; an array index, a leading numeric field name or
		// one with a leading zero does not (change_stream_document_diff_parser.cpp)
		{`{"_id": 1, "arr": [{"1": 1, "b": "L"}]}`, `{"_id": 1, "arr": [{"1": 2, "b": "L"}]}`,
			`{"updatedFields": {"arr.0.1": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {"arr.0.1": ["arr", 0, "1"]}}`},
		{`{"_id": 1, "p": "L", "0": 1}`, `{"_id": 1, "p": "L", "0": 2}`,
			`{"updatedFields": {"0": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "o": {"01": 1, "b": "L"}}`, `{"_id": 1, "o": {"01": 2, "b": "L"}}`,
			`{"updatedFields": {"o.01": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "p": "L", "a.b": 1}`, `{"_id": 1, "p": "L", "a.b": 2}`,
			`{"updatedFields": {"a.b": 2}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {"a.b": ["a.b"]}}`},
		{`{"_id": 1, "p": "L", "arr": [{"a": 1, "b": 1}, {"a": 2, "b": 2}]}`, `{"_id": 1, "p": "L", "arr": [{"a": 1, "b": 1}, {"a": 3, "b": 2}]}`,
			`{"updatedFields": {"arr.1": {"a": 3, "b": 2}}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
		{`{"_id": 1, "d": {"0": 1, "p": "L"}}`, `{"_id": 1, "d": {"p": "L"}}`,
			`{"updatedFields": {}, "removedFields": ["d.0"], "truncatedArrays": [], "disambiguatedPaths": {"d.0": ["d", "0"]}}`},
		{`{"_id": 1, "p": "L", "arr": [1, 2]}`, `{"_id": 1, "p": "L", "arr": ["x", "y", "z"]}`,
			`{"updatedFields": {"arr": ["x", "y", "z"]}, "removedFields": [], "truncatedArrays": [], "disambiguatedPaths": {}}`},
	} {
		long := strings.Repeat("*", 64)
		tc.old, tc.next = strings.ReplaceAll(tc.old, `"L"`, `"`+long+`"`), strings.ReplaceAll(tc.next, `"L"`, `"`+long+`"`)
		var old, next bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.old), false, &old); err != nil {
			t.Fatal(err)
		}
		if err := bson.UnmarshalExtJSON([]byte(tc.next), false, &next); err != nil {
			t.Fatal(err)
		}
		o := bson.Raw(oplog.UpdateO(nil, old, next))
		doc := bson.Raw(appendDocWith(func(dst []byte) []byte {
			return appendUpdateDescription(dst, o.Lookup("diff").Document(), true)
		}))
		got := doc.Lookup("updateDescription").Document()
		var want bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tc.want), false, &want); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s → %s:\n got %s\nwant %s", tc.old, tc.next, got, want)
		}
	}
}

func appendDocWith(fill func([]byte) []byte) []byte {
	out := fill([]byte{0, 0, 0, 0})
	out = append(out, 0)
	out[0], out[1], out[2], out[3] = byte(len(out)), byte(len(out)>>8), byte(len(out)>>16), byte(len(out)>>24)
	return out
}
