package query

import (
	"math"
	"math/big"
	"strings"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// projType is the kind a projection turns out to be while parsing.
type projType uint8

const (
	ptUnknown projType = iota
	ptInclusion
	ptExclusion
)

// projParse is the state of parsing one projection (MongoDB's
// projection_ast ParseContext).
type projParse struct {
	typ                                 projType
	idSpecified, idIncluded, idExcluded bool
	hasSlice, hasElemMatch              bool
	// posPath is the full path of the positional projection (`a.b.$`
	// projects a.b), if any.
	posPath []string
	// let is the command's let variables for computed fields, if any.
	let *expr.Let
	// coll is the command's collation, which computed fields' comparisons
	// and $elemMatch follow (nil: simple).
	coll *collation.Collator
	// metas are the top-level fields set to a document's metadata.
	metas []metaField
	// exprMetas are the metadata the computed fields read.
	exprMetas []string
	// sortKeyPaths are the paths set to {$meta: "sortKey"}, at any depth,
	// in the projection's order.
	sortKeyPaths [][]string
}

// CompileProjection parses a find() projection. Booleans and numbers include
// (truthy) or exclude fields; other values compute fields; {$slice},
// {$elemMatch} and `field.$` are the find-only operators. Mixing inclusion
// and exclusion (other than of _id) fails with 31253/31254, and overlapping
// paths with 31249/31250, as in MongoDB.
func CompileProjection(spec bson.Raw) (*Projection, error) {
	return CompileProjectionLet(spec, nil, nil)
}

// CompileProjectionLet parses a projection whose computed fields may use
// the command's let variables (nil: none) and compare under its collation
// coll, as $elemMatch does (nil: simple).
func CompileProjectionLet(spec bson.Raw, let *expr.Let, coll *collation.Collator) (*Projection, error) {
	if len(spec) > 0 && rawdoc.Validate(spec) != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid BSON in projection document")
	}
	ps := &projParse{let: let, coll: coll}
	root := &projNode{kind: pkInternal}
	it := rawdoc.Iterate(spec)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		key := string(k)
		if key == "_id" || strings.HasPrefix(key, "_id.") {
			ps.idSpecified = true
		}
		if err := ps.element(key, v, "", root); err != nil {
			return nil, err
		}
	}
	if ps.typ == ptUnknown {
		ps.typ = ps.defaultType()
	}
	if ps.typ == ptInclusion && !ps.idSpecified {
		root.children = append(root.children, &projNode{name: "_id", kind: pkInclude})
	}
	if ps.typ == ptExclusion && ps.idIncluded {
		root.children = removeChild(root.children, "_id")
	}
	markSubtrees(root)
	return &Projection{root: root, inclusion: ps.typ == ptInclusion, posPath: ps.posPath, metas: ps.metas, exprMetas: ps.exprMetas, sortKeyPaths: ps.sortKeyPaths}, nil
}

// defaultType decides the kind of a projection that has only _id, $slice
// and $elemMatch elements (computeProjectionType).
func (ps *projParse) defaultType() projType {
	switch {
	case ps.hasSlice:
		if ps.idIncluded {
			return ptInclusion
		}
		return ptExclusion
	case ps.hasElemMatch, ps.idIncluded:
		return ptInclusion
	}
	return ptExclusion
}

func removeChild(children []*projNode, name string) []*projNode {
	out := children[:0]
	for _, c := range children {
		if c.name != name {
			out = append(out, c)
		}
	}
	return out
}

func markSubtrees(n *projNode) {
	for _, c := range n.children {
		markSubtrees(c)
		n.hasExpr = n.hasExpr || c.kind == pkExpr || c.hasExpr
	}
}

