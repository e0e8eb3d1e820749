// Command trees shows the two tree encodings of the seeds: a forum thread
// with a materialized path (one prefix-regex query per subtree, served by
// the path index) and a category hierarchy with a denormalized ancestor
// list (moving a subtree rewrites the lists; renaming a category rewrites
// its copies with a positional update over many documents).
package main

import (
	"context"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("trees", run) }

func run(ctx context.Context, k *cookbook.Kitchen) {
	materializedPath(ctx, k)
	ancestorLists(ctx, k)
}
