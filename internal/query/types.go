package query

import (
	"math"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// typeSet is a compiled $type operand: a set of BSON types, and whether
// the alias "number" (all four numeric types) was named, which MongoDB's
// MatcherTypeSet keeps apart from the types named.
type typeSet struct {
	bits   [4]uint64
	number bool
}

func (s *typeSet) add(t bson.Type) { s.bits[byte(t)/64] |= 1 << (byte(t) % 64) }

func (s typeSet) has(t bson.Type) bool {
	if t == 0 {
		return false
	}
	return s.number && values.IsNumber(t) || s.bits[byte(t)/64]&(1<<(byte(t)%64)) != 0
}

func (s typeSet) empty() bool { return s.bits == [4]uint64{} && !s.number }

// serialized is the set as MatcherTypeSet::toBSONArray writes it: "number"
// if named, then the type numbers named, ascending from MinKey (-1).
func (s typeSet) serialized() bson.A {
	var out bson.A
	if s.number {
		out = append(out, "number")
	}
	if s.bits[bson.TypeMinKey/64]&(1<<(bson.TypeMinKey%64)) != 0 {
		out = append(out, int32(-1))
	}
	for t := 1; t < int(bson.TypeMinKey); t++ {
		if s.bits[t/64]&(1<<(t%64)) != 0 {
			out = append(out, int32(t))
		}
	}
	return out
}

// Types lists the BSON types a $type node matches, in type number order
// (nil for any other node).
func (n *Node) Types() []bson.Type {
	if n.Kind != KindType {
		return nil
	}
	var out []bson.Type
	for t := 1; t < 256; t++ {
		if n.types.has(bson.Type(t)) {
			out = append(out, bson.Type(t))
		}
	}
	return out
}

// parseTypeSet parses the $type operand at path: a type alias, a type
// number, or an array of those (MatcherTypeSet::parse); an empty array
// fails naming the path, as MongoDB's parseType does.
func parseTypeSet(path string, v bson.RawValue) (typeSet, error) {
	var s typeSet
	if v.Type == bson.TypeArray {
		it := rawdoc.Iterate(v.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			if err := s.addSpec(e); err != nil {
				return s, err
			}
		}
		if s.empty() {
			return s, mongoerr.New(mongoerr.FailedToParse, "%s must match at least one type", path)
		}
		return s, nil
	}
	return s, s.addSpec(v)
}

func (s *typeSet) addSpec(v bson.RawValue) error {
	if name, ok := v.StringValueOK(); ok {
		if name == "number" {
			s.number = true
			return nil
		}
		t, ok := values.TypeByName(name)
		if !ok {
			if name == "missing" {
				// the $type expression's name of a missing value
				return mongoerr.New(mongoerr.BadValue, "'missing' is not a legal type name. To query for non-existence of a field, use {$exists:false}.")
			}
			return mongoerr.New(mongoerr.BadValue, "Unknown type name alias: %s", name)
		}
		s.add(t)
		return nil
	}
	if !values.IsNumber(v.Type) {
		return mongoerr.New(mongoerr.TypeMismatch, "type must be represented as a number or a string")
	}
	// MongoDB's messages show the code as a double (elt.number()), and take
	// only an integer in an int's range (parseIntegerElementToInt).
	f, _ := values.Float64(v)
	n, ok := values.Int64(v)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return mongoerr.New(mongoerr.BadValue, "Invalid numerical type code: %s", values.StreamDouble(f))
	}
	if n == 0 {
		return mongoerr.New(mongoerr.BadValue, "Invalid numerical type code: %s. Instead use {$exists:false}.", values.StreamDouble(f))
	}
	t, ok := values.TypeByNumber(int(n))
	if !ok {
		return mongoerr.New(mongoerr.BadValue, "Invalid numerical type code: %s", values.StreamDouble(f))
	}
	s.add(t)
	return nil
}
