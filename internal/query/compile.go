package query

import (
	"bytes"
	"math"
	"strings"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// Compile parses a query filter. Errors are *mongoerr.Error with the code
// and message MongoDB gives for the same filter.
func Compile(filter bson.Raw) (*Filter, error) {
	return CompileLet(filter, nil)
}

// CompileLet parses a query filter whose $expr clauses may use the
// command's let variables (nil: none).
func CompileLet(filter bson.Raw, let *expr.Let) (*Filter, error) {
	return CompileCollated(filter, let, nil)
}

// CompileCollated parses a query filter whose string comparisons follow
// coll (nil: the simple collation).
func CompileCollated(filter bson.Raw, let *expr.Let, coll *collation.Collator) (*Filter, error) {
	return CompileAllowed(filter, let, coll, AllFeatures)
}

// CompileAllowed is CompileCollated for a filter that may use only the
// allowed special features.
func CompileAllowed(filter bson.Raw, let *expr.Let, coll *collation.Collator, allowed Features) (*Filter, error) {
	return compile(filter, &parseEnv{let: let, coll: coll, allowed: allowed})
}

// Features are the special operators a filter may use, MongoDB's
// MatchExpressionParser::AllowedFeatures. A filter parsed without one
// fails on it where the parser meets it, before its argument is read, so
// an error in that argument or in a later clause is not the one reported.
type Features uint8

const (
	FeatureText       Features = 1 << iota // $text
	FeatureGeoNear                         // $near, $nearSphere, $geoNear
	FeatureJavascript                      // $where
	FeatureExpr                            // $expr
	FeatureJSONSchema                      // $jsonSchema

	// NoFeatures is kBanAllSpecialFeatures: array filters, $pull
	// conditions, partial index filters, $elemMatch projections.
	NoFeatures Features = 0
	// DefaultFeatures is kDefaultSpecialFeatures: collection validators,
	// listDatabases' and listCollections' filters, $graphLookup's
	// restrictSearchWithMatch.
	DefaultFeatures = FeatureExpr | FeatureJSONSchema
	// AllFeatures is kAllowAllSpecialFeatures: a query's filter.
	AllFeatures = FeatureText | FeatureGeoNear | FeatureJavascript | FeatureExpr | FeatureJSONSchema
)

// CompileValidator compiles a collection validator under the collection's
// default collation (coll, nil: simple) as MongoDB parses one: with its
// default features (no $where, $text or geo proximity operator), and with
// $function refused in its $expr (4660800).
func CompileValidator(spec bson.Raw, coll *collation.Collator) (*Filter, error) {
	return compile(spec, &parseEnv{coll: coll, validator: true, allowed: DefaultFeatures})
}

// compile parses filter in env.
func compile(filter bson.Raw, env *parseEnv) (*Filter, error) {
	filter = bytes.Clone(filter)
	if len(filter) == 0 {
		filter = bson.Raw{5, 0, 0, 0, 0}
	}
	if rawdoc.Validate(filter) != nil {
		return nil, mongoerr.New(mongoerr.InvalidBSON, "invalid BSON in filter document")
	}
	root, err := parseFilter(filter, env)
	if err != nil {
		return nil, err
	}
	if len(root.Children) > 0 {
		rankPositions(root)
	}
	f := &Filter{root: root, doc: filter}
	Walk(root, func(n *Node) bool {
		switch n.Kind {
		case KindExpr:
			f.hasExpr, f.usesExpr = true, true
		case KindWhere, KindText:
			f.hasExpr = true
		}
		return !f.usesExpr
	})
	if env.coll != nil {
		f.collate(env.coll)
	}
	return f, nil
}

// parseFilter parses a filter document into an And of its clauses (or the
// single clause) in env.
func parseFilter(doc []byte, env *parseEnv) (*Node, error) {
	// The clauses gather on the stack: a filter of one clause (most are)
	// is that clause, with no And node or list of children made for it.
	var buf [4]*Node
	clauses := buf[:0]
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		key := string(k)
		switch {
		case strings.HasPrefix(key, "$"):
			n, err := parseTopLevel(key, v, env)
			if err != nil {
				return nil, err
			}
			if n != nil {
				clauses = append(clauses, n)
			}
		case isOperatorDocument(v, false):
			nodes, err := parseOperators(key, v.Value, env)
			if err != nil {
				return nil, err
			}
			clauses = append(clauses, nodes...)
		case v.Type == bson.TypeRegex:
			n, err := regexFromValue(key, v)
			if err != nil {
				return nil, err
			}
			clauses = append(clauses, n)
		default:
			n, err := comparison(KindEq, key, v)
			if err != nil {
				return nil, err
			}
			clauses = append(clauses, n)
		}
	}
	switch len(clauses) {
	case 0:
		return &Node{Kind: KindAnd}, nil
	case 1:
		return clauses[0], nil
	}
	return &Node{Kind: KindAnd, Children: append([]*Node(nil), clauses...)}, nil
}

