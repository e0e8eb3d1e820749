// Package query implements MongoDB's query language over raw BSON documents:
// filter matching (with the positional information `$` updates and
// projections use), find projections, and sort order.
package query

import (
	"github.com/folio-db/folio/internal/regex"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/mongoerr"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Kind is the operator a Node applies.
type Kind uint8

// Node kinds. Operators MongoDB defines as negations are represented as
// negations, as MongoDB's own parse tree does: $ne is Not(Eq), $nin is
// Not(In), {$exists: false} is Not(Exists), and $all is an And of Eq, Regex
// or ElemMatch nodes on the same path.
const (
	KindAnd Kind = iota
	KindOr
	KindNor
	KindNot
	KindAlwaysTrue
	KindAlwaysFalse
	KindEq
	KindLt
	KindLte
	KindGt
	KindGte
	KindIn
	KindRegex
	KindExists
	KindType
	KindMod
	KindSize
	KindElemMatchObject
	KindElemMatchValue
	KindBitsAllSet
	KindBitsAnySet
	KindBitsAllClear
	KindBitsAnyClear
	// KindExpr is {$expr: <aggregation expression>}: it matches when the
	// expression evaluates to a truthy value.
	KindExpr
	// KindJSONSchema is {$jsonSchema: <schema>}: it matches documents the
	// JSON Schema validates. Value is the schema document.
	KindJSONSchema
	// KindWhere is {$where: <JavaScript>}: it matches when the function
	// returns a truthy value for the document.
	KindWhere
	// KindText is {$text: {...}}: it matches through the collection's
	// text index (see TextSearch).
	KindText
	// KindGeo is $geoWithin, $geoIntersects, $near or $nearSphere (see
	// Geo).
	KindGeo
	// KindSchemaMinProperties and KindSchemaMaxProperties are MongoDB's
	// {$_internalSchemaMinProperties: n} and
	// {$_internalSchemaMaxProperties: n}, the expressions $jsonSchema's
	// minProperties and maxProperties translate to: the document has at
	// least (at most) n fields. Value is n as written.
	KindSchemaMinProperties
	KindSchemaMaxProperties
	// KindExprEq ... KindExprLte are MongoDB's $_internalExprEq, $_internalExprGt,
	// $_internalExprGte, $_internalExprLt and $_internalExprLte, the
	// conditions an $expr comparing a field with a known value implies
	// (expr.Expr.Rewrite), which an index can bound: the value at Path
	// compared with Value in the expression language's order (no type
	// bracketing, missing below null), true whenever an array lies along
	// the path, so that they hold every document the $expr matches.
	KindExprEq
	KindExprGt
	KindExprGte
	KindExprLt
	KindExprLte
)

var kindNames = [...]string{
	KindAnd: "$and", KindOr: "$or", KindNor: "$nor", KindNot: "$not",
	KindAlwaysTrue: "$alwaysTrue", KindAlwaysFalse: "$alwaysFalse",
	KindEq: "$eq", KindLt: "$lt", KindLte: "$lte", KindGt: "$gt", KindGte: "$gte",
	KindIn: "$in", KindRegex: "$regex", KindExists: "$exists", KindType: "$type",
	KindMod: "$mod", KindSize: "$size", KindElemMatchObject: "$elemMatch",
	KindElemMatchValue: "$elemMatch", KindBitsAllSet: "$bitsAllSet",
	KindBitsAnySet: "$bitsAnySet", KindBitsAllClear: "$bitsAllClear",
	KindBitsAnyClear: "$bitsAnyClear", KindExpr: "$expr", KindJSONSchema: "$jsonSchema",
	KindWhere: "$where", KindText: "$text", KindGeo: "$geo",
	KindSchemaMinProperties: "$_internalSchemaMinProperties", KindSchemaMaxProperties: "$_internalSchemaMaxProperties",
	KindExprEq: "$_internalExprEq", KindExprGt: "$_internalExprGt", KindExprGte: "$_internalExprGte",
	KindExprLt: "$_internalExprLt", KindExprLte: "$_internalExprLte",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Node is one node of a parsed filter. Logical nodes (And, Or, Nor, Not)
// have Children; leaf nodes test the values found at Path against Value.
// The children of an ElemMatchObject node are a filter applied to each array
// element as a document (their paths are relative to the element); the
// children of an ElemMatchValue node have an empty Path and test each
// element itself. Nodes are immutable once compiled.
type Node struct {
	Kind Kind
	// Path is the dotted field path a leaf node tests.
	Path string
	// Value is the operand as written in the filter: the comparison value,
	// the $in array, the regex (pattern and options), the $type spec, the
	// $mod array, the $size number or the bit mask.
	Value    bson.RawValue
	Children []*Node

	walk   walker
	re     *regex.Regexp
	in     *inSet
	types  typeSet
	mod    [2]int64
	size   int
	count  int64 // $_internalSchemaMin/MaxProperties' number of fields
	bits   []uint32
	expr   *exprMatch
	schema *jsonSchema
	// coll is the collation comparisons ($eq, ranges, $in) apply (nil:
	// simple), and collated the operand with its strings turned into
	// collation keys.
	coll     *collation.Collator
	collated bson.RawValue
	where    *whereMatch
	text     *TextSearch
	geo      *geo.Query
	// absorbed marks a $and whose clauses MongoDB's optimizer hoists into
	// its parent $and's, and posRank is a clause's place in its $and as
	// MongoDB sorts it (see rankPositions).
	absorbed bool
	posRank  int32
	// Within, on a condition the planner read out of an $elemMatch on
	// documents with its path made absolute, is that $elemMatch: one
	// array element meets every condition within it.
	Within *Scope
}

// Scope is an $elemMatch on documents whose conditions the planner reads
// with absolute paths: Path is the $elemMatch's own absolute path, Parts
// the number of its parts.
type Scope struct {
	Path  string
	Parts int
}

// Walk calls fn for n and, while fn returns true, for each node below it in
// depth-first order.
func Walk(n *Node, fn func(*Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, c := range n.Children {
		Walk(c, fn)
	}
}

// Filter is a compiled query filter; safe for concurrent use by many
// goroutines.
type Filter struct {
	root *Node
	doc  bson.Raw // the filter as written
	// hasExpr: the filter holds an $expr, $where or $text, whose
	// evaluation may fail; usesExpr: it holds an $expr
	hasExpr, usesExpr bool
	coll              *collation.Collator
}

// Clause is the filter of n, a node of f's tree (a branch of one of its
// $or), matched as f matches it; its Doc is f's.
func (f *Filter) Clause(n *Node) *Filter {
	c := *f
	c.root = n
	return &c
}

// Collator is the collation the filter's comparisons follow, nil for the
// simple one.
func (f *Filter) Collator() *collation.Collator { return f.coll }

// Doc is the filter document as written.
func (f *Filter) Doc() bson.Raw { return f.doc }

// Root is the parsed filter tree. An empty filter is an And with no children.
func (f *Filter) Root() *Node { return f.root }

// Match reports whether doc satisfies the filter; a document on which an
// $expr fails to evaluate does not match (MatchErr reports the error).
func (f *Filter) Match(doc bson.Raw) bool {
	ok, _, _ := f.MatchErr(doc)
	return ok
}

// MatchPositional also reports the index of the array element that satisfied
// the query in the first array traversed (what MongoDB's positional `$`
// update and `field.$` projection use); pos is -1 when no array was
// traversed.
func (f *Filter) MatchPositional(doc bson.Raw) (matched bool, pos int) {
	ok, pos, _ := f.MatchErr(doc)
	return ok, pos
}

// UsesExpr reports whether the filter holds an $expr clause, at any depth.
func (f *Filter) UsesExpr() bool { return f.usesExpr }

// EncryptionBanned is MongoDB's error for a filter parsed without the
// encryption keywords (kEncryptKeywords, which a validator whose action is
// warn or whose level is moderate lacks, lest plaintext reach the log)
// that holds a $jsonSchema with encrypt or encryptMetadata; nil when
// there is none.
func (f *Filter) EncryptionBanned() error {
	var err error
	Walk(f.root, func(n *Node) bool {
		if n.Kind == KindJSONSchema && n.schema.UsesEncryption() {
			err = mongoerr.New(mongoerr.QueryFeatureNotAllowed, "Encryption-related validator keywords are not allowed in this context")
		}
		return err == nil
	})
	return err
}

// MatchErr is MatchPositional that also reports an $expr evaluation error,
// which in MongoDB fails the query.
func (f *Filter) MatchErr(doc bson.Raw) (matched bool, pos int, err error) {
	if f.hasExpr {
		defer func() {
			if r := recover(); r != nil {
				failure, ok := r.(exprFailure)
				if !ok {
					panic(r)
				}
				matched, pos, err = false, -1, failure.err
			}
		}()
	}
	ok, pos := f.root.matchDoc(doc)
	if !ok {
		return false, -1, nil
	}
	return true, pos, nil
}
