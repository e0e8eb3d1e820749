// Command comments stores the comments of a discussion three ways, as the
// seed use case does: one document per comment (threaded by slug and
// full_slug, paged with sort/skip/limit, subthreads by escaped prefix
// regex), all comments embedded in the discussion (replies nested, pages by
// $slice) and a hybrid of buckets holding a few comments each (filled by
// findAndModify upserts, paged across buckets with $slice); then shards
// both collections on the seed's shard keys.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("comments", run) }

// author is who wrote a comment.
type author struct {
	ID   int    `bson:"id"`
	Name string `bson:"name"`
}

// posted returns the time of the i-th comment of the examples.
func posted(i int) time.Time {
	return time.Date(2012, 2, 8, 12, 21, 8, 0, time.UTC).Add(time.Duration(i) * time.Hour)
}

// slugPart returns the pseudorandom slug of the i-th comment; a counter
// keeps the examples reproducible.
func slugPart(i int) string { return fmt.Sprintf("%04x", 0x34db+i*0x1f1) }

func run(ctx context.Context, k *cookbook.Kitchen) {
	onePerDocument(ctx, k)
	embedded(ctx, k)
	buckets(ctx, k)
	shardKeys(ctx, k)
}
