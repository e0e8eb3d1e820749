package aggregate

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
)

// markSortKeys sets the keys of the $sort whose documents carry their sort
// key (docsrc.Meta.SortKey) for a later stage's {$meta: "sortKey"}. In
// MongoDB 7.0 only the sort its query layer runs sets it
// (SortNode::addSortKeyMetadata, from the pipeline's metadata
// dependencies): the pipeline's leading $sort, once its $match stages have
// moved before it and a $sort not followed by a $limit has given way to
// the $sort right after it (DocumentSourceSort::doOptimizeAt), in a
// pipeline reading
// a collection (not a $facet's, nor one without a collection). A
// DocumentSourceSort sets it only for a sharded merge (needsMerge), which
// Folio has none of, so after a later $sort a document keeps the key the
// first gave it, and after a $group it has none: {$meta: "sortKey"} is
// then missing. Nothing is marked when no later stage reads the key.
// Under a collation the keys would hold ICU's sort key bytes in place of
// strings, which Folio's collation keys are not: NotImplemented.
func (p *parser) markSortKeys(docs []bson.Raw, stages []stage) error {
	if p.where == inFacet || p.noColl {
		return nil
	}
	at := -1
	for i, s := range stages {
		if _, ok := s.(*matchStage); ok {
			continue
		}
		if _, ok := s.(*sortStage); !ok {
			break
		}
		at = i
	}
	if at < 0 || !slices.ContainsFunc(docs[at+1:], readsSortKey) {
		return nil
	}
	if p.opts.Collator != nil {
		return mongoerr.New(mongoerr.NotImplemented, "Folio does not support {$meta: \"sortKey\"} with a collation yet")
	}
	stages[at].(*sortStage).keys = true
	return nil
}

// readsSortKey reports whether a stage reads {$meta: "sortKey"}.
func readsSortKey(doc bson.Raw) bool {
	return slices.Contains(expr.MetaNames(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}), "sortKey")
}
