package engine

import "testing"

// TestUnseen: the id an index change names when one of its indexes is
// gone is one it did not see, whatever the order of the catalog.
func TestUnseen(t *testing.T) {
	for _, tc := range []struct {
		ids, seen []uint32
		want      uint32
		gone      bool
	}{
		{ids: []uint32{3}, seen: []uint32{3}},
		{ids: []uint32{3, 5}, seen: []uint32{5, 3}},
		{ids: []uint32{3, 5}, seen: nil, want: 3, gone: true},
		{ids: []uint32{3, 5}, seen: []uint32{3}, want: 5, gone: true},
		{ids: []uint32{3, 5, 7}, seen: []uint32{7, 3}, want: 5, gone: true},
	} {
		if got, gone := unseen(tc.ids, tc.seen); got != tc.want || gone != tc.gone {
			t.Errorf("unseen(%v, %v) = %d, %v; want %d, %v", tc.ids, tc.seen, got, gone, tc.want, tc.gone)
		}
	}
}