// element parses one field of a projection (parseElement). Since MongoDB
// 4.4 the positional operator is only a trailing ".$" (`a.b.$`), which
// includes its path; a ".$." inside a field name fails first (31394), and
// the positional form only goes with an inclusion.
func (ps *projParse) element(key string, v bson.RawValue, parentPath string, parent *projNode) error {
	positional, err := ProjectionKey(key, true)
	if err != nil {
		return err
	}
	switch {
	case v.Type == bson.TypeEmbeddedDocument:
		if positional {
			return mongoerr.New(mongoerr.ProjectionPositionalWithObject, "positional projection cannot be used with an expression or sub object")
		}
		return ps.subObject(key, v.Value, parentPath, parent)
	case values.IsNumber(v.Type) || v.Type == bson.TypeBoolean:
		if values.Truthy(v) {
			return ps.inclusion(key, parentPath, parent, positional)
		}
		if positional {
			return mongoerr.New(mongoerr.ProjectionPositionalWithExclusion, "positional projection cannot be used with exclusion")
		}
		return ps.exclusion(key, parent)
	}
	if positional {
		return mongoerr.New(mongoerr.ProjectionPositionalWithLiteral, "positional projection cannot be used with a literal")
	}
	e, err := ps.expr(v)
	if err != nil {
		return err
	}
	if err := addProjNode(parent, key, &projNode{kind: pkExpr, expr: e}); err != nil {
		return err
	}
	if ps.typ == ptExclusion {
		return mongoerr.New(mongoerr.ProjectionExpressionInExclusion, "Cannot use an expression %s: %s in an exclusion projection", key, v)
	}
	ps.typ = ptInclusion
	return nil
}

// ProjectionKey makes the first checks of MongoDB's projection parser on
// a field name (parseElement), for find (find) or aggregation: a
// positional path, ending in ".$", only in find (31324), then no ".$."
// inside the name (31394: since 4.4 the positional operator ends a path).
// positional reports the trailing ".$".
func ProjectionKey(key string, find bool) (positional bool, err error) {
	positional = strings.HasSuffix(key, ".$")
	if positional && !find {
		return false, mongoerr.New(mongoerr.ProjectionPositionalInAggregation, "Cannot use positional projection in aggregation projection")
	}
	if strings.Contains(key, ".$.") {
		return false, mongoerr.New(mongoerr.ProjectionPositionalInMiddle, "As of 4.4, it's illegal to specify positional operator in the middle of a path."+
			"Positional projection may only be used at the end, for example: a.b.$. If the query previously used a form like a.b.$.d, "+
			"remove the parts following the '$' and the results will be equivalent.")
	}
	return positional, nil
}

// CheckOperatorName checks the one field op of a projection's sub-object
// {op: ...} that starts with '$' and is none of find's $slice, $elemMatch
// and $meta: unless op names an expression, or is a valid field path
// (before a trailing ".$"), which makes the sub-object a sub-projection,
// MongoDB refuses it with 31325.
func CheckOperatorName(op string) error {
	if expr.IsOperator(op) || expr.CheckFieldPath(strings.TrimSuffix(op, ".$")) == nil {
		return nil
	}
	return mongoerr.New(mongoerr.ProjectionUnknownExpression, "Unknown expression %s", op)
}

// subObject parses {key: {...}}: a find operator, an expression, or a
// sub-projection, which may not be empty (51270, as MongoDB's parser
// refuses a sub-projection without fields in find and $project alike).
func (ps *projParse) subObject(key string, obj []byte, parentPath string, parent *projNode) error {
	op := rawdoc.FirstKey(obj)
	if strings.HasPrefix(op, "$") && countFields(obj) == 1 {
		arg := rawdoc.Lookup(obj, op)
		switch op {
		case "$slice":
			return ps.slice(key, arg, obj, parent)
		case "$elemMatch":
			return ps.elemMatch(key, arg, parent)
		case "$meta":
			return ps.meta(key, arg, parentPath, parent)
		}
		if err := CheckOperatorName(op); err != nil {
			return err
		}
		if expr.IsOperator(op) {
			return ps.generic(key, obj, parent)
		}
	}
	if countFields(obj) == 0 {
		return mongoerr.New(mongoerr.ProjectionEmptySubObject, "An empty sub-projection is not a valid value. Found empty object at path")
	}
	node, err := internalNode(parent, key)
	if err != nil {
		return err
	}
	it := rawdoc.Iterate(obj)
	for {
		k, v, ok := it.Next()
		if !ok {
			return nil
		}
		if err := ps.element(string(k), v, joinPath(parentPath, key), node); err != nil {
			return err
		}
	}
}

