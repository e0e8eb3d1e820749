package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
)

// Lend lends the next document through the wrapper (see docsrc.Lender).
func (s *scanCursor) Lend() (bson.Raw, error) { return docsrc.Lend(s.Cursor) }
