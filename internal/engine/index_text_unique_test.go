package engine

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestUniqueTextIndex: MongoDB builds a unique text index
// (IndexCatalogImpl::_isSpecOk refuses unique for a wildcard index only).
// Its keys are a document's terms, each with its score, between the
// index's other fields, so a second document holding a term with the same
// score (and the same other fields) is a duplicate, named by the key
// pattern's fields (_fts the term, _ftsx the score); the same term with
// another score is not.
func TestUniqueTextIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   string
		docs  []string // inserted before the index is built
		after []string // inserted after, one by one
		msg   string   // the error of the build or of the last insert
	}{
		{name: "same term, same score", key: `{"s": "text"}`,
			after: []string{`{"_id": 1, "s": "hello world"}`, `{"_id": 2, "s": "hello world"}`},
			msg:   `E11000 duplicate key error collection: test.u index: k dup key: { _fts: "hello", _ftsx: 0.75 }`},
		{name: "same term, another score", key: `{"s": "text"}`,
			after: []string{`{"_id": 1, "s": "hello world"}`, `{"_id": 2, "s": "hello"}`}},
		{name: "no terms twice", key: `{"s": "text"}`,
			after: []string{`{"_id": 1}`, `{"_id": 2, "s": "the"}`, `{"_id": 3}`}},
		{name: "other fields differ", key: `{"a": 1, "s": "text", "b": 1}`,
			after: []string{`{"_id": 1, "a": 1, "s": "cat", "b": 2}`, `{"_id": 2, "a": 2, "s": "cat", "b": 2}`}},
		{name: "other fields equal", key: `{"a": 1, "s": "text", "b": 1}`,
			after: []string{`{"_id": 1, "a": 1, "s": "cat", "b": 2}`, `{"_id": 2, "a": 1, "s": "cat", "b": 2}`},
			msg:   `E11000 duplicate key error collection: test.u index: k dup key: { a: 1, _fts: "cat", _ftsx: 1.1, b: 2 }`},
		{name: "built over duplicates", key: `{"s": "text"}`,
			docs: []string{`{"_id": 1, "s": "dog"}`, `{"_id": 2, "s": "dog"}`},
			msg:  `E11000 duplicate key error collection: test.u index: k dup key: { _fts: "dog", _ftsx: 1.1 }`},
	} {
		e := newTestEngine(t)
		for _, d := range tc.docs {
			if _, _, err := e.Insert("test", "u", []bson.Raw{ext(t, d)}, true, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := e.CreateIndexes("test", "u", []IndexSpec{{Key: ext(t, tc.key), Name: "k", Unique: true}}, nil)
		for _, d := range tc.after {
			if err != nil {
				break
			}
			var werrs []WriteError
			if _, werrs, err = e.Insert("test", "u", []bson.Raw{ext(t, d)}, true, WriteOptions{}); err == nil && len(werrs) > 0 {
				err = werrs[0].Err
			}
		}
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.msg != "":
			var me *mongoerr.Error
			if !errors.As(err, &me) || me.Code != mongoerr.DuplicateKey || me.Msg != tc.msg {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.msg)
			}
		}
		if len(tc.docs) == 0 {
			mustValidate(t, e, "u")
		}
	}
}
