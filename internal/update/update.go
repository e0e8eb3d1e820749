// Package update implements MongoDB's update language applied to one
// document: operator updates ({$set: ...}), replacement documents, and the
// document an upsert starts from. MongoDB (5.0 and later) is the
// specification: the same results, the same field order, the same error codes
// and messages.
package update

import (
	"bytes"
	"github.com/folio-db/folio/internal/clock"
	"github.com/folio-db/folio/internal/rawdoc"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
)

// Matcher decides whether a document matches a compiled query filter.
type Matcher interface {
	Match(doc bson.Raw) bool
}

// CompileFunc compiles a query filter; the query package provides it. It is
// used for $pull conditions and for arrayFilters.
type CompileFunc func(filter bson.Raw) (Matcher, error)

// Options configure Compile.
type Options struct {
	// ArrayFilters are the filters for $[<identifier>] path components.
	ArrayFilters []bson.Raw
	// Compile compiles $pull conditions and array filters, which follow
	// the statement's collation: Compile must apply it.
	Compile CompileFunc
	// Collator, when set, is the statement's collation, which $addToSet,
	// $pull and $pullAll follow when they compare values, $min and $max
	// when they order them, and $push when it sorts.
	Collator *collation.Collator
	// Clock, when set, is the cluster clock: each $currentDate of type
	// timestamp takes a new one, as MongoDB ticks its cluster clock for
	// each (current_date_node.cpp), so such timestamps are unique on the
	// server. Without it they are the wall clock's second, increment 1.
	Clock clock.Source
}

// MaxDocumentSize is the largest document an update may produce.
const MaxDocumentSize = 16 * 1024 * 1024

// Update is a compiled update, safe for concurrent use by many Apply calls.
type Update struct {
	replacement bson.Raw // the replacement document, or nil for an operator update
	root        *tnode   // operator update tree
	set         setField // the one field set (named), instead of root, when the update is only that
	filters     map[string]Matcher
	clock       clock.Source // Options.Clock
	// positional is set when a path has the positional $, which needs the
	// position of the array element the query matched.
	positional bool
}

// Compile parses an update document. A document whose first field starts
// with '$' is an operator update; any other document (including {}) is a
// replacement.
func Compile(spec bson.Raw, opts Options) (*Update, error) {
	if err := rawdoc.Validate(spec); err != nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "invalid update document: %v", err)
	}
	first, err := spec.IndexErr(0)
	if err != nil || len(first.Key()) == 0 || first.Key()[0] != '$' {
		return compileReplacement(spec)
	}
	if set, ok := compileSetField(spec, &opts); ok {
		return &Update{set: set}, nil
	}
	filters, err := compileArrayFilters(opts)
	if err != nil {
		return nil, err
	}
	return compileOperators(spec, filters, &opts)
}

// Positional reports whether u writes through the positional $ operator:
// MongoDB's UpdateDriver then needs the query's match details, so it
// canonicalizes even a query on one _id (ParsedUpdate::parseQuery).
func (u *Update) Positional() bool { return u.positional }

// IsReplacement reports whether u replaces whole documents.
func (u *Update) IsReplacement() bool { return u.replacement != nil }

// Apply applies u to doc and returns the updated document. pos is the index
// of the array element the query matched, for the positional $ operator, or
// -1. insert is true when doc is the seed of an upsert ($setOnInsert applies
// then, and dollar-prefixed top-level fields may be created). modified is
// false when the result is byte-for-byte the original document (for a
// replacement: when the replacement as given is), which is MongoDB's
// nModified rule: setting a field to its current value is no
// modification; but a $push with $sort, and $inc or $mul of a NaN, always
// are, as MongoDB's nodes report them. delta is the oplog diff the operators logged (see
// delta.go), nil for a replacement, an upsert's insert, or no change.
func (u *Update) Apply(doc bson.Raw, pos int, insert bool) (out bson.Raw, delta []byte, modified bool, err error) {
	forced := false
	switch {
	case u.replacement != nil:
		out, err = u.applyReplacement(doc)
	case u.set.name != "":
		out, delta = u.set.apply(doc, insert)
	default:
		out, delta, forced, err = u.applyOperators(doc, pos, insert)
	}
	if err != nil {
		return nil, nil, false, err
	}
	// An upsert's new document is checked once its _id is added
	// (UpsertResultTooLarge, by the engine).
	if !insert && len(out) > MaxDocumentSize {
		return nil, nil, false, mongoerr.New(mongoerr.UpdateResultTooLarge,
			"Resulting document after update is larger than %d", MaxDocumentSize)
	}
	// A replacement is a no-op only when it equals the document as given,
	// as MongoDB compares them: one without _id always changes it, also
	// when the rest is the same (and counts in nModified).
	if u.replacement != nil && bytes.Equal(u.replacement, doc) || u.replacement == nil && !forced && bytes.Equal(out, doc) {
		return out, nil, false, nil
	}
	return out, delta, true, nil
}
