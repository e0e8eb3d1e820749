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

// distinctCap is the most bytes distinct's values may take in its reply:
// MongoDB builds them in a buffer of 16 MB less 4 KB and refuses a value
// that would leave less than 1 KB of it (17217).
const distinctCap = 16<<20 - 4096 - 1024

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
	size int
	buf  []byte
}

func newDistinctSet(coll *collation.Collator) *distinctSet {
	return &distinctSet{coll: coll, seen: map[string]struct{}{}}
}

// add adds v unless an equal value is there, failing once the values
// pass distinctCap.
func (d *distinctSet) add(v bson.RawValue) error {
	d.buf = d.coll.AppendValueKey(d.buf[:0], v)
	if _, ok := d.seen[string(d.buf)]; ok {
		return nil
	}
	// An element of the values array: type, index, value.
	if d.size += 2 + decimalLen(len(d.vals)) + len(v.Value); d.size > distinctCap {
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
// collation's, when there is one).
func (d *distinctSet) sorted() []bson.RawValue {
	if d.coll == nil {
		slices.SortFunc(d.vals, values.Compare)
		return d.vals
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
	return out
}

// decimalLen is the number of decimal digits of n (n >= 0).
func decimalLen(n int) int {
	l := 1
	for ; n >= 10; n /= 10 {
		l++
	}
	return l
}
