package query

import (
	"slices"
	"sync"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// collate makes the filter's comparisons ($eq, $lt..., $in and the
// negations built on them) follow coll, as MongoDB's comparison match
// expressions use the command's collator; regexes, $type and the other
// operators ignore collations. Operands are turned into collation keys once
// here; each document value is turned into keys as it is compared.
func (f *Filter) collate(coll *collation.Collator) {
	f.coll = coll
	Walk(f.root, func(n *Node) bool {
		switch n.Kind {
		case KindEq, KindLt, KindLte, KindGt, KindGte:
			n.coll, n.collated = coll, coll.Transform(n.Value)
		case KindExprEq, KindExprGt, KindExprGte, KindExprLt, KindExprLte:
			n.coll = coll
		case KindIn:
			in := *n.in
			in.coll = coll
			in.sorted = make([]bson.RawValue, len(n.in.sorted))
			for i, v := range n.in.sorted {
				in.sorted[i] = coll.Transform(v)
			}
			slices.SortFunc(in.sorted, values.Compare)
			n.in, n.coll = &in, coll
		}
		return true
	})
}

// Collator is the collation a comparison node follows (nil: simple).
func (n *Node) Collator() *collation.Collator { return n.coll }

// Collator is the collation strings sort by (nil: simple).
func (s *Sort) Collator() *collation.Collator { return s.coll }

// keyBufs are buffers for the collation keys of the values comparisons
// test, so that matching under a collation allocates nothing per value.
var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// collatedMatches is compareMatches under the node's collation: v's
// strings become collation keys, in a pooled buffer.
func (n *Node) collatedMatches(v bson.RawValue) bool {
	if !collation.Collatable(v) {
		return compareMatches(n.Kind, v, n.collated)
	}
	buf := keyBufs.Get().(*[]byte)
	tv := n.coll.TransformAppend((*buf)[:0], v)
	ok := compareMatches(n.Kind, tv, n.collated)
	*buf = tv.Value[:0]
	keyBufs.Put(buf)
	return ok
}
