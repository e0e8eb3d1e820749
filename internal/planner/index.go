// Package planner chooses how a query reads a collection: from a compiled
// filter, sort and projection and the collection's indexes (a Catalog) it
// derives the candidate plans, each with its key intervals, the key checks
// past them, a static score and its explain stages. It reads no data: the
// engine executes the plans (and runs the trials that choose among them).
package planner

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/query"
)

// Field is one field of an index key pattern.
type Field struct {
	Path  string
	Parts []string // Path split at its dots
	Desc  bool
	// Hashed fields index MongoDB's hash of the value (see hashed.go).
	Hashed bool
	// WildcardOf, on the $_path field of a wildcard index expanded for
	// one path, is that path; Wildcard marks the field of its values
	// (see wildcard.go).
	WildcardOf string
	Wildcard   bool
	// WildcardPaths, beside WildcardOf, are the paths a positional
	// query path may be stored under (see fieldNameOrArrayIndexPaths):
	// the $_path field is bounded to each.
	WildcardPaths []string
	// Text marks the term and score of a text index's keys.
	Text bool
	// Geo marks a 2dsphere field: its keys are S2 cell ids; Flat a 2d
	// field: its keys are geohashes.
	Geo, Flat bool
	// GeoBucket, on a Geo field, marks a time series buckets' index of a
	// measurement (2dsphere_bucket): its keys are the cells of the points
	// of the bucket's column at Path, which no query of the column as one
	// value can read.
	GeoBucket bool
}

// Index is an index as the planner sees it.
type Index struct {
	Name       string
	KeyPattern bson.Raw
	Fields     []Field
	Unique     bool
	// ValueKeyed reports that an entry's key is the key values alone (an
	// index created unique): a point read of a unique index is then one
	// Get of the interval's start.
	ValueKeyed bool
	Sparse     bool
	// Partial is the partial filter, nil when the index holds every
	// document (sparse aside).
	Partial *query.Filter
	// Multikey reports that some document indexed an array under it: two
	// conditions on one field may then be met by different elements.
	Multikey bool
	// FieldArrays are, on an index tracking them, the components of each
	// field's path at which some document held an array (bit c: the
	// path's first c+1 components; the 64th bit stands for all past it):
	// MongoDB's multikey paths. Nil on an index not tracking them, where
	// any component of a multikey index may hold one.
	FieldArrays []uint64
	// PairedArrays reports that the fields running through one array take
	// their values in a key from the same element of it, as MongoDB keys
	// them: once multikey, fields sharing the start of their paths are
	// bounded together only within one $elemMatch (pairedLeaves).
	PairedArrays bool
	// MultikeyPaths, on a wildcard index expanded for one path, are the
	// path's prefixes (itself included) where arrays were indexed.
	MultikeyPaths []string
	// Wildcard is set on a wildcard index ($**): the planner expands it
	// into one index per queried path it covers.
	Wildcard *Wildcard
	// Ref is the catalog's own handle on the index, carried by the plans.
	Ref any
	// Collation is the index's collation, nil for the simple one: its
	// string keys are collation keys.
	Collation *collation.Collator
}

// Catalog is what the planner knows of a collection.
type Catalog interface {
	// Indexes lists the secondary indexes the planner may choose (hidden
	// ones left out), with their multikey flags as of the call.
	Indexes() []Index
	// StoreByID reports whether the document store is in _id order, so
	// that it serves as the _id index; when it is not (a sharded
	// collection's, in shard key order, whose _id index is among
	// Indexes), the planner only scans it whole.
	StoreByID() bool
}

// IDIndexName is the name of the _id index every collection has: the
// document store, ordered by _id.
const IDIndexName = "_id_"

// IDKeyPattern is {_id: 1}.
var IDKeyPattern = func() bson.Raw {
	b, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(1)}})
	return b
}()

// idFields is the document store seen as an index on _id.
var idFields = []Field{{Path: "_id", Parts: []string{"_id"}}}

// arrays says where a plan's index (nil: the document store) may hold
// arrays, as of the multikey flag the plan is built with: anywhere on a
// multikey index not tracking its fields' array components.
type arrays struct {
	ix       *Index
	multikey bool
}

// at reports whether field i's path may have held an array at component c
// (its first c+1 parts).
func (a arrays) at(i, c int) bool {
	if !a.multikey {
		return false
	}
	if a.ix == nil || i >= len(a.ix.FieldArrays) {
		return true
	}
	return a.ix.FieldArrays[i]&(1<<min(c, 63)) != 0
}

// field reports whether field i may have held an array.
func (a arrays) field(i int) bool {
	if !a.multikey {
		return false
	}
	if a.ix == nil || i >= len(a.ix.FieldArrays) {
		return true
	}
	return a.ix.FieldArrays[i] != 0
}

// deepest is the deepest component of field i's path (of n parts) at
// which an array may have been met: -1 when none may, anyArray on a
// multikey index not tracking its fields' array components.
func (a arrays) deepest(i, n int) int {
	if !a.multikey {
		return -1
	}
	if a.ix == nil || i >= len(a.ix.FieldArrays) {
		return anyArray
	}
	for c := n - 1; c >= 0; c-- {
		if a.at(i, c) {
			return c
		}
	}
	return -1
}

// deepestShared is the deepest component of the start the paths of fields
// i and k share at which an array may have been met (both run through it),
// -1 when none may.
func (a arrays) deepestShared(fields []Field, i, k int) int {
	for c := sharedParts(fields[i], fields[k]) - 1; c >= 0; c-- {
		if a.at(i, c) || a.at(k, c) {
			return c
		}
	}
	return -1
}

// shared reports whether fields i and k may run through one array: one
// along the start their paths share.
func (a arrays) shared(fields []Field, i, k int) bool { return a.deepestShared(fields, i, k) >= 0 }

// sharedParts is how many parts f's and g's paths start with alike.
func sharedParts(f, g Field) int {
	n := 0
	for n < len(f.Parts) && n < len(g.Parts) && f.Parts[n] == g.Parts[n] {
		n++
	}
	return n
}