// isOperatorDocument is MongoDB's isExpressionDocument: a non-empty object
// whose first field starts with '$' and that is not a DBRef ({$ref, $id},
// or with allowIncomplete any of $ref, $id, $db).
func isOperatorDocument(v bson.RawValue, allowIncomplete bool) bool {
	if v.Type != bson.TypeEmbeddedDocument || !strings.HasPrefix(rawdoc.FirstKey(v.Value), "$") {
		return false
	}
	var ref, id, db bool
	it := rawdoc.Iterate(v.Value)
	for {
		k, _, ok := it.Next()
		if !ok {
			break
		}
		switch string(k) {
		case "$ref":
			ref = true
		case "$id":
			id = true
		case "$db":
			db = true
		}
	}
	if allowIncomplete {
		return !(ref || id || db)
	}
	return !(ref && id)
}

// topLevelOperators are the operators that take no field path.
var topLevelOperators = map[string]bool{
	"$and": true, "$or": true, "$nor": true, "$comment": true, "$where": true,
	"$expr": true, "$text": true, "$jsonSchema": true, "$alwaysTrue": true,
	"$alwaysFalse": true, "$ref": true, "$id": true, "$db": true,
	"$sampleRate": true, "$_internalSchemaMinProperties": true, "$_internalSchemaMaxProperties": true,
}

// parseEnv is where a filter is parsed: inside $elemMatch, where
// top-level-only operators are refused, or not; with the special features
// allowed; and with the command's let variables for $expr, if any.
type parseEnv struct {
	inElemMatch bool
	allowed     Features
	let         *expr.Let
	coll        *collation.Collator // $expr's comparisons follow it
	validator   bool                // a collection validator's (see CompileValidator)
}

// elemMatchEnvs are the environments of a filter nested in $elemMatch, by
// the features allowed, which it keeps.
var elemMatchEnvs = func() (envs [AllFeatures + 1]parseEnv) {
	for i := range envs {
		envs[i] = parseEnv{inElemMatch: true, allowed: Features(i)}
	}
	return envs
}()

// inElemMatch is the environment of a filter nested in $elemMatch in env.
func (env *parseEnv) inElemMatchEnv() *parseEnv { return &elemMatchEnvs[env.allowed] }

// notAllowed is MongoDB's error for a special feature a filter parsed
// without it holds.
func notAllowed(f Features) error {
	switch f {
	case FeatureExpr:
		return mongoerr.New(mongoerr.QueryFeatureNotAllowed, "$expr is not allowed in this context")
	case FeatureJSONSchema:
		return mongoerr.New(mongoerr.QueryFeatureNotAllowed, "$jsonSchema is not allowed in this context")
	case FeatureJavascript:
		return mongoerr.New(mongoerr.BadValue, "$where is not allowed in this context")
	case FeatureText:
		return mongoerr.New(mongoerr.BadValue, "$text is not allowed in this context")
	}
	return NearNotAllowed()
}

// NearNotAllowed is MongoDB 7.0's error for $near or $nearSphere in a
// filter parsed without them (expression_parser.cpp parseGeo without
// kGeoNear): an aggregation's $match as much as an $elemMatch projection,
// an array filter or a validator. Its text is MongoDB's, the missing space
// before "for" included.
func NearNotAllowed() error {
	return mongoerr.New(mongoerr.GeoNearNotAllowedHere, "$geoNear, $near, and $nearSphere are not allowed in this context, as these operators require sorting geospatial data. If you do not need sort, consider using $geoWithin instead. Check out https://dochub.mongodb.org/core/near-sort-operation and https://dochub.mongodb.org/core/nearSphere-sort-operationfor more details.")
}

