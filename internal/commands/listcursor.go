package commands

import (
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/aggregate"
)

// serveList answers listCollections or listIndexes: a cursor over docs,
// already gathered, on db.coll of r. The first batch holds batchSize
// documents (all of them, within 16 MiB, when the client names none); the
// rest wait for getMores. MongoDB knows such a cursor's end exactly, so an
// exhausted one is closed at once, even with a batchSize of 0.
func (s *Service) serveList(r *Request, coll string, docs []bson.Raw, batchSize int64) (bson.Raw, error) {
	return s.serveFirstBatch(r, r.DB, coll, &aggregate.SliceSource{Docs: docs}, &binding{r.Ctx, r.op}, firstBatch{
		size: batchSize, defaultSize: math.MaxInt64, empty: len(docs) == 0, list: true,
	})
}
