package pebblekv

import (
	"bytes"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Exist implements storage.KV. The keys are looked up in order on one
// iterator bounded by the smallest and largest of them, so the tables
// outside that range are never opened, and each lookup is a prefix seek,
// which the default comparer makes the whole key: the tables' bloom filters
// skip those that do not hold it, as they do for a Get.
func (d *DB) Exist(keys [][]byte, found []bool) error {
	if len(keys) == 0 {
		return nil
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	last := keys[order[len(order)-1]]
	upper := append(append(make([]byte, 0, len(last)+1), last...), 0)
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: keys[order[0]], UpperBound: upper})
	if err != nil {
		return err
	}
	for _, i := range order {
		found[i] = it.SeekPrefixGE(keys[i]) && bytes.Equal(it.Key(), keys[i])
	}
	// Close returns the error the iterator met, if any.
	return it.Close()
}
