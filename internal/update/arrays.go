package update

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// addToSetOp is $addToSet: appends each value (several with $each) that the
// array does not already hold, comparing with MongoDB's value equality
// under the collation; the $each values are deduplicated first. A missing
// field becomes a new array.
type addToSetOp struct {
	vals []bson.RawValue
	coll *collation.Collator
}

func parseAddToSet(v bson.RawValue, coll *collation.Collator) (leaf, error) {
	vals := []bson.RawValue{v}
	// Only a document whose first field is $each is the clause (MongoDB's
	// AddToSetNode::init); {x: 1, $each: [...]} is a value like any other.
	if v.Type == bson.TypeEmbeddedDocument {
		if first, err := v.Document().IndexErr(0); err == nil && first.Key() == "$each" {
			each := first.Value()
			if each.Type != bson.TypeArray {
				return nil, mongoerr.New(mongoerr.TypeMismatch,
					"The argument to $each in $addToSet must be an array but it was of type %s",
					values.TypeName(each.Type))
			}
			if n, _ := v.Document().Elements(); len(n) > 1 {
				return nil, mongoerr.New(mongoerr.BadValue,
					"Found unexpected fields after $each in $addToSet: %s", values.Shell(v))
			}
			vals = nil
			for _, e := range arrayValues(each) {
				if !containsValue(coll, vals, e) {
					vals = append(vals, e)
				}
			}
		}
	}
	return addToSetOp{vals: vals, coll: coll}, nil
}

// containsValue reports whether list holds a value equal to v under coll.
func containsValue(coll *collation.Collator, list []bson.RawValue, v bson.RawValue) bool {
	for _, x := range list {
		if coll.Compare(x, v) == 0 {
			return true
		}
	}
	return false
}

func (o addToSetOp) apply(c *applyCtx, s *slot) error {
	if s.n == nil {
		arr := &node{t: bson.TypeArray, expanded: true}
		for _, v := range o.vals {
			arr.elems = append(arr.elems, rawNode(v))
		}
		return c.set(s, arr, false)
	}
	if s.n.t != bson.TypeArray {
		return mongoerr.New(mongoerr.BadValue,
			"Cannot apply $addToSet to non-array field. Field named '%s' has non-array type %s",
			s.name, values.TypeName(s.n.t))
	}
	existing := arrayValues(s.n.value())
	var add []*node
	for _, v := range o.vals {
		if !containsValue(o.coll, existing, v) {
			add = append(add, rawNode(v))
		}
	}
	if len(add) == 0 {
		return nil
	}
	s.n.expand()
	s.n.elems = append(s.n.elems, add...)
	return c.modified(s, len(add))
}

// popOp is $pop: removes the last element (1) or the first (-1).
type popOp struct{ first bool }

func parsePop(path string, v bson.RawValue) (leaf, error) {
	if !values.IsNumber(v.Type) {
		return nil, mongoerr.New(mongoerr.FailedToParse, "Expected a number in: %s", values.ShellElement(path, v))
	}
	n, ok := values.Int64(v)
	if !ok || (n != 1 && n != -1) {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$pop expects 1 or -1, found: %s", values.Shell(v))
	}
	return popOp{first: n == -1}, nil
}

func (o popOp) apply(c *applyCtx, s *slot) error {
	if s.n == nil {
		return checkViable(s)
	}
	if s.n.t != bson.TypeArray {
		return mongoerr.New(mongoerr.TypeMismatch, "Path '%s' contains an element of non-array type '%s'",
			s.path(), values.TypeName(s.n.t))
	}
	s.n.expand()
	if len(s.n.elems) == 0 {
		return nil
	}
	if o.first {
		s.n.elems = s.n.elems[1:]
	} else {
		s.n.elems = s.n.elems[:len(s.n.elems)-1]
	}
	return c.modified(s, 0)
}

// pullOp is $pull and $pullAll: removes every element that the condition
// selects. name is the operator, for messages.
type pullOp struct {
	match func(v bson.RawValue) bool
}

// parsePull builds $pull's condition as MongoDB does: a document whose first
// field is a field name or a query-level operator ($or, $and, $nor...) is a
// query each document element must match; a document of value operators
// ({$gte: 6}, {$elemMatch: ...}) and a regular expression are conditions on
// the element itself, as in a query ({v: /^a/} matches the strings it
// matches); any other value selects equal elements.
func parsePull(v bson.RawValue, o *Options) (leaf, error) {
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeRegex {
		return pullOp{match: func(e bson.RawValue) bool { return o.Collator.Compare(e, v) == 0 }}, nil
	}
	compile := o.Compile
	if compile == nil {
		return nil, mongoerr.New(mongoerr.NotImplemented, "$pull with a condition requires a query compiler")
	}
	onElement := v.Type == bson.TypeRegex
	if !onElement {
		first, err := v.Document().IndexErr(0)
		onElement = err == nil && isOperatorName(first.Key()) && !queryOperators[first.Key()]
	}
	if onElement {
		m, err := compile(wrap(pullField, v))
		if err != nil {
			return nil, err
		}
		return pullOp{match: func(e bson.RawValue) bool { return m.Match(wrap(pullField, e)) }}, nil
	}
	m, err := compile(v.Document())
	if err != nil {
		return nil, err
	}
	return pullOp{match: func(e bson.RawValue) bool {
		return e.Type == bson.TypeEmbeddedDocument && m.Match(e.Document())
	}}, nil
}

// pullField is the field name an element is wrapped under to be matched by
// an operator condition.
const pullField = "v"

// queryOperators are the query operators that take no field path: a $pull
// condition that begins with one is a query on document elements (MongoDB
// wraps only conditions that begin with a value operator).
var queryOperators = map[string]bool{
	"$and": true, "$or": true, "$nor": true, "$expr": true, "$where": true, "$text": true,
	"$comment": true, "$jsonSchema": true, "$alwaysTrue": true, "$alwaysFalse": true,
}

// isOperatorName reports whether a query field is an operator rather than a
// field path ($ref, $id and $db are DBRef fields).
func isOperatorName(k string) bool {
	return len(k) > 0 && k[0] == '$' && k != "$ref" && k != "$id" && k != "$db"
}

func parsePullAll(v bson.RawValue, coll *collation.Collator) (leaf, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.BadValue, "$pullAll requires an array argument but was given a %s",
			values.TypeName(v.Type))
	}
	list := arrayValues(v)
	return pullOp{match: func(e bson.RawValue) bool { return containsValue(coll, list, e) }}, nil
}

func (o pullOp) apply(c *applyCtx, s *slot) error {
	if s.n == nil {
		return checkViable(s)
	}
	if s.n.t != bson.TypeArray {
		// $pull's words for $pullAll too: MongoDB's ArrayCullingNode
		return mongoerr.New(mongoerr.BadValue, "Cannot apply $pull to a non-array value")
	}
	s.n.expand()
	kept := s.n.elems[:0:0]
	for _, e := range s.n.elems {
		if !o.match(e.value()) {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(s.n.elems) {
		return nil
	}
	s.n.elems = kept
	return c.modified(s, 0)
}