func parseTopLevel(key string, v bson.RawValue, env *parseEnv) (*Node, error) {
	inElemMatch := env.inElemMatch
	switch key {
	case "$and", "$or", "$nor":
		return parseLogical(key, v, env)
	case "$comment":
		return nil, nil
	case "$ref", "$id", "$db":
		return leaf(KindEq, key, v, nil), nil
	case "$alwaysTrue", "$alwaysFalse":
		if n, ok := values.Int64(v); !ok || n != 1 {
			return nil, mongoerr.New(mongoerr.FailedToParse, "%s must be an integer value of 1", key)
		}
		if key == "$alwaysTrue" {
			return &Node{Kind: KindAlwaysTrue}, nil
		}
		return &Node{Kind: KindAlwaysFalse}, nil
	case "$where":
		// parseWhere refuses it first; $elemMatch then refuses what it holds
		if env.allowed&FeatureJavascript == 0 {
			return nil, notAllowed(FeatureJavascript)
		}
		if inElemMatch {
			return nil, mongoerr.New(mongoerr.BadValue, "$elemMatch cannot contain $where expression")
		}
		return parseWhere(v, env.let)
	case "$expr", "$text":
		if inElemMatch {
			return nil, mongoerr.New(mongoerr.BadValue, "%s can only be applied to the top-level document", key)
		}
		if key == "$expr" {
			if env.allowed&FeatureExpr == 0 {
				return nil, notAllowed(FeatureExpr)
			}
			return parseExpr(v, env)
		}
		if env.allowed&FeatureText == 0 {
			return nil, notAllowed(FeatureText)
		}
		return parseText(v)
	case "$jsonSchema":
		if env.allowed&FeatureJSONSchema == 0 {
			return nil, notAllowed(FeatureJSONSchema)
		}
		return parseJSONSchemaOperator(v)
	case "$sampleRate":
		return parseSampleRate(v, env)
	case "$_internalSchemaMinProperties", "$_internalSchemaMaxProperties":
		// parseTopLevelInternalSchemaSingleIntegerArgument: a
		// non-negative integer (parseIntegerElementToNonNegativeLong)
		n := &Node{Kind: KindSchemaMinProperties, Value: v}
		if key == "$_internalSchemaMaxProperties" {
			n.Kind = KindSchemaMaxProperties
		}
		if err := parseSchemaCount(map[string]bson.RawValue{key: v}, key, &n.count); err != nil {
			return nil, err
		}
		return n, nil
	}
	// MatchExpressionParser::parse adds a hint to the message: $not is
	// a path operator, so {$not: ...} is pointed at $nor; any other name is
	// pointed at $getField/$setField for fields whose names start with '$'.
	hint := "If you have a field name that starts with a '$' symbol, consider using $getField or $setField."
	if key == "$not" {
		hint = "If you are trying to negate an entire expression, use $nor."
	}
	return nil, mongoerr.New(mongoerr.BadValue, "unknown top level operator: %s. %s", key, hint)
}

// parseLogical parses $and, $or and $nor: a non-empty array of filter
// documents.
func parseLogical(key string, v bson.RawValue, env *parseEnv) (*Node, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.BadValue, "%s must be an array", key)
	}
	n := &Node{Kind: map[string]Kind{"$and": KindAnd, "$or": KindOr, "$nor": KindNor}[key]}
	it := rawdoc.Iterate(v.Value)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		if e.Type != bson.TypeEmbeddedDocument {
			return nil, mongoerr.New(mongoerr.BadValue, "$or/$and/$nor entries need to be full objects")
		}
		c, err := parseFilter(e.Value, env)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	if len(n.Children) == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "$and/$or/$nor must be a nonempty array")
	}
	if n.Kind == KindOr && equalitiesOnOnePath(n.Children) {
		return orAsIn(n.Children), nil
	}
	return n, nil
}

