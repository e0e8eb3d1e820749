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

// TestBindLetNames: a command's let names are checked before their
// expressions, as MongoDB's seedVariablesWithLetParameters does: a name
// no user variable may have fails with FailedToParse after "Invalid 'let'
// parameter", one of a system variable with 4738901.
func TestBindLetNames(t *testing.T) {
	for _, tt := range []struct {
		let  string
		code mongoerr.Code
		msg  string
	}{
		{`{"X": 1}`, mongoerr.FailedToParse, "Invalid 'let' parameter :: caused by :: 'X' starts with an invalid character for a user variable name"},
		{`{"": 1}`, mongoerr.FailedToParse, "Invalid 'let' parameter :: caused by :: empty variable names are not allowed"},
		{`{"a-b": 1}`, mongoerr.FailedToParse, "Invalid 'let' parameter :: caused by :: 'a-b' contains an invalid character for a variable name: '-'"},
		{`{"X": "$x"}`, mongoerr.FailedToParse, "Invalid 'let' parameter :: caused by :: 'X' starts with an invalid character for a user variable name"},
		{`{"NOW": 1}`, mongoerr.LetSetsInternalConstant, "Attempt to set internal constant: NOW"},
		{`{"USER_ROLES": []}`, mongoerr.LetSetsInternalConstant, "Attempt to set internal constant: USER_ROLES"},
		{`{"ROOT": 1}`, mongoerr.FailedToParse, "Invalid 'let' parameter :: caused by :: 'ROOT' starts with an invalid character for a user variable name"},
	} {
		var let bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(tt.let), false, &let); err != nil {
			t.Fatal(err)
		}
		_, err := Bind(let, Clock{})
		if me, ok := errors.AsType[*mongoerr.Error](err); !ok || me.Code != tt.code || me.Msg != tt.msg {
			t.Errorf("%s: %v, want %d %q", tt.let, err, tt.code, tt.msg)
		}
	}
}
