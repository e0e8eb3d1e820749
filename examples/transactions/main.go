// Command transactions shows compensation-driven transactions built from
// single-document atomic updates: an order that reserves inventory step by
// step and undoes its steps when one fails, and money transfers with an
// emulated two-phase commit whose commit and rollback are idempotent, so a
// periodic cleanup can finish or undo transfers interrupted by a crash.
package main

import (
	"context"

	"github.com/folio-db/folio/examples/internal/cookbook"
)

func main() { cookbook.Main("transactions", run) }

func run(ctx context.Context, k *cookbook.Kitchen) {
	orderStates(ctx, k)
	transfers(ctx, k)
}