// orAsIn is the $in MongoDB's optimizer makes of an $or of equalities or
// regexes on one path (OrMatchExpression's rewrite): {path: {$in: [...]}}
// with the clauses' values in order, which matches the same documents
// (and reports the same array position) and plans as one $in, so the two
// spellings share a plan cache shape. The values are taken as the
// equalities had them: an object with $-prefixed fields stays a value.
func orAsIn(clauses []*Node) *Node {
	arr := bsoncore.NewArrayBuilder()
	var eqs []bson.RawValue
	var res []*Node
	for _, c := range clauses {
		arr.AppendValue(bsoncore.Value{Type: bsoncore.Type(c.Value.Type), Data: c.Value.Value})
		if c.Kind == KindRegex {
			res = append(res, regexNode("", c.Value, c.re))
		} else {
			eqs = append(eqs, c.Value)
		}
	}
	v := bson.RawValue{Type: bson.TypeArray, Value: arr.Build()}
	set := newInSet(eqs, res)
	return leaf(KindIn, clauses[0].Path, v, func(n *Node) { n.in = set })
}

// equalitiesOnOnePath reports whether clauses are two or more equalities
// (to anything but a regex) or regexes on one path, the $or MongoDB
// rewrites as {path: {$in: [...]}} (OrMatchExpression's optimizer).
func equalitiesOnOnePath(clauses []*Node) bool {
	for _, c := range clauses {
		if c.Kind != KindEq && c.Kind != KindRegex || c.Kind == KindEq && c.Value.Type == bson.TypeRegex || c.Path != clauses[0].Path {
			return false
		}
	}
	return len(clauses) > 1
}

// fieldOperators are the operators that apply to a field path.
var fieldOperators = map[string]bool{
	"$eq": true, "$ne": true, "$gt": true, "$gte": true, "$lt": true, "$lte": true,
	"$in": true, "$nin": true, "$not": true, "$exists": true, "$type": true,
	"$mod": true, "$regex": true, "$options": true, "$all": true, "$elemMatch": true,
	"$size": true, "$bitsAllSet": true, "$bitsAnySet": true, "$bitsAllClear": true,
	"$bitsAnyClear": true, "$near": true, "$nearSphere": true, "$geoWithin": true,
	"$geoIntersects": true, "$within": true, "$geoNear": true, "$minDistance": true, "$maxDistance": true,
	"$_internalExprEq": true, "$_internalExprGt": true, "$_internalExprGte": true, "$_internalExprLt": true, "$_internalExprLte": true,
}

var comparisonKinds = map[string]Kind{"$lt": KindLt, "$lte": KindLte, "$gt": KindGt, "$gte": KindGte}

var exprComparisonKinds = map[string]Kind{
	"$_internalExprEq": KindExprEq, "$_internalExprGt": KindExprGt, "$_internalExprGte": KindExprGte,
	"$_internalExprLt": KindExprLt, "$_internalExprLte": KindExprLte,
}

var bitKinds = map[string]Kind{
	"$bitsAllSet": KindBitsAllSet, "$bitsAnySet": KindBitsAnySet,
	"$bitsAllClear": KindBitsAllClear, "$bitsAnyClear": KindBitsAnyClear,
}

// parseOperators parses an operator document {$op: operand, ...} applied to
// path; an empty path makes value-level nodes for $elemMatch.
func parseOperators(path string, ops []byte, env *parseEnv) ([]*Node, error) {
	var nodes []*Node
	it := rawdoc.Iterate(ops)
	for {
		k, v, ok := it.Next()
		if !ok {
			return nodes, nil
		}
		n, err := parseOperator(path, string(k), v, ops, env)
		if err != nil {
			return nil, err
		}
		if n != nil {
			nodes = append(nodes, n)
		}
	}
}