func countFields(doc []byte) int {
	n := 0
	it := rawdoc.Iterate(doc)
	for {
		if _, _, ok := it.Next(); !ok {
			return n
		}
		n++
	}
}

// generic parses {key: {$op: ...}} as an aggregation expression
// (attemptToParseGenericExpression): it makes the projection an
// inclusion, and fails in an exclusion (31252).
func (ps *projParse) generic(key string, obj []byte, parent *projNode) error {
	if err := expr.CheckFieldPath(key); err != nil {
		return err
	}
	if ps.typ == ptExclusion {
		return mongoerr.New(mongoerr.ProjectionExpressionInExclusionMeta, "Cannot use expression other than $meta in exclusion projection")
	}
	ps.typ = ptInclusion
	e, err := ps.expr(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: obj})
	if err != nil {
		return err
	}
	return addProjNode(parent, key, &projNode{kind: pkExpr, expr: e})
}

// slice parses {key: {$slice: arg}}, obj being {$slice: arg}: the find
// $slice when arg is n or [skip, limit] with limit > 0, else, as
// MongoDB's parseSubObjectAsExpression does, the $slice expression (so
// {$slice: ["$a", 1]} computes a field). When neither parses, the
// expression's error is returned with the find form's as context.
func (ps *projParse) slice(key string, arg bson.RawValue, obj []byte, parent *projNode) error {
	findErr := ps.findSlice(key, arg, parent)
	if findErr == nil {
		return nil
	}
	err := ps.generic(key, obj, parent)
	if err == nil {
		return nil
	}
	fe := mongoerr.As(findErr)
	return mongoerr.AddContext(err, "Invalid $slice syntax. The given syntax "+values.ShellDoc(obj)+
		" did not match the find() syntax because :: "+fe.Code.Name()+": "+fe.Msg+
		" :: The given syntax did not match the expression $slice syntax.")
}

// findSlice parses the find $slice: n, or [skip, limit] with limit > 0.
func (ps *projParse) findSlice(key string, arg bson.RawValue, parent *projNode) error {
	n := &projNode{kind: pkSlice}
	switch {
	case values.IsNumber(arg.Type):
		n.limit = toInt32(arg)
	case arg.Type == bson.TypeArray:
		var args []bson.RawValue
		it := rawdoc.Iterate(arg.Value)
		for {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			args = append(args, e)
		}
		if len(args) != 2 {
			return mongoerr.New(mongoerr.ProjectionSliceArrayInvalid, "$slice array argument should be of form [skip, limit]")
		}
		if !values.IsNumber(args[0].Type) {
			return mongoerr.New(mongoerr.ProjectionSliceSkipNotNumber, "$slice expects the skip argument to be a number, got %s", values.TypeName(args[0].Type))
		}
		if !values.IsNumber(args[1].Type) {
			return mongoerr.New(mongoerr.ProjectionSliceLimitNotNumber, "$slice expects the limit argument to be a number, got %s", values.TypeName(args[1].Type))
		}
		n.skip, n.limit, n.hasSkip = toInt32(args[0]), toInt32(args[1]), true
		if n.limit <= 0 {
			return mongoerr.New(mongoerr.ProjectionSliceLimitNotPositive, "$slice limit must be positive, got %d", n.limit)
		}
	default:
		return mongoerr.New(mongoerr.ProjectionSliceInvalidType, "$slice only supports numbers and [skip, limit] arrays")
	}
	if err := addProjNode(parent, key, n); err != nil {
		return err
	}
	ps.hasSlice = true
	return nil
}

// toInt32 converts a $slice number as MongoDB's BSONElement::numberInt
// does: an int64 keeps its low 32 bits (the C++ cast), a decimal rounds
// half to even and is math.MinInt32 when NaN or out of range
// (Decimal128::toInt); a double truncates toward zero, and saturates (NaN:
// 0) where the C++ cast has no defined result.
func toInt32(v bson.RawValue) int {
	switch v.Type {
	case bson.TypeInt32:
		return int(v.Int32())
	case bson.TypeInt64:
		return int(int32(v.Int64()))
	case bson.TypeDecimal128:
		return decimalToInt32(v.Decimal128())
	}
	f, _ := values.Float64(v)
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int(f)
}

