package aggregate

import (
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/values"
)

// projMode is the kind of a projection.
type projMode int

const (
	// inclusion keeps the named fields (and _id unless excluded) and adds
	// computed ones.
	inclusion projMode = iota
	// exclusion drops the named fields.
	exclusion
	// addFields keeps every field and adds or replaces computed ones.
	addFields
)

// projNode is one level of a projection: its fields in specification
// order.
type projNode struct {
	order    []string
	items    map[string]*projItem
	computed bool // the subtree holds computed fields
}

// projItem is what a projection does with one field: include it, exclude
// it, compute it, or apply a nested projection.
type projItem struct {
	include, exclude bool
	expr             *expr.Expr
	sub              *projNode
}

func newProjNode() *projNode { return &projNode{items: map[string]*projItem{}} }

// projection is a parsed $project, $addFields/$set or $unset.
type projection struct {
	mode projMode
	root *projNode
}

// projParse accumulates a projection specification.
type projParse struct {
	p         *parser
	addFields bool
	root      *projNode
	// firstIn and firstEx are the first inclusion (or computed field) and
	// exclusion, _id aside, that decide the mode.
	firstIn, firstEx string
	idItem           *projItem
	// idSubfield is set once a path below _id ("_id.x") is named: an
	// inclusion then keeps only what names _id's fields.
	idSubfield bool
	// optimizeErr is the first field's error of optimizing its
	// expression (expr.OptimizeError), met once every field has parsed.
	optimizeErr error
	// hasMeta is set by a {$meta: ...} field, which $project allows in an
	// exclusion projection and which decides neither mode; without any
	// inclusion or exclusion it makes an inclusion.
	hasMeta bool
}

// invalidStage writes the context MongoDB gives every error of parsing a
// projection stage's specification, expressions' included: "Invalid
// $project :: caused by :: ..." (or the name the stage was given). An
// error of optimizing its expressions is not one of parsing: the
// pipeline gives it its own context (Parse).
func invalidStage(stage string, err error) error {
	if expr.IsOptimizeError(err) {
		return err
	}
	return mongoerr.AddContext(err, "Invalid "+stage)
}

// parseProjection parses the object of $project or $addFields.
func (p *parser) parseProjection(stageName string, arg bson.RawValue, add bool) (*projection, error) {
	pp := &projParse{p: p, addFields: add, root: newProjNode()}
	if arg.Type != bson.TypeEmbeddedDocument {
		if add {
			return nil, mongoerr.New(mongoerr.AddFieldsSpecNotObject, "%s specification stage must be an object, got %s", stageName, typeName(arg))
		}
		return nil, mongoerr.New(mongoerr.ProjectSpecNotObject, "%s specification must be an object", stageName)
	}
	fs := fieldsOf(arg.Value)
	if len(fs) == 0 {
		if add {
			return nil, invalidStage(stageName, mongoerr.New(mongoerr.AddFieldsSpecEmpty, "specification must have at least one field"))
		}
		return nil, invalidStage(stageName, mongoerr.New(mongoerr.ProjectionSpecEmpty, "projection specification must have at least one field"))
	}
	if add {
		if err := validateAddFields(arg.Document()); err != nil {
			return nil, invalidStage(stageName, err)
		}
	}
	if err := pp.object(fs, ""); err != nil {
		return nil, invalidStage(stageName, err)
	}
	if pp.optimizeErr != nil {
		return nil, pp.optimizeErr
	}
	if add {
		return &projection{mode: addFields, root: pp.root}, nil
	}
	pr := &projection{mode: inclusion, root: pp.root}
	if pp.firstEx != "" || (pp.firstIn == "" && !pp.hasMeta && pp.idItem != nil && pp.idItem.exclude) {
		pr.mode = exclusion
	}
	if pr.mode == inclusion && pp.idItem == nil && !pp.idSubfield {
		pp.root.items["_id"] = &projItem{include: true}
		pp.root.order = append(pp.root.order, "_id")
	}
	return pr, nil
}

