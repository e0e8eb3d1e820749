package query

import (
	"github.com/folio-db/folio/internal/regex"
	"slices"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// inSet is a compiled $in list: equalities kept sorted in MongoDB's order so
// that large application-join lists are searched in O(log n), plus the
// regexes of the list, which match strings as $regex does.
type inSet struct {
	sorted  []bson.RawValue
	coll    *collation.Collator // sorted holds collation keys under it
	hasNull bool
	regexes []*Node
}

func newInSet(eqs []bson.RawValue, regexes []*Node) *inSet {
	s := &inSet{sorted: eqs, regexes: regexes}
	slices.SortFunc(s.sorted, values.Compare)
	for _, v := range eqs {
		if v.Type == bson.TypeNull {
			s.hasNull = true
		}
	}
	return s
}

// matches implements InMatchExpression: v equals one of the listed values
// (null in the list also matching missing and undefined) or matches one of
// its regexes.
func (s *inSet) matches(v bson.RawValue) bool {
	if values.Rank(v.Type) == rankMissing {
		if s.hasNull {
			return true
		}
	}
	if s.coll != nil && collation.Collatable(v) {
		buf := keyBufs.Get().(*[]byte)
		tv := s.coll.TransformAppend((*buf)[:0], v)
		_, found := slices.BinarySearchFunc(s.sorted, tv, values.Compare)
		*buf = tv.Value[:0]
		keyBufs.Put(buf)
		if found {
			return true
		}
	} else if _, found := slices.BinarySearchFunc(s.sorted, v, values.Compare); found {
		return true
	}
	for _, r := range s.regexes {
		if r.regexMatches(v) {
			return true
		}
	}
	return false
}

// regexNode builds a Regex node for a pattern and its options.
func regexNode(path string, v bson.RawValue, re *regex.Regexp) *Node {
	return leaf(KindRegex, path, v, func(n *Node) { n.re = re })
}
