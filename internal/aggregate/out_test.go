package aggregate

import (
	"errors"
	"testing"

	"github.com/folio-db/folio/internal/mongoerr"
)

// TestMergeIntoSystemCollection: $merge refuses a system collection
// (31319). The stage corpus cannot hold the case: it also runs through the
// driver with access control, where MongoDB, as Folio, answers
// Unauthorized first.
func TestMergeIntoSystemCollection(t *testing.T) {
	for _, into := range []string{"system.x", "system.profile"} {
		_, _, err := mergeInto(stringValue(into), "db")
		var me *mongoerr.Error
		if !errors.As(err, &me) || me.Code != mongoerr.MergeIntoSystemCollection {
			t.Errorf("%s: %v, want 31319", into, err)
		}
	}
}