// object parses the fields of a (nested) specification object at prefix.
// $project first refuses a positional name (query.ProjectionKey), as the
// projection parser it shares with find does.
func (pp *projParse) object(fs []field, prefix string) error {
	for _, f := range fs {
		if !pp.addFields {
			if _, err := query.ProjectionKey(f.key, false); err != nil {
				return err
			}
		}
		if err := expr.CheckFieldPath(f.key); err != nil {
			return err
		}
		path := prefix + f.key
		if err := pp.value(path, f.key, f.val); err != nil {
			return err
		}
	}
	return nil
}

// validateAddFields is MongoDB's ProjectionSpecValidator, which checks a
// whole $addFields/$set specification before any of it is parsed: each
// top-level name a field path; no path given twice or inside another
// (40176); in a sub-object, an expression ({$op: ...}) alone (40181) and
// no dotted name (40183). Its messages show the whole specification.
func validateAddFields(spec bson.Raw) error {
	v := addFieldsValidator{spec: spec}
	for _, f := range fieldsOf(spec) {
		if err := expr.CheckFieldPath(f.key); err != nil {
			return err
		}
		if err := v.element(f.key, f.val); err != nil {
			return err
		}
	}
	return nil
}

// addFieldsValidator holds the paths validateAddFields has seen, in
// MongoDB's path order (comparePaths), where a path and those inside it
// are neighbours.
type addFieldsValidator struct {
	spec bson.Raw
	seen []string
}

func (v *addFieldsValidator) element(path string, val bson.RawValue) error {
	if val.Type == bson.TypeEmbeddedDocument {
		return v.nested(val.Document(), path)
	}
	return v.ensure(path)
}

func (v *addFieldsValidator) nested(doc bson.Raw, prefix string) error {
	fs := fieldsOf(doc)
	for _, f := range fs {
		if strings.HasPrefix(f.key, "$") {
			if len(fs) != 1 {
				return mongoerr.New(mongoerr.AddFieldsExpressionNotSingleField,
					"an expression specification must contain exactly one field, the name of the expression. Found %d fields in %s, while parsing object %s",
					len(fs), doc, v.spec)
			}
			if err := v.ensure(prefix); err != nil {
				return err
			}
			continue
		}
		if strings.Contains(f.key, ".") {
			return mongoerr.New(mongoerr.DottedFieldInSubObject, "cannot use dotted field name '%s' in a sub object: %s", f.key, v.spec)
		}
		if err := v.element(prefix+"."+f.key, f.val); err != nil {
			return err
		}
	}
	return nil
}

// ensure records path, refusing it when it was seen, or a path seen is
// inside it or holds it (ensurePathDoesNotConflictOrThrow).
func (v *addFieldsValidator) ensure(path string) error {
	i, found := slices.BinarySearchFunc(v.seen, path, comparePaths)
	conflict := ""
	switch {
	case found:
		conflict = path
	case i > 0 && isPathPrefix(v.seen[i-1], path):
		conflict = v.seen[i-1]
	case i < len(v.seen) && isPathPrefix(path, v.seen[i]):
		conflict = v.seen[i]
	}
	if !found {
		v.seen = slices.Insert(v.seen, i, path)
	}
	if conflict != "" {
		return mongoerr.New(mongoerr.AddFieldsConflictingPaths, "specification contains two conflicting paths. Cannot specify both '%s' and '%s': %s", path, conflict, v.spec)
	}
	return nil
}

// comparePaths orders paths as MongoDB's PathComparator: bytewise, with
// '.' before every other byte, so that a path is followed by those
// inside it.
func comparePaths(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		switch x, y := a[i], b[i]; {
		case x == y:
		case x == '.':
			return -1
		case y == '.':
			return 1
		case x < y:
			return -1
		default:
			return 1
		}
	}
	return len(a) - len(b)
}

// isPathPrefix reports whether path is inside prefix ("a" holds "a.b").
func isPathPrefix(prefix, path string) bool {
	return len(path) > len(prefix) && path[len(prefix)] == '.' && strings.HasPrefix(path, prefix)
}