func parseOperator(path, op string, v bson.RawValue, ops []byte, env *parseEnv) (*Node, error) {
	if k, ok := comparisonKinds[op]; ok {
		if v.Type == bson.TypeRegex {
			return nil, mongoerr.New(mongoerr.BadValue, "Can't have RegEx as arg to predicate over field '%s'.", path)
		}
		return comparison(k, path, v)
	}
	if k, ok := exprComparisonKinds[op]; ok {
		// MongoDB's parser (PathAcceptingKeyword::INTERNAL_EXPR_*)
		// refuses the operands Rewrite never writes.
		if v.Type == bson.TypeUndefined || v.Type == bson.TypeArray {
			return nil, mongoerr.New(mongoerr.BadValue, "%s cannot be used to compare to type: %s", op, values.TypeName(v.Type))
		}
		return leaf(k, path, v, nil), nil
	}
	if k, ok := bitKinds[op]; ok {
		pos, err := parseBitPositions(path, op, v)
		if err != nil {
			return nil, err
		}
		return leaf(k, path, v, func(n *Node) { n.bits = pos }), nil
	}
	switch op {
	case "$eq":
		return comparison(KindEq, path, v)
	case "$ne":
		if v.Type == bson.TypeRegex {
			return nil, mongoerr.New(mongoerr.BadValue, "Can't have regex as arg to $ne.")
		}
		n, err := comparison(KindEq, path, v)
		if err != nil {
			return nil, err
		}
		return not(n), nil
	case "$in", "$nin":
		n, err := parseIn(path, op, v)
		if err != nil {
			return nil, err
		}
		if op == "$nin" {
			return not(n), nil
		}
		return n, nil
	case "$not":
		return parseNot(path, v, env)
	case "$exists":
		n := leaf(KindExists, path, v, nil)
		if !values.Truthy(v) {
			return not(n), nil
		}
		return n, nil
	case "$type":
		ts, err := parseTypeSet(path, v)
		if err != nil {
			return nil, err
		}
		return leaf(KindType, path, v, func(n *Node) { n.types = ts }), nil
	case "$size":
		size, err := parseSize(v)
		if err != nil {
			return nil, err
		}
		return leaf(KindSize, path, v, func(n *Node) { n.size = size }), nil
	case "$mod":
		return parseMod(path, v)
	case "$regex":
		return parseRegexDocument(path, ops)
	case "$options":
		if rawdoc.Lookup(ops, "$regex").Type == 0 {
			return nil, mongoerr.New(mongoerr.BadValue, "$options needs a $regex")
		}
		return nil, nil
	case "$elemMatch":
		return parseElemMatch(path, v, env)
	case "$all":
		return parseAll(path, v, env)
	case "$near", "$nearSphere", "$geoNear", "$geoWithin", "$geoIntersects", "$within":
		// $geoNear is MongoDB's alias of $near (GeoNearExpression).
		return parseGeo(path, op, v, ops, env)
	case "$minDistance", "$maxDistance", "$uniqueDocs":
		if nearBound(ops) {
			return nil, nil
		}
		return nil, mongoerr.New(mongoerr.BadValue, "unknown operator: %s", op)
	case "$where":
		return nil, mongoerr.New(mongoerr.BadValue, "$where cannot be applied to a field")
	}
	return nil, mongoerr.New(mongoerr.BadValue, "unknown operator: %s", op)
}

// comparison is the leaf of an equality or a comparison of kind k with
// operand v, which may not be undefined, as MongoDB's
// ComparisonMatchExpression rules.
func comparison(k Kind, path string, v bson.RawValue) (*Node, error) {
	if v.Type == bson.TypeUndefined {
		return nil, mongoerr.New(mongoerr.BadValue, "cannot compare to undefined")
	}
	return leaf(k, path, v, nil), nil
}

// leaf builds a leaf node; setup fills in its compiled operand.
func leaf(k Kind, path string, v bson.RawValue, setup func(*Node)) *Node {
	n := &Node{Kind: k, Path: path, Value: v}
	if setup != nil {
		setup(n)
	}
	mode := leafExpand
	if k == KindSize || k == KindElemMatchObject || k == KindElemMatchValue {
		mode = leafWhole
	}
	n.walk = walker{path: parsePath(path), mode: mode, vis: n}
	return n
}

func not(n *Node) *Node { return &Node{Kind: KindNot, Children: []*Node{n}} }

// parseIn parses $in/$nin: an array of values and regexes; operator
// documents inside it are refused.
func parseIn(path, op string, v bson.RawValue) (*Node, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.BadValue, "%s needs an array", op)
	}
	var eqs []bson.RawValue
	var res []*Node
	it := rawdoc.Iterate(v.Value)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		switch {
		case isOperatorDocument(e, false):
			return nil, mongoerr.New(mongoerr.BadValue, "cannot nest $ under $in")
		case e.Type == bson.TypeUndefined:
			return nil, mongoerr.New(mongoerr.BadValue, "InMatchExpression equality cannot be undefined")
		case e.Type == bson.TypeRegex:
			r, err := regexFromValue("", e)
			if err != nil {
				return nil, err
			}
			res = append(res, r)
		default:
			eqs = append(eqs, e)
		}
	}
	set := newInSet(eqs, res)
	return leaf(KindIn, path, v, func(n *Node) { n.in = set }), nil
}

