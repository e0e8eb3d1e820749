package expr

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestBindRefusesDocumentReads: a command's let runs before any document
// is read, so an expression reading one is refused with 4890500.
func TestBindRefusesDocumentReads(t *testing.T) {
	for _, tt := range []struct {
		let     string
		refused bool
	}{
		{`{"a": 1, "b": "$$a"}`, false},
		{`{"a": {"$add": [1, 2]}, "now": "$$NOW"}`, false},
		{`{"a": {"$map": {"input": [1, 2], "in": "$$this"}}}`, false},
		{`{"a": "$x"}`, true},
		{`{"a": "$$ROOT"}`, true},
		{`{"a": "$$CURRENT.x"}`, true},
		{`{"a": {"$map": {"input": [1], "in": "$x"}}}`, true},
	} {
		var let bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tt.let), false, &let); err != nil {
			t.Fatal(err)
		}
		_, err := Bind(let, Clock{})
		var me *mongoerr.Error
		switch {
		case tt.refused && !(errors.As(err, &me) && me.Code == mongoerr.LetReadsDocument):
			t.Errorf("%s: %v, want 4890500", tt.let, err)
		case !tt.refused && err != nil:
			t.Errorf("%s: %v", tt.let, err)
		}
	}
}