// value parses the specification's value v for the field key, at path.
// As MongoDB's projection parser (parseInclusion, parseExclusion) does,
// it places an inclusion or exclusion before it checks the mode, so that
// a path collision is the error of a field that is both; its messages
// name the field as its object names it (key), not by its whole path.
func (pp *projParse) value(path, key string, v bson.RawValue) error {
	item := &projItem{}
	switch {
	case v.Type == bson.TypeEmbeddedDocument:
		op, err := pp.operatorObject(v)
		if err != nil {
			return err
		}
		if op {
			return pp.computed(path, key, item, v, true)
		}
		fs := fieldsOf(v.Value)
		if len(fs) == 0 {
			if pp.addFields {
				return pp.computed(path, key, item, v, false)
			}
			return mongoerr.New(mongoerr.ProjectionEmptySubObject, "An empty sub-projection is not a valid value. Found empty object at path")
		}
		if err := pp.level(path, key); err != nil {
			return err
		}
		return pp.object(fs, path+".")
	case !pp.addFields && (v.Type == bson.TypeBoolean || values.IsNumber(v.Type)):
		item.include = values.Truthy(v)
		item.exclude = !item.include
		if path == "_id" {
			pp.idItem = item
		}
		if err := pp.add(path, key, item); err != nil {
			return err
		}
		if path == "_id" {
			return nil
		}
		if item.include {
			if pp.firstEx != "" {
				return mongoerr.New(mongoerr.ProjectionInclusionInExclusion, "Cannot do inclusion on field %s in exclusion projection", key)
			}
			if pp.firstIn == "" {
				pp.firstIn = path
			}
			return nil
		}
		if pp.firstIn != "" {
			return mongoerr.New(mongoerr.ProjectionExclusionInInclusion, "Cannot do exclusion on field %s in inclusion projection", key)
		}
		if pp.firstEx == "" {
			pp.firstEx = path
		}
		return nil
	}
	return pp.computed(path, key, item, v, false)
}

// computed parses a computed field: an operator object ({$op: ...}) or
// another value. $project refuses an operator other than $meta in an
// exclusion projection before it parses it (31252), and a literal after
// (31310), as MongoDB's projection parser orders them. A $meta field
// belongs to either kind of projection and decides neither
// (projection_parser.cpp's attemptToParseGenericExpression); in an
// exclusion it is computed after the exclusions, as MongoDB's
// ExclusionNode applies its expressions.
func (pp *projParse) computed(path, key string, item *projItem, v bson.RawValue, operator bool) error {
	meta := !pp.addFields && operator && fieldsOf(v.Value)[0].key == "$meta"
	if !pp.addFields && operator && pp.firstEx != "" && !meta {
		return mongoerr.New(mongoerr.ProjectionExpressionInExclusionMeta, "Cannot use expression other than $meta in exclusion projection")
	}
	e, err := expr.Compile(v, pp.p.scope)
	if err := deferOptimizeError(&pp.optimizeErr, err); err != nil {
		return err
	}
	item.expr = e
	if path == "_id" {
		pp.idItem = item
	}
	if err := pp.add(path, key, item); err != nil {
		return err
	}
	if meta {
		pp.hasMeta = true
		return nil
	}
	if !pp.addFields {
		if pp.firstEx != "" {
			return mongoerr.New(mongoerr.ProjectionExpressionInExclusion, "Cannot use an expression %s: %s in an exclusion projection", key, v)
		}
		if pp.firstIn == "" {
			pp.firstIn = path
		}
	}
	return nil
}

// add places item at path, creating the nested levels. rel is the end of
// path that the specification names in the object holding it: MongoDB
// adds each field to the node of its object (addNodeAtPath), so a
// collision names rel (31250), and for a field below another's leaf also
// rel's tail after its first part (31249, FieldPath::tail).
func (pp *projParse) add(path, rel string, item *projItem) error {
	pp.idSubfield = pp.idSubfield || strings.HasPrefix(path, "_id.")
	parts := strings.Split(path, ".")
	n := pp.root
	for i, part := range parts {
		if item.expr != nil {
			n.computed = true
		}
		cur := n.items[part]
		if i == len(parts)-1 {
			if cur != nil {
				return collision(rel, true)
			}
			n.items[part] = item
			n.order = append(n.order, part)
			return nil
		}
		if cur == nil {
			cur = &projItem{sub: newProjNode()}
			n.items[part] = cur
			n.order = append(n.order, part)
		} else if cur.sub == nil {
			return collision(rel, false)
		}
		n = cur.sub
	}
	return nil
}