// parseNot parses $not: a regex, or a non-empty operator document whose
// clauses are negated together.
func parseNot(path string, v bson.RawValue, env *parseEnv) (*Node, error) {
	switch v.Type {
	case bson.TypeRegex:
		r, err := regexFromValue(path, v)
		if err != nil {
			return nil, err
		}
		return not(r), nil
	case bson.TypeEmbeddedDocument:
	default:
		return nil, mongoerr.New(mongoerr.BadValue, "$not needs a regex or a document")
	}
	if len(v.Value) <= 5 {
		return nil, mongoerr.New(mongoerr.BadValue, "$not cannot be empty")
	}
	nodes, err := parseOperators(path, v.Value, env)
	if err != nil {
		return nil, err
	}
	if len(nodes) == 1 {
		return not(nodes[0]), nil
	}
	return not(&Node{Kind: KindAnd, Children: nodes}), nil
}

// parseSize parses $size: a non-negative whole number fitting in 32 bits.
func parseSize(v bson.RawValue) (int, error) {
	var size int64
	switch v.Type {
	case bson.TypeInt32:
		size = int64(v.Int32())
	case bson.TypeInt64:
		size = v.Int64()
		if size != int64(int32(size)) {
			return 0, mongoerr.New(mongoerr.BadValue, "$size must be representable as a 32-bit integer")
		}
	case bson.TypeDouble:
		f := v.Double()
		if f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
			return 0, mongoerr.New(mongoerr.BadValue, "$size must be a whole number")
		}
		size = int64(f)
	default:
		return 0, mongoerr.New(mongoerr.BadValue, "$size needs a number")
	}
	if size < 0 {
		return 0, mongoerr.New(mongoerr.BadValue, "$size may not be negative")
	}
	return int(size), nil
}

// parseMod parses $mod: [divisor, remainder], both numbers truncated toward
// zero; the divisor may not be 0.
func parseMod(path string, v bson.RawValue) (*Node, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, needs to be an array")
	}
	var args []bson.RawValue
	it := rawdoc.Iterate(v.Value)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		args = append(args, e)
	}
	switch {
	case len(args) < 2:
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, not enough elements")
	case len(args) > 2:
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, too many elements")
	case !values.IsNumber(args[0].Type):
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, divisor not a number")
	case !values.IsNumber(args[1].Type):
		return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, remainder not a number")
	}
	// MongoDB coerces each to a long (BSONElement::tryCoerce): a fraction
	// truncated, NaN, infinities and values beyond ±2^63 refused; 2^63
	// itself passes its range check and converts to the minimum long.
	// A decimal is truncated toward zero exactly, then range checked.
	var mod [2]int64
	for i, what := range []string{"divisor", "remainder"} {
		f, _ := values.Float64(args[i])
		x, exact := values.TruncInt64(args[i])
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, %s value is invalid :: caused by :: Unable to coerce NaN/Inf to integral type", what)
		case args[i].Type == bson.TypeDecimal128 && !exact,
			f > 0x1p63 || f < -0x1p63:
			return nil, mongoerr.New(mongoerr.BadValue, "malformed mod, %s value is invalid :: caused by :: Out of bounds coercing to integral value", what)
		}
		if args[i].Type == bson.TypeDecimal128 {
			mod[i] = x
		} else if x, ok := values.Int64(args[i]); ok {
			mod[i] = x
		} else if f == 0x1p63 {
			mod[i] = math.MinInt64
		} else {
			mod[i] = int64(f)
		}
	}
	if mod[0] == 0 {
		return nil, mongoerr.New(mongoerr.BadValue, "divisor cannot be 0")
	}
	return leaf(KindMod, path, v, func(n *Node) { n.mod = mod }), nil
}

// regexFromValue builds a Regex node from a BSON regex value.
func regexFromValue(path string, v bson.RawValue) (*Node, error) {
	p, o := v.Regex()
	re, err := compileRegex(p, o)
	if err != nil {
		return nil, err
	}
	return regexNode(path, v, re), nil
}

