package engine

import "slices"

// Fields of a compound index that run through one array take their values
// from the same element of it, as MongoDB's btree key generator walks the
// array once for all of them (btree_key_generator.cpp,
// getKeysImplWithArray): {x: [{b: 1, c: 2}, {b: 3, c: 4}]} gives the
// index {"x.b": 1, "x.c": 1} the keys (1, 2) and (3, 4), not also (1, 4)
// and (3, 2). So a key of such an index says the values lie in one
// element, and the planner compounds the bounds of such fields only under
// an $elemMatch on the array (planner.Index.PairedArrays).
//
// Indexes created before Folio keyed them so hold every combination
// (Index.crossKeys) and go on being keyed that way: their entries must be
// removed by the keys that wrote them.

// arrayStep is one array a value was reached through: the array is the
// value after depth parts of the field's path (given the earlier steps),
// and elem is the element taken.
type arrayStep struct {
	depth, elem int
}

// arraySteps is a value's way through the arrays, outermost first.
type arraySteps []arrayStep

// pairsArrays reports whether ix keys by element: two of its fields may
// run through one array (sharedFirstPart) and its entries are keyed by
// element.
func (ix *Index) pairsArrays() bool { return ix.sharedFirstPart && !ix.crossKeys }

// sharedFirstPart reports whether two plain fields (not hashed or
// wildcard) of an index share their first path part. A 2dsphere or 2d
// index takes the product of its fields' values, as getS2Keys and
// get2DKeys do.
func sharedFirstPart(fields []IndexField) bool {
	if slices.ContainsFunc(fields, func(f IndexField) bool { return f.Geo || f.Flat }) {
		return false
	}
	for i, f := range fields {
		for _, g := range fields[:i] {
			if plainField(f) && plainField(g) && f.Parts[0] == g.Parts[0] {
				return true
			}
		}
	}
	return false
}

func plainField(f IndexField) bool {
	return !f.Hashed && !f.Wildcard && f.WildcardOf == "" && len(f.Parts) > 0
}

// sameElements reports whether a value of field f reached by way a and a
// value of field g reached by way b took the same element of every array
// both ran through. Both walked the same document from its root, so the
// first step where their arrays differ (another depth, or other parts
// before it) ends what they share.
func sameElements(f, g IndexField, a, b arraySteps) bool {
	for k := range min(len(a), len(b)) {
		d := a[k].depth
		if b[k].depth != d || d > len(f.Parts) || d > len(g.Parts) || !slices.Equal(f.Parts[:d], g.Parts[:d]) {
			return true
		}
		if a[k].elem != b[k].elem {
			return false
		}
	}
	return true
}

// sameElementsAll reports whether a value of field fi reached by way took
// the elements the key's earlier fields took (ways, by field).
func (ix *Index) sameElementsAll(fi int, ways []arraySteps, way arraySteps) bool {
	f := ix.Fields[fi]
	for gi, w := range ways {
		if !sameElements(f, ix.Fields[gi], way, w) {
			return false
		}
	}
	return true
}