// level finds or makes the nested level of a sub-projection {key: {...}}
// at path, as MongoDB's parseSubObject does before it parses the object's
// fields (findLastInnerNodeOnPath, else addNodeAtPath): a field already
// at path, or at a prefix of key, collides there.
func (pp *projParse) level(path, key string) error {
	parts := strings.Split(path, ".")
	n := pp.root
	for i, part := range parts {
		cur := n.items[part]
		switch {
		case cur == nil:
			cur = &projItem{sub: newProjNode()}
			n.items[part] = cur
			n.order = append(n.order, part)
		case cur.sub == nil:
			return collision(key, i == len(parts)-1)
		}
		n = cur.sub
	}
	return nil
}

// collision is the error of placing rel where a field already is: at rel
// itself (last) or at one of its prefixes.
func collision(rel string, last bool) error {
	if last {
		return mongoerr.New(mongoerr.ProjectionPathCollision, "Path collision at %s", rel)
	}
	_, tail, _ := strings.Cut(rel, ".")
	return mongoerr.New(mongoerr.ProjectionPathPrefixCollision, "Path collision at %s remaining portion %s", rel, tail)
}

// isExpressionObject reports whether an object is an operator expression
// ({$op: ...}) rather than a nested specification.
func isExpressionObject(v bson.RawValue) bool {
	elems, err := v.Document().Elements()
	return err == nil && len(elems) > 0 && strings.HasPrefix(elems[0].Key(), "$")
}

// operatorObject reports whether an object in a projection specification
// is an operator expression ({$op: ...}) rather than a sub-projection. For
// $project, as for find, that is an object of one field naming an
// expression: one whose name starts with '$' but names no expression fails
// (31325; $elemMatch, find's alone, 168), and objects of more fields are
// sub-projections, whose '$'-prefixed names are invalid field paths.
// $addFields takes any object whose first name starts with '$'.
func (pp *projParse) operatorObject(v bson.RawValue) (bool, error) {
	fs := fieldsOf(v.Value)
	if len(fs) == 0 || !strings.HasPrefix(fs[0].key, "$") {
		return false, nil
	}
	if pp.addFields {
		return true, nil
	}
	if len(fs) > 1 {
		return false, nil
	}
	if fs[0].key == "$elemMatch" {
		return false, mongoerr.New(mongoerr.InvalidPipelineOperator, "Cannot use $elemMatch in this context")
	}
	if err := query.CheckOperatorName(fs[0].key); err != nil {
		return false, err
	}
	return expr.IsOperator(fs[0].key), nil
}

// apply projects one document.
func (pr *projection) apply(doc bson.Raw, rt *runtime) (bson.Raw, error) {
	var fs []field
	switch pr.mode {
	case exclusion:
		fs = pr.root.exclude(doc)
	case inclusion:
		fs = pr.root.include(doc)
	default:
		fs = fieldsOf(doc)
	}
	if !pr.root.computed {
		return buildDoc(fs), nil
	}
	fs, err := pr.root.compute(fs, doc, rt)
	if err != nil {
		return nil, err
	}
	return buildDoc(fs), nil
}