// parseRegexDocument parses {$regex: pattern, $options: flags}: the
// pattern is a string or a regex (whose flags may not be repeated in
// $options).
func parseRegexDocument(path string, ops []byte) (*Node, error) {
	var pattern, options string
	var sawOptions bool
	it := rawdoc.Iterate(ops)
	for {
		k, e, ok := it.Next()
		if !ok {
			break
		}
		switch string(k) {
		case "$regex":
			s, isString := e.StringValueOK()
			switch {
			case isString:
				pattern = s
			case e.Type == bson.TypeRegex:
				var flags string
				pattern, flags = e.Regex()
				if flags != "" {
					if options != "" {
						return nil, mongoerr.New(mongoerr.RegexOptionsInBothQuery, "options set in both $regex and $options")
					}
					options = flags
				}
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "$regex has to be a string")
			}
		case "$options":
			s, isString := e.StringValueOK()
			if !isString {
				return nil, mongoerr.New(mongoerr.BadValue, "$options has to be a string")
			}
			if options != "" || sawOptions {
				return nil, mongoerr.New(mongoerr.RegexOptionsInBothQueryRegexFirst, "options set in both $regex and $options")
			}
			sawOptions = true
			options = s
		}
	}
	re, err := compileRegex(pattern, options)
	if err != nil {
		return nil, err
	}
	return regexNode(path, bson.RawValue{Type: bson.TypeRegex, Value: bsoncore.AppendRegex(nil, pattern, sortFlags(options))}, re), nil
}

// sortFlags orders regex options alphabetically, as BSON stores them.
func sortFlags(o string) string {
	b := []byte(o)
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && b[j] < b[j-1]; j-- {
			b[j], b[j-1] = b[j-1], b[j]
		}
	}
	return string(b)
}

// parseElemMatch parses $elemMatch. An operator document whose first
// operator is not a top-level one is the value form (operators test each
// element); anything else is a filter applied to document elements.
func parseElemMatch(path string, v bson.RawValue, env *parseEnv) (*Node, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.BadValue, "$elemMatch needs an Object")
	}
	if isOperatorDocument(v, true) && !topLevelOperators[rawdoc.FirstKey(v.Value)] {
		children, err := parseOperators("", v.Value, env.inElemMatchEnv())
		if err != nil {
			return nil, err
		}
		return leaf(KindElemMatchValue, path, v, func(n *Node) { n.Children = children }), nil
	}
	sub, err := parseFilter(v.Value, env.inElemMatchEnv())
	if err != nil {
		return nil, err
	}
	return leaf(KindElemMatchObject, path, v, func(n *Node) { n.Children = []*Node{sub} }), nil
}

// parseAll parses $all: every listed value (or regex) must match the field,
// or every listed {$elemMatch: ...} must. An empty list matches nothing.
func parseAll(path string, v bson.RawValue, env *parseEnv) (*Node, error) {
	if v.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.BadValue, "$all needs an array")
	}
	var elems []bson.RawValue
	it := rawdoc.Iterate(v.Value)
	for {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		elems = append(elems, e)
	}
	if len(elems) == 0 {
		return &Node{Kind: KindAlwaysFalse}, nil
	}
	and := &Node{Kind: KindAnd}
	elemMatchForm := elems[0].Type == bson.TypeEmbeddedDocument && rawdoc.FirstKey(elems[0].Value) == "$elemMatch"
	for _, e := range elems {
		var n *Node
		var err error
		switch {
		case elemMatchForm:
			if e.Type != bson.TypeEmbeddedDocument || rawdoc.FirstKey(e.Value) != "$elemMatch" {
				return nil, mongoerr.New(mongoerr.BadValue, "$all/$elemMatch has to be consistent")
			}
			n, err = parseElemMatch(path, rawdoc.Lookup(e.Value, "$elemMatch"), env)
		case e.Type == bson.TypeRegex:
			n, err = regexFromValue(path, e)
		case e.Type == bson.TypeEmbeddedDocument && fieldOperators[rawdoc.FirstKey(e.Value)]:
			return nil, mongoerr.New(mongoerr.BadValue, "no $ expressions in $all")
		default:
			n, err = comparison(KindEq, path, e)
		}
		if err != nil {
			return nil, err
		}
		and.Children = append(and.Children, n)
	}
	if len(and.Children) == 1 {
		return and.Children[0], nil
	}
	return and, nil
}
