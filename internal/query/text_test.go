package query

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// A filter holds one $text, not under $nor; unbound (where no text index
// can serve it) it fails the match.
func TestTextClause(t *testing.T) {
	for _, tt := range []struct {
		filter string
		code   mongoerr.Code
		msg    string
	}{
		{`{"$text": {"$search": "a"}}`, 0, ""},
		{`{"x": 1, "$and": [{"$text": {"$search": "a"}}]}`, 0, ""},
		{`{"$text": {"$search": "a"}, "$and": [{"$text": {"$search": "b"}}]}`, mongoerr.BadValue, "Too many text expressions"},
		{`{"$nor": [{"$text": {"$search": "a"}}]}`, mongoerr.BadValue, "text expression not allowed in nor"},
		{`{"$or": [{"$text": {"$search": "a"}}, {"x": 1}]}`, 0, ""},
		{`{"x": 1, "$or": [{"y": 1}, {"$and": [{"$text": {"$search": "a"}}, {"x": 1}]}]}`, 0, ""},
		{`{"$or": [{"y": 1}, {"$or": [{"$text": {"$search": "a"}}, {"z": 3}]}]}`, 0, ""},
		{`{"$or": [{"x": 1}, {"$and": [{"$or": [{"$text": {"$search": "a"}}, {"z": 3}]}]}]}`, mongoerr.NotImplemented, "Folio does not support $text inside a nested $or yet"},
		{`{"$or": [{"x": 1}, {"y": 1, "$or": [{"$text": {"$search": "a"}}, {"z": 3}]}]}`, mongoerr.NotImplemented, "Folio does not support $text inside a nested $or yet"},
		{`{"$nor": [{"$or": [{"$text": {"$search": "a"}}]}]}`, mongoerr.BadValue, "text expression not allowed in nor"},
	} {
		f, err := Compile(ext(t, tt.filter))
		if err != nil {
			t.Fatalf("%s: %v", tt.filter, err)
		}
		ts, err := f.Text()
		if tt.code != 0 {
			checkErr(t, tt.filter, err, tt.code, tt.msg)
			continue
		}
		if err != nil || ts == nil || ts.Search != "a" {
			t.Errorf("%s: Text() = %+v, %v", tt.filter, ts, err)
		}
		if _, _, err := f.MatchErr(ext(t, `{"x": 1}`)); !mongoerr.Is(err, mongoerr.BadValue) {
			t.Errorf("%s: unbound match: %v, want BadValue", tt.filter, err)
		}
		ts.Bind("english", func(bson.Raw) (bool, error) { return true, nil })
		if !f.Match(ext(t, `{"x": 1}`)) {
			t.Errorf("%s: bound match failed", tt.filter)
		}
	}
}

// TextOr finds the $or among the conjuncts whose branch holds the $text
// clause, and the branch (the $text itself, or the $and holding it).
func TestTextOr(t *testing.T) {
	for _, tt := range []struct {
		filter string
		branch int // -1: no $or
		kind   Kind
	}{
		{`{"$text": {"$search": "a"}}`, -1, 0},
		{`{"x": 1, "$and": [{"$text": {"$search": "a"}}]}`, -1, 0},
		{`{"$or": [{"$text": {"$search": "a"}}, {"x": 1}]}`, 0, KindText},
		{`{"y": 2, "$or": [{"x": 1}, {"$text": {"$search": "a"}, "z": 3}]}`, 1, KindAnd},
		{`{"$and": [{"$or": [{"x": 1}, {"$and": [{"z": 3}, {"$text": {"$search": "a"}}]}]}]}`, 1, KindAnd},
		{`{"$or": [{"x": 1}, {"$or": [{"z": 3}, {"$or": [{"$text": {"$search": "a"}}]}]}]}`, 2, KindText},
		{`{"$or": [{"x": 1}, {"$and": [{"$or": [{"$text": {"$search": "a"}}, {"z": 3}]}]}]}`, -1, 0},
	} {
		f, err := Compile(ext(t, tt.filter))
		if err != nil {
			t.Fatalf("%s: %v", tt.filter, err)
		}
		or, br := f.TextOr()
		if tt.branch < 0 {
			if or != nil || br != nil {
				t.Errorf("%s: TextOr() = %v, %v; want none", tt.filter, or, br)
			}
			continue
		}
		if or == nil || or.Kind != KindOr || br != OrBranches(or)[tt.branch] || br.Kind != tt.kind {
			t.Errorf("%s: TextOr() = %v, %v; want branch %d, a %v", tt.filter, or, br, tt.branch, tt.kind)
		}
	}
}
