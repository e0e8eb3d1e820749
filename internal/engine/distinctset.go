package engine

import (
	"bytes"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// distinctCap bounds distinct's reply as MongoDB 7.0's distinct command
// bounds it (commands/distinct.cpp, CmdDistinct): the values' elements as
// found in the documents (name included) must stay under 16 MB less 4 KB
// as they are read (17217), and so must the reply's values array, its
// field included, once built (31299).
const distinctCap = 16<<20 - 4096

// distinctReplyHead is the bytes of distinct's reply before its values'
// elements, as MongoDB measures it: the reply's length, the values
// field's type and name, the array's length and its terminator.
const distinctReplyHead = 4 + 1 + len("values") + 1 + 4 + 1

// distinctSet collects distinct's values as they are read: each once
// (equal as MongoDB compares them, under the command's collation), the
// first seen kept and copied, so that neither the duplicates nor the
// documents they came from are held.
type distinctSet struct {
	coll *collation.Collator
	seen map[string]struct{}
	vals []bson.RawValue
	// keys are the values' keys under coll, which order them (coll set).
	keys []string
	// approx is the values' elements as found (distinctCap).
	approx int
	buf    []byte
}

func newDistinctSet(coll *collation.Collator) *distinctSet {
	return &distinctSet{coll: coll, seen: map[string]struct{}{}}
}

// add adds v, found as the element named name, unless an equal value is
// there, failing once the elements added reach distinctCap.
func (d *distinctSet) add(name string, v bson.RawValue) error {
	d.buf = d.coll.AppendValueKey(d.buf[:0], v)
	if _, ok := d.seen[string(d.buf)]; ok {
		return nil
	}
	// An element: type, name and its terminator, value.
	if d.approx += 2 + len(name) + len(v.Value); d.approx >= distinctCap {
		return mongoerr.New(mongoerr.DistinctTooBig, "distinct too big, 16mb cap")
	}
	key := string(d.buf)
	d.seen[key] = struct{}{}
	d.vals = append(d.vals, bson.RawValue{Type: v.Type, Value: bytes.Clone(v.Value)})
	if d.coll != nil {
		d.keys = append(d.keys, key)
	}
	return nil
}

// sorted returns the values in MongoDB's comparison order (the
// collation's, when there is one), failing when the reply's values array
// would reach distinctCap.
func (d *distinctSet) sorted() ([]bson.RawValue, error) {
	size := distinctReplyHead
	for i, v := range d.vals {
		// An element of the values array: type, position, value.
		size += 2 + decimalLen(i) + len(v.Value)
	}
	if size >= distinctCap {
		return nil, mongoerr.New(mongoerr.DistinctReplyTooBig, "distinct too big, 16mb cap")
	}
	if d.coll == nil {
		slices.SortFunc(d.vals, values.Compare)
		return d.vals, nil
	}
	idx := make([]int, len(d.vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(d.keys[a], d.keys[b]) })
	out := make([]bson.RawValue, len(idx))
	for i, j := range idx {
		out[i] = d.vals[j]
	}
	return out, nil
}

// decimalLen is the number of decimal digits of n (n >= 0).
func decimalLen(n int) int {
	l := 1
	for ; n >= 10; n /= 10 {
		l++
	}
	return l
}
