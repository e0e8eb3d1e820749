package planner

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// implies reports whether every document matching a query (given by its
// conjunct leaves) also matches a partial index's filter, so that the
// index holds every document the query can return. The filter's $and
// needs each of its conditions to follow from the query, its $or one of
// its branches (MongoDB's expression::isSubsetOf), and each condition must
// follow from one condition of the query on the same path; anything this
// cannot prove answers false.
func implies(leaves []*query.Node, partial *query.Filter) bool {
	return impliesNode(leaves, partial.Root())
}

// impliesNode reports whether the query's conjunct leaves imply the
// partial filter's node need.
func impliesNode(leaves []*query.Node, need *query.Node) bool {
	switch need.Kind {
	case query.KindAnd:
		for _, ch := range need.Children {
			if !impliesNode(leaves, ch) {
				return false
			}
		}
		return true
	case query.KindOr:
		for _, ch := range need.Children {
			if impliesNode(leaves, ch) {
				return true
			}
		}
		return false
	}
	for _, have := range leaves {
		if have.Path == need.Path && provesLeaf(have, need) {
			return true
		}
	}
	return false
}

// provesLeaf reports whether condition have implies condition need on the
// same path. An $in implies what each of its values does; a regex it
// lists matches strings, so it implies only $exists and an $in listing
// the same regex.
func provesLeaf(have, need *query.Node) bool {
	if have.Kind == query.KindIn {
		vals, err := have.Value.Array().Values()
		if err != nil || len(vals) == 0 {
			return false
		}
		for _, v := range vals {
			if v.Type == bson.TypeRegex && need.Kind != query.KindExists && need.Kind != query.KindIn {
				return false
			}
			if !provesValue(v, need) {
				return false
			}
		}
		return true
	}
	switch need.Kind {
	case query.KindExists:
		return cannotMatchMissing(have)
	case query.KindEq, query.KindIn:
		return have.Kind == query.KindEq && provesValue(have.Value, need)
	case query.KindGt, query.KindGte, query.KindLt, query.KindLte:
		if have.Kind == query.KindEq {
			return provesValue(have.Value, need)
		}
		// A bound in the same direction, of the same canonical type: equal
		// values prove the same comparison or a non-strict one from a
		// strict one; others as the bound's value satisfies need.
		if strictOf(have.Kind) != strictOf(need.Kind) || values.Rank(have.Value.Type) != values.Rank(need.Value.Type) {
			return false
		}
		if values.Compare(have.Value, need.Value) == 0 {
			return have.Kind == need.Kind || have.Kind == strictOf(need.Kind)
		}
		return satisfies(have.Value, need.Kind, need.Value)
	}
	return false
}

// provesValue reports whether equality to v implies need: an equality to
// the same value, an $in listing it, a comparison v satisfies within its
// type class, or $exists when v is not null (null matches missing fields).
func provesValue(v bson.RawValue, need *query.Node) bool {
	switch need.Kind {
	case query.KindExists:
		return v.Type != bson.TypeNull && v.Type != bson.TypeUndefined
	case query.KindEq:
		return values.Equal(v, need.Value)
	case query.KindIn:
		vals, err := need.Value.Array().Values()
		if err != nil {
			return false
		}
		for _, w := range vals {
			if values.Equal(v, w) {
				return true
			}
		}
		return false
	case query.KindGt, query.KindGte, query.KindLt, query.KindLte:
		return values.Rank(v.Type) == values.Rank(need.Value.Type) && satisfies(v, need.Kind, need.Value)
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
