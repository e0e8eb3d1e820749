package engine

import "context"

// Under the Stable API's apiStrict the planner sees no index outside API
// version 1, sparse and text indexes (MongoDB's fillOutIndexEntries): a
// hint naming one finds no index, a $text query no text index, and plans
// are cached under keys that leave them out.

type apiStrictKey struct{}

// WithAPIStrict returns ctx for an operation run with apiStrict: true.
func WithAPIStrict(ctx context.Context) context.Context {
	return context.WithValue(ctx, apiStrictKey{}, true)
}

// apiStrictIn reports whether ctx's operation runs with apiStrict: true.
func apiStrictIn(ctx context.Context) bool {
	if ctx == nil {
		return false
	}
	strict, _ := ctx.Value(apiStrictKey{}).(bool)
	return strict
}

// plannable reports whether the planner sees ix: not hidden, and under
// apiStrict (strict) neither sparse nor a text index.
func (ix *Index) plannable(strict bool) bool {
	return !ix.Hidden && !(strict && (ix.Sparse || ix.text != nil))
}