// decimalToInt32 is Decimal128::toInt: d rounded half to even, or
// math.MinInt32 (the conversion's invalid result) for NaN, an infinity or
// a value outside the int32 range.
func decimalToInt32(d bson.Decimal128) int {
	c, exp, err := d.BigInt()
	switch {
	case err != nil:
		return math.MinInt32
	case c.Sign() == 0 || exp < -35: // |c| < 10^34: below one half
		return 0
	case exp > 10: // a non-zero coefficient times 10^11 is out of range
		return math.MinInt32
	}
	ten := big.NewInt(10)
	den := big.NewInt(1)
	if exp > 0 {
		c.Mul(c, new(big.Int).Exp(ten, big.NewInt(int64(exp)), nil))
	} else {
		den.Exp(ten, big.NewInt(int64(-exp)), nil)
	}
	q, r := new(big.Int).QuoRem(c, den, new(big.Int))
	switch r.Abs(r).Lsh(r, 1).Cmp(den) {
	case 1:
		q.Add(q, big.NewInt(int64(c.Sign())))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(int64(c.Sign())))
		}
	}
	if !q.IsInt64() || q.Int64() > math.MaxInt32 || q.Int64() < math.MinInt32 {
		return math.MinInt32
	}
	return int(q.Int64())
}

// elemMatch parses the $elemMatch projection of a top-level array field.
func (ps *projParse) elemMatch(key string, arg bson.RawValue, parent *projNode) error {
	if arg.Type != bson.TypeEmbeddedDocument {
		return mongoerr.New(mongoerr.ProjectionElemMatchNotObject, "elemMatch: Invalid argument, object required, but got %s", values.TypeName(arg.Type))
	}
	if ps.posPath != nil {
		return mongoerr.New(mongoerr.ProjectionPositionalAndElemMatch, "Cannot specify positional operator and $elemMatch.")
	}
	if !isRoot(parent) || strings.Contains(key, ".") {
		return mongoerr.New(mongoerr.ProjectionElemMatchNested, "Cannot use $elemMatch projection on a nested field.")
	}
	inner := bsoncore.NewDocumentBuilder().AppendDocument("$elemMatch", arg.Value).Build()
	filterDoc := bsoncore.NewDocumentBuilder().AppendDocument(key, inner).Build()
	// MongoDB parses it without special features: no $jsonSchema.
	f, err := CompileAllowed(bson.Raw(filterDoc), nil, ps.coll, NoFeatures)
	if err != nil {
		return err
	}
	if err := addProjNode(parent, key, &projNode{kind: pkElemMatch, filter: f}); err != nil {
		return err
	}
	ps.hasElemMatch = true
	return nil
}

// inclusion parses {key: true}; a positional key (`a.b.$`) includes its
// path, and which element of the first array on it remains is chosen when
// the projection is applied (applyPositional).
func (ps *projParse) inclusion(key, parentPath string, parent *projNode, positional bool) error {
	topID := key == "_id" && parentPath == ""
	if !positional {
		if err := addProjNode(parent, key, &projNode{kind: pkInclude}); err != nil {
			return err
		}
		if topID {
			ps.idIncluded = true
		}
	} else {
		if ps.posPath != nil {
			return mongoerr.New(mongoerr.ProjectionMultiplePositional, "Cannot specify more than one positional projection per query.")
		}
		if ps.hasElemMatch {
			return mongoerr.New(mongoerr.ProjectionElemMatchAndPositional, "Cannot specify positional operator and $elemMatch.")
		}
		if key == ".$" {
			return mongoerr.New(mongoerr.ProjectionPositionalNoPath, "Projection on field %s is invalid", key)
		}
		path := strings.TrimSuffix(key, ".$")
		if err := addProjNode(parent, path, &projNode{kind: pkInclude}); err != nil {
			return err
		}
		ps.posPath = strings.Split(joinPath(parentPath, path), ".")
	}
	if !topID {
		if ps.typ == ptExclusion {
			return mongoerr.New(mongoerr.ProjectionInclusionInExclusion, "Cannot do inclusion on field %s in exclusion projection", key)
		}
		ps.typ = ptInclusion
	}
	return nil
}

