package pebblekv

import (
	"bytes"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// Exist implements storage.KV. The keys are looked up in order on one
// iterator bounded by the smallest and largest of them, so the tables
// outside that range are never opened, and each lookup (of those not below
// every key stored in the range) is a prefix seek,
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
	// A first plain seek finds the smallest key stored in that range: the
	// keys below it do not exist, and with none stored (new keys above all
	// others, as ObjectIds are), none of them do, without a lookup each.
	from := len(order)
	if it.SeekGE(keys[order[0]]) {
		stored := it.Key()
		from, _ = slices.BinarySearchFunc(order, stored, func(i int, k []byte) int { return bytes.Compare(keys[i], k) })
	}
	for _, i := range order[:from] {
		found[i] = false
	}
	for _, i := range order[from:] {
		found[i] = it.SeekPrefixGE(keys[i]) && bytes.Equal(it.Key(), keys[i])
	}
	// Close returns the error the iterator met, if any.
	return it.Close()
}