// include keeps the included fields of doc, in document order. Through
// arrays a nested projection applies to each subdocument, and other
// elements are dropped. Where the nested projection computes fields, other
// values (scalars, in arrays too) stay in place for compute to replace with
// a document of the computed fields, as MongoDB's projection leaves them
// missing there for its expressions to fill.
func (n *projNode) include(doc []byte) []field {
	var out []field
	for _, f := range fieldsOf(doc) {
		it := n.items[f.key]
		switch {
		case it == nil:
		case it.include:
			out = append(out, f)
		case it.sub != nil:
			switch f.val.Type {
			case bson.TypeEmbeddedDocument:
				out = append(out, field{f.key, docValue(buildDoc(it.sub.include(f.val.Value)))})
			case bson.TypeArray:
				out = append(out, field{f.key, it.sub.includeArray(f.val)})
			default:
				if it.sub.computed {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func (n *projNode) includeArray(arr bson.RawValue) bson.RawValue {
	var out []bson.RawValue
	for _, el := range arrayValues(arr) {
		switch el.Type {
		case bson.TypeEmbeddedDocument:
			out = append(out, docValue(buildDoc(n.include(el.Value))))
		case bson.TypeArray:
			out = append(out, n.includeArray(el))
		default:
			if n.computed {
				out = append(out, el)
			}
		}
	}
	return buildArray(out)
}

// exclude drops the excluded fields of doc; through arrays it applies to
// each subdocument and keeps other elements. A computed ($meta) field is
// kept for compute to set.
func (n *projNode) exclude(doc []byte) []field {
	var out []field
	for _, f := range fieldsOf(doc) {
		it := n.items[f.key]
		switch {
		case it == nil || it.include || it.expr != nil:
			out = append(out, f)
		case it.exclude:
		case f.val.Type == bson.TypeEmbeddedDocument:
			out = append(out, field{f.key, docValue(buildDoc(it.sub.exclude(f.val.Value)))})
		case f.val.Type == bson.TypeArray:
			out = append(out, field{f.key, it.sub.excludeArray(f.val)})
		default:
			out = append(out, f)
		}
	}
	return out
}

func (n *projNode) excludeArray(arr bson.RawValue) bson.RawValue {
	vals := arrayValues(arr)
	for i, el := range vals {
		switch el.Type {
		case bson.TypeEmbeddedDocument:
			vals[i] = docValue(buildDoc(n.exclude(el.Value)))
		case bson.TypeArray:
			vals[i] = n.excludeArray(el)
		}
	}
	return buildArray(vals)
}

// compute sets the computed fields of this level on fs, in specification
// order: a field already present keeps its position, a new one is
// appended, and a computed value that is missing removes the field.
func (n *projNode) compute(fs []field, root bson.Raw, rt *runtime) ([]field, error) {
	for _, key := range n.order {
		it := n.items[key]
		switch {
		case it.expr != nil:
			v, err := it.expr.Eval(rt.ectx, root)
			if err != nil {
				return nil, err
			}
			fs = setField(fs, key, v)
		case it.sub != nil && it.sub.computed:
			v, err := it.sub.computeValue(getField(fs, key), root, rt)
			if err != nil {
				return nil, err
			}
			fs = setField(fs, key, v)
		}
	}
	return fs, nil
}

// computeValue applies the computed fields of a nested level to the
// current value of its field: into a document, into each element of an
// array, or into a new document replacing any other value.
func (n *projNode) computeValue(cur bson.RawValue, root bson.Raw, rt *runtime) (bson.RawValue, error) {
	switch cur.Type {
	case bson.TypeArray:
		vals := arrayValues(cur)
		for i, el := range vals {
			v, err := n.computeValue(el, root, rt)
			if err != nil {
				return missing, err
			}
			vals[i] = v
		}
		return buildArray(vals), nil
	case bson.TypeEmbeddedDocument:
		fs, err := n.compute(fieldsOf(cur.Value), root, rt)
		if err != nil {
			return missing, err
		}
		return docValue(buildDoc(fs)), nil
	}
	fs, err := n.compute(nil, root, rt)
	if err != nil {
		return missing, err
	}
	return docValue(buildDoc(fs)), nil
}

// projectStage is $project, $addFields/$set or $unset.
type projectStage struct{ proj *projection }

func (s *projectStage) run(in Source, rt *runtime) Source {
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		out, err := s.proj.apply(doc, rt)
		if err != nil {
			return nil, err
		}
		return []bson.Raw{out}, nil
	}}
}

// parseProject reads $project: an inclusion projection (with computed
// fields, _id included unless excluded) or an exclusion projection; the two
// cannot be mixed except for excluding _id.
func (p *parser) parseProject(arg bson.RawValue) (stage, error) {
	pr, err := p.parseProjection("$project", arg, false)
	if err != nil {
		return nil, err
	}
	return &projectStage{pr}, nil
}

// parseAddFields reads $addFields (alias $set): every value is an
// expression, and nested objects set fields inside subdocuments.
func (p *parser) parseAddFields(name string, arg bson.RawValue) (stage, error) {
	pr, err := p.parseProjection(name, arg, true)
	if err != nil {
		return nil, err
	}
	return &projectStage{pr}, nil
}

// parseUnset reads $unset: a field path or an array of them, removed as an
// exclusion projection would.
func parseUnset(arg bson.RawValue) (stage, error) {
	var paths []string
	switch arg.Type {
	case bson.TypeString:
		paths = []string{arg.StringValue()}
	case bson.TypeArray:
		vals := arrayValues(arg)
		if len(vals) == 0 {
			return nil, mongoerr.New(mongoerr.UnsetSpecEmpty, "$unset specification must be a string or an array with at least one field")
		}
		for _, v := range vals {
			if v.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.UnsetSpecNonString, "$unset specification must be a string or an array containing only string values")
			}
			paths = append(paths, v.StringValue())
		}
	default:
		return nil, mongoerr.New(mongoerr.UnsetSpecInvalidType, "$unset specification must be a string or an array")
	}
	pp := &projParse{root: newProjNode()}
	for _, path := range paths {
		// MongoDB parses {path: false, ...} as $project does
		// (DocumentSourceProject::createFromBson).
		_, err := query.ProjectionKey(path, false)
		if err == nil {
			err = expr.CheckFieldPath(path)
		}
		if err == nil {
			err = pp.add(path, path, &projItem{exclude: true})
		}
		if err != nil {
			return nil, invalidStage("$unset", err)
		}
	}
	return &projectStage{&projection{mode: exclusion, root: pp.root}}, nil
}

// replaceRootStage is $replaceRoot/$replaceWith: the document becomes the
// value of an expression, which must be a document.
type replaceRootStage struct {
	newRoot *expr.Expr
	// what names newRoot in the error of a value that is not a document
	// (ReplaceRootTransformation's errMsgContextForNonObject), as
	// notObjectError puts it.
	what string
}

func (p *parser) parseReplaceRoot(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.ReplaceRootSpecNotObject, "expected an object as specification for $replaceRoot stage, got %s", typeName(arg))
	}
	var root bson.RawValue
	for _, f := range fieldsOf(arg.Value) {
		if f.key != "newRoot" {
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '$replaceRoot.%s' is an unknown field.", f.key)
		}
		root = f.val
	}
	if root.Type == 0 {
		return nil, mongoerr.MissingField("$replaceRoot.newRoot")
	}
	// MongoDB's context for both stage names ends in a space, which its
	// message template follows with another
	// (DocumentSourceReplaceRoot::createFromBson).
	return p.replaceRoot(root, "'newRoot' expression ")
}

func (p *parser) parseReplaceWith(arg bson.RawValue) (stage, error) {
	return p.replaceRoot(arg, "'replacement document' ")
}

func (p *parser) replaceRoot(v bson.RawValue, what string) (stage, error) {
	e, err := expr.Compile(v, p.scope)
	if err != nil {
		return nil, err
	}
	return &replaceRootStage{newRoot: e, what: what}, nil
}

func (s *replaceRootStage) run(in Source, rt *runtime) Source {
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		v, err := s.newRoot.Eval(rt.ectx, doc)
		if err != nil {
			return nil, err
		}
		if v.Type != bson.TypeEmbeddedDocument {
			return nil, notObjectError(s.what, v, doc)
		}
		return []bson.Raw{v.Document()}, nil
	}}
}

// notObjectError is MongoDB's 40228 for a new root v, evaluated on doc,
// that is not a document (ReplaceRootTransformation::applyTransformation):
// what, the stage's context, is followed by " must evaluate" as given.
func notObjectError(what string, v bson.RawValue, doc bson.Raw) error {
	return mongoerr.New(mongoerr.ReplaceRootNotObject,
		"%s must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: %s",
		what, values.ValueString(v), typeName(v), values.ValueString(docValue(doc)))
}
