package engine

import "slices"

// An index of plain fields (ascending, descending, hashed) records, as
// MongoDB's path-level multikey tracking does, at which components of each
// field's path some document held an array: the planner then treats a
// field that never met one as a field of a non-multikey index (its ranges
// intersect, it yields sorts) and compounds the bounds of fields sharing a
// path start that holds no array. Explain shows them as multiKeyPaths.
//
// Like the multikey flag, they are raised in memory before the write that
// met the array commits and recorded in the catalog entry (fieldArrays)
// before any frontend plans over a snapshot holding it
// (persistIndexFlags). An index that was multikey before Folio recorded
// them (an entry with multikey and no fieldArrays) does not track them:
// any component may hold an array.

// componentBit is the bit of path component c (the array at the path's
// first c+1 components); components past the 64th share the last bit.
func componentBit(c int) uint64 { return 1 << min(c, 63) }

// tracksArrays reports whether ix records its fields' array components:
// an index of its kind (arrayTrackingKind) not loaded untracked
// (loadArrays).
func (ix *Index) tracksArrays() bool { return ix.arrays.Load() != nil }

// arrayTrackingKind reports whether an index of ix's kind records its
// fields' array components (text, 2d, 2dsphere and wildcard indexes do
// not).
func (ix *Index) arrayTrackingKind() bool {
	return ix.wild == nil && ix.text == nil &&
		!slices.ContainsFunc(ix.Fields, func(f IndexField) bool { return f.Geo || f.Flat })
}

// fieldArrays are, for each field, the components of its path at which a
// document held an array; nil when ix does not track them.
func (ix *Index) fieldArrays() []uint64 {
	if p := ix.arrays.Load(); p != nil {
		return *p
	}
	return nil
}

// raiseArrays adds the array components of one document's keys to ix's;
// it reports whether any was new.
func (ix *Index) raiseArrays(arrays []uint64) bool {
	for {
		cur := ix.arrays.Load()
		if cur == nil {
			return false
		}
		if !newBits(*cur, arrays) {
			return false
		}
		next := slices.Clone(*cur)
		for i := range min(len(next), len(arrays)) {
			next[i] |= arrays[i]
		}
		if ix.arrays.CompareAndSwap(cur, &next) {
			return true
		}
	}
}

// newBits reports whether add holds a component have lacks.
func newBits(have, add []uint64) bool {
	for i, a := range add {
		if a != 0 && (i >= len(have) || have[i]|a != have[i]) {
			return true
		}
	}
	return false
}

// loadArrays gives ix, rebuilt from its catalog entry si, the array
// components si records, or no tracking when si is multikey without them.
func loadArrays(ix *Index, si storedIndex) {
	if si.Multikey && si.FieldArrays == nil {
		ix.arrays.Store(nil)
		return
	}
	ix.raiseArrays(si.FieldArrays)
}
