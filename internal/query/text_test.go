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
		{`{"$or": [{"$text": {"$search": "a"}}, {"x": 1}]}`, mongoerr.NotImplemented, "Folio does not support $text inside $or yet"},
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
		ts.Bind(func(bson.Raw) (bool, error) { return true, nil })
		if !f.Match(ext(t, `{"x": 1}`)) {
			t.Errorf("%s: bound match failed", tt.filter)
		}
	}
}
