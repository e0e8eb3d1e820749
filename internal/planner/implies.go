package planner

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// implies reports whether every document matching a query (given by its
// conjunct leaves) also matches a partial index's filter, so that the
// index holds every document the query can return. Each condition of the
// partial filter must follow from one condition of the query on the same
// path; anything this cannot prove answers false.
func implies(leaves []*query.Node, partial *query.Filter) bool {
	for _, need := range constraintLeaves(partial.Root()) {
		proved := false
		for _, have := range leaves {
			if have.Path == need.Path && provesLeaf(have, need) {
				proved = true
				break
			}
		}
		if !proved {
			return false
		}
	}
	return true
}

// provesLeaf reports whether condition have implies condition need on the
// same path.
func provesLeaf(have, need *query.Node) bool {
	switch need.Kind {
	case query.KindExists:
		return cannotMatchMissing(have)
	case query.KindEq:
		return have.Kind == query.KindEq && values.Equal(have.Value, need.Value)
	case query.KindGt, query.KindGte, query.KindLt, query.KindLte:
		switch have.Kind {
		case query.KindEq:
			return values.Rank(have.Value.Type) == values.Rank(need.Value.Type) && satisfies(have.Value, need.Kind, need.Value)
		case need.Kind:
			return satisfies(have.Value, need.Kind, need.Value)
		case strictOf(need.Kind):
			c := values.Compare(have.Value, need.Value)
			return values.Rank(have.Value.Type) == values.Rank(need.Value.Type) && (c == 0 || satisfies(have.Value, need.Kind, need.Value))
		}
	}
	return false
}

// cannotMatchMissing reports whether condition n fails on a document
// missing its path (which a sparse index leaves out and which $exists
// rejects): equality and $in without null, comparisons with a value of a
// concrete type (null, undefined, MinKey and MaxKey bound missing fields
// too), regexes, {$exists: true}, $type, $size, $elemMatch, $mod and bit tests.
// Anything else answers false.
func cannotMatchMissing(n *query.Node) bool {
	switch n.Kind {
	case query.KindEq, query.KindGt, query.KindGte, query.KindLt, query.KindLte:
		switch n.Value.Type {
		case bson.TypeNull, bson.TypeUndefined, bson.TypeMinKey, bson.TypeMaxKey:
			return false
		}
		return true
	case query.KindIn:
		vals, err := n.Value.Array().Values()
		if err != nil {
			return false
		}
		for _, v := range vals {
			if v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
				return false
			}
		}
		return true
	case query.KindRegex, query.KindExists, query.KindType, query.KindSize, query.KindElemMatchObject, query.KindElemMatchValue,
		query.KindMod, query.KindBitsAllSet, query.KindBitsAnySet, query.KindBitsAllClear, query.KindBitsAnyClear:
		return true
	}
	return false
}

// satisfies reports whether v op bound holds, within one type class.
func satisfies(v bson.RawValue, op query.Kind, bound bson.RawValue) bool {
	if values.Rank(v.Type) != values.Rank(bound.Type) {
		return false
	}
	c := values.Compare(v, bound)
	switch op {
	case query.KindGt:
		return c > 0
	case query.KindGte:
		return c >= 0
	case query.KindLt:
		return c < 0
	case query.KindLte:
		return c <= 0
	}
	return false
}

// strictOf is the strict form of an inclusive comparison ($gt for $gte):
// a strict bound implies the inclusive one at the same value.
func strictOf(k query.Kind) query.Kind {
	switch k {
	case query.KindGte:
		return query.KindGt
	case query.KindLte:
		return query.KindLt
	}
	return k
}