func (ps *projParse) exclusion(key string, parent *projNode) error {
	if err := addProjNode(parent, key, &projNode{kind: pkExclude}); err != nil {
		return err
	}
	if key == "_id" && isRoot(parent) {
		ps.idExcluded = true
		return nil
	}
	if ps.typ == ptInclusion {
		return mongoerr.New(mongoerr.ProjectionExclusionInInclusion, "Cannot do exclusion on field %s in inclusion projection", key)
	}
	ps.typ = ptExclusion
	return nil
}

func isRoot(n *projNode) bool { return !n.nested }

// addProjNode adds n at the dotted path under parent, creating internal
// nodes; a path that overlaps an existing one fails as in MongoDB.
func addProjNode(parent *projNode, path string, n *projNode) error {
	if err := expr.CheckFieldPath(path); err != nil {
		return err
	}
	parts := strings.Split(path, ".")
	cur := parent
	for i, name := range parts {
		existing := cur.child([]byte(name))
		if i == len(parts)-1 {
			if existing != nil {
				return mongoerr.New(mongoerr.ProjectionPathCollision, "Path collision at %s", path)
			}
			n.name = name
			cur.children = append(cur.children, n)
			return nil
		}
		if existing == nil {
			existing = &projNode{name: name, kind: pkInternal, nested: true}
			cur.children = append(cur.children, existing)
		} else if existing.kind != pkInternal {
			return mongoerr.New(mongoerr.ProjectionPathPrefixCollision, "Path collision at %s remaining portion %s", path, strings.Join(parts[1:], "."))
		}
		cur = existing
	}
	return nil
}

// internalNode finds or creates the internal node for a sub-projection
// {key: {...}}.
func internalNode(parent *projNode, key string) (*projNode, error) {
	if err := expr.CheckFieldPath(key); err != nil {
		return nil, err
	}
	cur := parent
	for _, name := range strings.Split(key, ".") {
		existing := cur.child([]byte(name))
		if existing == nil {
			existing = &projNode{name: name, kind: pkInternal, nested: true}
			cur.children = append(cur.children, existing)
		} else if existing.kind != pkInternal {
			return nil, mongoerr.New(mongoerr.ProjectionPathCollision, "Path collision at %s", key)
		}
		cur = existing
	}
	return cur, nil
}

// meta records {key: {$meta: name}}: at the top level, a field set to the
// document's metadata, in an inclusion or exclusion projection alike;
// below it, a computed field (an exclusion projection's only kind).
func (ps *projParse) meta(key string, arg bson.RawValue, parentPath string, parent *projNode) error {
	topLevel := parentPath == "" && !strings.Contains(key, ".")
	if err := expr.CheckMeta(arg); err != nil {
		return err
	}
	if arg.StringValue() == "sortKey" {
		ps.sortKeyPaths = append(ps.sortKeyPaths, strings.Split(joinPath(parentPath, key), "."))
	}
	if topLevel {
		ps.metas = append(ps.metas, metaField{field: key, name: arg.StringValue()})
		return nil
	}
	e, err := ps.expr(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: bsoncore.NewDocumentBuilder().AppendValue("$meta", bsoncore.Value{Type: bsoncore.Type(arg.Type), Data: arg.Value}).Build()})
	if err != nil {
		return err
	}
	return addProjNode(parent, key, &projNode{kind: pkExpr, expr: e})
}

// expr compiles a computed field, noting the metadata it reads.
func (ps *projParse) expr(v bson.RawValue) (*projExpr, error) {
	e, err := parseProjExpr(v, ps.let, ps.coll)
	if err == nil {
		ps.exprMetas = append(ps.exprMetas, expr.MetaNames(v)...)
	}
	return e, err
}
