package query

import (
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

var (
	rankMissing = values.Rank(0)
	rankNull    = values.Rank(bson.TypeNull)
)

// matchDoc evaluates n against a document. pos is the positional index
// recorded by the child MongoDB's normalized tree evaluates last among
// those that traversed an array (MatchDetails' elemMatchKey; see
// matchAnd), or -1.
func (n *Node) matchDoc(doc []byte) (bool, int) {
	switch n.Kind {
	case KindAnd:
		ok, pos, _ := n.matchAnd(doc)
		return ok, pos
	case KindOr:
		// MongoDB's $or records no position (its clauses match without
		// MatchDetails), unless its optimizer made it its only clause (or
		// an $in: orAsIn).
		if len(n.Children) == 1 {
			return n.Children[0].matchDoc(doc)
		}
		for _, c := range n.Children {
			if ok, _ := c.matchDoc(doc); ok {
				return true, -1
			}
		}
		return false, -1
	case KindNor:
		for _, c := range n.Children {
			if ok, _ := c.matchDoc(doc); ok {
				return false, -1
			}
		}
		return true, -1
	case KindNot:
		ok, _ := n.Children[0].matchDoc(doc)
		return !ok, -1
	case KindAlwaysTrue:
		return true, -1
	case KindAlwaysFalse:
		return false, -1
	case KindExpr:
		return n.expr.matches(doc), -1
	case KindWhere:
		return n.where.matches(doc), -1
	case KindText:
		return n.text.matches(doc), -1
	case KindJSONSchema:
		return n.schema.matches(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}), -1
	case KindSchemaMinProperties:
		return int64(rawdoc.Len(doc)) >= n.count, -1
	case KindSchemaMaxProperties:
		return int64(rawdoc.Len(doc)) <= n.count, -1
	case KindExprEq, KindExprGt, KindExprGte, KindExprLt, KindExprLte:
		return n.exprCompares(doc), -1
	}
	return n.walk.walkDoc(doc, 0, -1)
}

// visit is the walker callback of a leaf node: the outermost implicit array
// offset wins over a position found inside the value ($elemMatch).
func (n *Node) visit(v bson.RawValue, off int) (bool, int) {
	ok, inner := n.matchValue(v)
	if !ok {
		return false, -1
	}
	if off >= 0 {
		return true, off
	}
	return true, inner
}

// MatchesValue reports whether v, one value of n's path that is not an
// array (the path missing: the zero RawValue), meets n.
func (n *Node) MatchesValue(v bson.RawValue) bool {
	ok, _ := n.matchValue(v)
	return ok
}

// matchValue tests a single value (MongoDB's matchesSingleElement); v is the
// zero RawValue when the path is missing. pos is the matching element's
// index for $elemMatch, else -1.
func (n *Node) matchValue(v bson.RawValue) (bool, int) {
	switch n.Kind {
	case KindEq, KindLt, KindLte, KindGt, KindGte:
		if n.coll != nil {
			return n.collatedMatches(v), -1
		}
		return compareMatches(n.Kind, v, n.Value), -1
	case KindIn:
		return n.in.matches(v), -1
	case KindGeo:
		return n.geo.Matches(v), -1
	case KindRegex:
		return n.regexMatches(v), -1
	case KindExists:
		return v.Type != 0, -1
	case KindType:
		return n.types.has(v.Type), -1
	case KindMod:
		return n.modMatches(v), -1
	case KindSize:
		return v.Type == bson.TypeArray && rawdoc.Len(v.Value) == n.size, -1
	case KindElemMatchObject, KindElemMatchValue:
		return n.elemMatch(v)
	case KindBitsAllSet, KindBitsAnySet, KindBitsAllClear, KindBitsAnyClear:
		return n.bitsMatch(v), -1
	case KindAnd:
		pos := -1
		for _, c := range n.Children {
			ok, p := c.matchValue(v)
			if !ok {
				return false, -1
			}
			if p >= 0 {
				pos = p
			}
		}
		return true, pos
	case KindNot:
		ok, _ := n.Children[0].matchValue(v)
		return !ok, -1
	case KindAlwaysTrue:
		return true, -1
	case KindExprEq, KindExprGt, KindExprGte, KindExprLt, KindExprLte:
		return n.exprComparesValue(v), -1
	}
	return false, -1
}

// compareMatches implements ComparisonMatchExpression: values of different
// canonical types never compare, except that null equals missing and
// undefined for $eq, $lte and $gte, and MinKey/MaxKey operands bound every
// value for the range operators. NaN equals only NaN and is neither less nor
// greater than any number.
func compareMatches(k Kind, v, rhs bson.RawValue) bool {
	rv, rr := values.Rank(v.Type), values.Rank(rhs.Type)
	if rv != rr {
		if (rv == rankMissing && rr == rankNull) || (rv == rankNull && rr == rankMissing) {
			return k == KindEq || k == KindLte || k == KindGte
		}
		switch rhs.Type {
		case bson.TypeMaxKey:
			return k == KindLt || k == KindLte
		case bson.TypeMinKey:
			return k == KindGt || k == KindGte
		}
		return false
	}
	if values.IsNumber(v.Type) {
		vn, rn := values.IsNaN(v), values.IsNaN(rhs)
		if vn || rn {
			return vn && rn && (k == KindEq || k == KindLte || k == KindGte)
		}
	}
	c := values.Compare(v, rhs)
	switch k {
	case KindEq:
		return c == 0
	case KindLt:
		return c < 0
	case KindLte:
		return c <= 0
	case KindGt:
		return c > 0
	}
	return c >= 0
}

// regexMatches implements RegexMatchExpression: strings and symbols match
// the pattern; a stored regex matches when pattern and flags are identical.
func (n *Node) regexMatches(v bson.RawValue) bool {
	switch v.Type {
	case bson.TypeString, bson.TypeSymbol:
		if len(v.Value) < 5 {
			return false
		}
		return n.re.Match(v.Value[4 : len(v.Value)-1])
	case bson.TypeRegex:
		p, o := v.Regex()
		rp, ro := n.Value.Regex()
		return p == rp && o == ro
	}
	return false
}

// modMatches implements $mod (ModMatchExpression::matchesSingleElement):
// doubles and decimals are truncated toward zero; NaN, infinities and
// values whose truncation no int64 holds never match.
func (n *Node) modMatches(v bson.RawValue) bool {
	if !values.IsNumber(v.Type) {
		return false
	}
	x, ok := values.TruncInt64(v)
	if !ok {
		return false
	}
	return x%n.mod[0] == n.mod[1]
}

// elemMatch implements $elemMatch: v must be an array with an element that
// satisfies every child. In the object form the children form a filter over
// document (or array) elements; in the value form they test the element
// itself. pos is the matching element's index.
func (n *Node) elemMatch(v bson.RawValue) (bool, int) {
	if v.Type != bson.TypeArray {
		return false, -1
	}
	it := rawdoc.Iterate(v.Value)
	for idx := 0; ; idx++ {
		_, e, ok := it.Next()
		if !ok {
			return false, -1
		}
		if n.Kind == KindElemMatchObject {
			if e.Type != bson.TypeEmbeddedDocument && e.Type != bson.TypeArray {
				continue
			}
			if ok, _ := n.Children[0].matchDoc(e.Value); ok {
				return true, idx
			}
			continue
		}
		all := true
		for _, c := range n.Children {
			if ok, _ := c.matchValue(e); !ok {
				all = false
				break
			}
		}
		if all {
			return true, idx
		}
	}
}
