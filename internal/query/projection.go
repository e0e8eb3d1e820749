package query

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// Projection is a compiled find() projection (MongoDB 4.4+ semantics).
type Projection struct {
	root      *projNode
	inclusion bool
	// posPath is the path of the positional projection (`a.b.$`), if any.
	posPath []string
	// returnKey makes it find's returnKey (ReturnKey), showRecordID
	// find's showRecordId (ShowRecordID).
	returnKey, showRecordID bool
	// metas are the top-level fields set to the document's metadata
	// ({$meta: name}), added after the others; exprMetas are the metadata
	// computed fields read.
	metas     []metaField
	exprMetas []string
	// sortKeyPaths are the paths set to {$meta: "sortKey"}, nested ones
	// too, in order: the fields returnKey keeps.
	sortKeyPaths [][]string
}

type metaField struct{ field, name string }

// NeedsMeta reports whether the projection reads the document's metadata
// name ({$meta: name}).
func (p *Projection) NeedsMeta(name string) bool {
	return p.returnKey && name == "indexKey" || p.showRecordID && name == "recordId" ||
		slices.ContainsFunc(p.metas, func(m metaField) bool { return m.name == name }) ||
		slices.Contains(p.exprMetas, name)
}

// MetaNames are the metadata the projection reads ({$meta: name}), once
// each.
func (p *Projection) MetaNames() []string {
	var names []string
	for _, m := range p.metas {
		names = append(names, m.name)
	}
	names = append(names, p.exprMetas...)
	slices.Sort(names)
	return slices.Compact(names)
}

// NeedsTextScore reports whether the projection reads the document's
// text score.
func (p *Projection) NeedsTextScore() bool { return p.NeedsMeta("textScore") }

// ReturnKey is find's returnKey with the projection p (nil: none): each
// document becomes the key of the index entry it was found through, {}
// without one (a collection scan), as MongoDB's RETURN_KEY stage makes
// it. p's fields are not applied, but for its {$meta: "sortKey"} ones,
// top-level or nested, which MongoDB keeps, setting each path on the key
// in the projection's order (extractSortKeyMetaFieldsFromProjection).
func ReturnKey(p *Projection) *Projection {
	if p == nil {
		p = &Projection{root: &projNode{}}
	}
	r := *p
	r.returnKey = true
	return &r
}

// ShowRecordID is find's showRecordId with the projection p (nil: none):
// each document ends with $recordId, its record id, as MongoDB adds
// {$recordId: {$meta: "recordId"}} to the projection.
func ShowRecordID(p *Projection) *Projection {
	if p == nil {
		p = &Projection{root: &projNode{}}
	}
	r := *p
	r.showRecordID = true
	return &r
}

// UsesMeta reports whether the projection reads document metadata.
func (p *Projection) UsesMeta() bool { return len(p.metas) > 0 || len(p.exprMetas) > 0 }

// ApplyMeta projects doc as Apply does, setting the $meta fields from
// meta (expr.MetaValue: a missing text score fails with 40218).
func (p *Projection) ApplyMeta(doc bson.Raw, pos int, meta docsrc.Meta) (bson.Raw, error) {
	var out bson.Raw
	metas := p.metas
	switch {
	case p.returnKey:
		out = meta.IndexKey
		if out == nil {
			out = emptyDoc
		}
		if len(p.sortKeyPaths) > 0 {
			v, err := expr.MetaValue(meta, "sortKey")
			if err != nil {
				return nil, err
			}
			for _, path := range p.sortKeyPaths {
				if v.Type != 0 {
					out = setNested(nil, out, path, v)
				}
			}
		}
		metas = nil
	default:
		var err error
		if out, err = p.apply(doc, pos, &meta); err != nil {
			return nil, err
		}
	}
	if p.showRecordID {
		metas = append(slices.Clip(metas), metaField{field: "$recordId", name: "recordId"})
	}
	if len(metas) == 0 {
		return out, nil
	}
	start, dst := bsoncore.AppendDocumentStart(nil)
	it := rawdoc.Iterate(out)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if !slices.ContainsFunc(metas, func(m metaField) bool { return m.field == string(k) }) {
			dst = rawdoc.AppendElement(dst, string(k), v)
		}
	}
	for _, m := range metas {
		v, err := expr.MetaValue(meta, m.name)
		if err != nil {
			return nil, err
		}
		if v.Type != 0 {
			dst = rawdoc.AppendElement(dst, m.field, v)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst, nil
}

type projKind uint8

const (
	pkInternal  projKind = iota // a path component with children
	pkInclude                   // field: 1
	pkExclude                   // field: 0
	pkSlice                     // field: {$slice: ...}
	pkElemMatch                 // field: {$elemMatch: ...}
	pkExpr                      // field: literal, "$path" or {$literal: ...}
)

type projNode struct {
	name     string
	kind     projKind
	children []*projNode

	// $slice: the first limit elements (the last -limit when negative), or
	// with hasSkip, limit elements from skip (counted from the end when
	// negative).
	skip, limit int
	hasSkip     bool

	filter *Filter // $elemMatch as the filter {name: {$elemMatch: ...}}
	expr   *projExpr

	// hasExpr marks internal nodes whose subtree holds a computed field.
	hasExpr bool

	// nested is false only for the root.
	nested bool
}

func (n *projNode) child(name []byte) *projNode {
	for _, c := range n.children {
		if c.name == string(name) {
			return c
		}
	}
	return nil
}

// Positional reports whether the projection has a `field.$` element, whose
// Apply needs the position from Filter.MatchPositional.
func (p *Projection) Positional() bool { return p.posPath != nil }

// Apply projects doc; pos is the positional index from MatchPositional (for
// `field.$`). An empty projection returns doc itself. The projection's
// $meta fields are ApplyMeta's.
func (p *Projection) Apply(doc bson.Raw, pos int) (bson.Raw, error) { return p.apply(doc, pos, nil) }

// apply is Apply with the metadata computed fields read (nil: none).
func (p *Projection) apply(doc bson.Raw, pos int, meta *docsrc.Meta) (bson.Raw, error) {
	if !p.inclusion && len(p.root.children) == 0 {
		return doc, nil
	}
	if p.inclusion {
		out, err := p.include(nil, doc, p.root, &projRun{root: doc, meta: meta})
		if err != nil || p.posPath == nil {
			return bson.Raw(out), err
		}
		return applyPositional(out, p.posPath, pos)
	}
	out := exclude(nil, doc, p.root, false)
	if !p.root.hasExpr {
		return bson.Raw(out), nil
	}
	return p.setComputed(nil, out, p.root, &projRun{root: doc, meta: meta})
}

// setComputed sets the computed fields under node (the {$meta} fields
// below the top level of an exclusion projection) in out, the document
// the exclusion left, as MongoDB's ProjectionNode::applyExpressions does
// after the exclusion: a field already in out takes its value in place, a
// new one is appended in specification order; the walk goes on in a
// document, in each element of an array, and replaces a value of another
// kind (or a missing one) by a document of the computed fields.
func (p *Projection) setComputed(dst, out []byte, node *projNode, r *projRun) ([]byte, error) {
	start, dst := bsoncore.AppendDocumentStart(dst)
	set := make(map[*projNode]bool)
	it := rawdoc.Iterate(out)
	var err error
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		c := node.child(k)
		if c == nil || !c.computed() {
			dst = rawdoc.AppendElement(dst, string(k), v)
			continue
		}
		set[c] = true
		if dst, err = p.setComputedField(dst, string(k), v, c, r); err != nil {
			return nil, err
		}
	}
	for _, c := range node.children {
		if c.computed() && !set[c] {
			if dst, err = p.setComputedField(dst, c.name, bson.RawValue{}, c, r); err != nil {
				return nil, err
			}
		}
	}
	return bsoncore.AppendDocumentEnd(dst, start)
}

// computed reports whether n is a computed field or holds one.
func (n *projNode) computed() bool { return n.kind == pkExpr || n.kind == pkInternal && n.hasExpr }

// setComputedField appends key with the value the computed node c gives
// it, v being its value before (setComputed).
func (p *Projection) setComputedField(dst []byte, key string, v bson.RawValue, c *projNode, r *projRun) ([]byte, error) {
	if c.kind == pkExpr {
		nv, ok, err := c.expr.eval(r.root, r.meta)
		if err != nil || !ok {
			return dst, err
		}
		return rawdoc.AppendElement(dst, key, nv), nil
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
		return p.setComputed(dst, v.Value, c, r)
	case bson.TypeArray:
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
		start, dst := bsoncore.AppendArrayStart(dst)
		it := rawdoc.Iterate(v.Value)
		var err error
		for i := 0; ; i++ {
			_, e, ok := it.Next()
			if !ok {
				break
			}
			if dst, err = p.setComputedField(dst, itoa(i), e, c, r); err != nil {
				return nil, err
			}
		}
		return bsoncore.AppendArrayEnd(dst, start)
	}
	dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
	return p.setComputed(dst, emptyDoc, c, r)
}

// projRun is what one inclusion projection of a document reads besides
// the subdocument at hand: the whole document and its metadata (nil:
// none), and whether the walk is inside an array nested in an array.
type projRun struct {
	root   []byte
	meta   *docsrc.Meta
	nested bool
}

// include builds the inclusion projection of doc under node: included fields
// in document order, then computed fields in specification order, then (at
// the top level) $elemMatch fields, as MongoDB 4.4+ orders them. Non-document
// array elements are dropped under a nested inclusion.
func (p *Projection) include(dst, doc []byte, node *projNode, r *projRun) ([]byte, error) {
	start, dst := bsoncore.AppendDocumentStart(dst)
	it := rawdoc.Iterate(doc)
	var err error
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		c := node.child(k)
		if c == nil {
			continue
		}
		key := string(k)
		switch c.kind {
		case pkInclude:
			dst = rawdoc.AppendElement(dst, key, v)
		case pkSlice:
			dst = rawdoc.AppendElement(dst, key, c.slice(v, r.nested))
		case pkInternal:
			switch v.Type {
			case bson.TypeArray:
				if dst, err = p.includeArray(dst, key, v.Value, c, r); err != nil {
					return nil, err
				}
			case bson.TypeEmbeddedDocument:
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
				if dst, err = p.include(dst, v.Value, c, r); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, c := range node.children {
		switch {
		case c.kind == pkExpr:
			v, ok, err := c.expr.eval(r.root, r.meta)
			if err != nil {
				return nil, err
			}
			if ok {
				dst = rawdoc.AppendElement(dst, c.name, v)
			}
		case c.kind == pkInternal && c.hasExpr:
			if t := rawdoc.Lookup(doc, c.name).Type; t != bson.TypeEmbeddedDocument && t != bson.TypeArray {
				dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, c.name)
				if dst, err = p.include(dst, emptyDoc, c, r); err != nil {
					return nil, err
				}
			}
		case c.kind == pkElemMatch:
			if ok, i := c.filter.MatchPositional(r.root); ok && i >= 0 {
				if e, ok := arrayElement(rawdoc.Lookup(r.root, c.name), i); ok {
					dst = rawdoc.AppendElement(dst, c.name, oneElementArray(e))
				}
			}
		}
	}
	return bsoncore.AppendDocumentEnd(dst, start)
}

var emptyDoc = []byte{5, 0, 0, 0, 0}

// includeArray applies a nested inclusion to each element of an array:
// documents are projected, nested arrays recursed, scalars dropped, or,
// when the inclusion computes fields, replaced by a document of them (as
// MongoDB's applyExpressionsToValue: {"a.b": 1} over a: [2] gives a: [{b: 1}]).
func (p *Projection) includeArray(dst []byte, key string, arr []byte, node *projNode, r *projRun) ([]byte, error) {
	if key != "" {
		dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
	}
	start, dst := bsoncore.AppendArrayStart(dst)
	it := rawdoc.Iterate(arr)
	var err error
	for i := 0; ; {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		switch e.Type {
		case bson.TypeEmbeddedDocument:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, itoa(i))
			dst, err = p.include(dst, e.Value, node, r)
		case bson.TypeArray:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, itoa(i))
			outer := r.nested
			r.nested = true
			dst, err = p.includeArray(dst, "", e.Value, node, r)
			r.nested = outer
		default:
			if !node.hasExpr {
				continue
			}
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, itoa(i))
			dst, err = p.include(dst, emptyDoc, node, r)
		}
		if err != nil {
			return nil, err
		}
		i++
	}
	return bsoncore.AppendArrayEnd(dst, start)
}

// exclude builds the exclusion projection of doc under node, keeping
// document order; $slice fields are sliced in place (but not inside an
// array nested in an array: nested says the walk is), and a (top-level)
// $elemMatch field becomes its first matching element in place, or is
// dropped when none matches, as MongoDB adds it to an exclusion's result.
func exclude(dst, doc []byte, node *projNode, nested bool) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	it := rawdoc.Iterate(doc)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		c := node.child(k)
		key := string(k)
		switch {
		case c == nil:
			dst = rawdoc.AppendElement(dst, key, v)
		case c.kind == pkExclude:
		case c.kind == pkSlice:
			dst = rawdoc.AppendElement(dst, key, c.slice(v, nested))
		case c.kind == pkElemMatch:
			if ok, i := c.filter.MatchPositional(doc); ok && i >= 0 {
				if e, ok := arrayElement(v, i); ok {
					dst = rawdoc.AppendElement(dst, key, oneElementArray(e))
				}
			}
		case c.kind == pkInternal && v.Type == bson.TypeEmbeddedDocument:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, key)
			dst = exclude(dst, v.Value, c, nested)
		case c.kind == pkInternal && v.Type == bson.TypeArray:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, key)
			dst = excludeArray(dst, v.Value, c, nested)
		default:
			dst = rawdoc.AppendElement(dst, key, v)
		}
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// excludeArray applies a nested exclusion to each document element of an
// array, recursing into nested arrays and keeping scalars.
func excludeArray(dst, arr []byte, node *projNode, nested bool) []byte {
	start, dst := bsoncore.AppendArrayStart(dst)
	it := rawdoc.Iterate(arr)
	for i := 0; ; i++ {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		switch e.Type {
		case bson.TypeEmbeddedDocument:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, itoa(i))
			dst = exclude(dst, e.Value, node, nested)
		case bson.TypeArray:
			dst = bsoncore.AppendHeader(dst, bsoncore.TypeArray, itoa(i))
			dst = excludeArray(dst, e.Value, node, true)
		default:
			dst = rawdoc.AppendElement(dst, itoa(i), e)
		}
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, start)
	return dst
}

// slice applies $slice to an array value; other values are unchanged, as
// is everything inside an array nested in an array (nested): MongoDB's
// find $slice walks one array level per path component.
func (n *projNode) slice(v bson.RawValue, nested bool) bson.RawValue {
	if v.Type != bson.TypeArray || nested {
		return v
	}
	size := rawdoc.Len(v.Value)
	var from, count int
	switch {
	case !n.hasSkip && n.limit >= 0:
		count = n.limit
	case !n.hasSkip:
		from = max(0, size+n.limit)
		count = size - from
	case n.skip < 0:
		from = max(0, size+n.skip)
		count = n.limit
	default:
		from = min(n.skip, size)
		count = n.limit
	}
	start, dst := bsoncore.AppendArrayStart(nil)
	it := rawdoc.Iterate(v.Value)
	for i, j := 0, 0; j < count; i++ {
		_, e, ok := it.Next()
		if !ok {
			break
		}
		if i >= from {
			dst = rawdoc.AppendElement(dst, itoa(j), e)
			j++
		}
	}
	dst, _ = bsoncore.AppendArrayEnd(dst, start)
	return bson.RawValue{Type: bson.TypeArray, Value: dst}
}

// applyPositional applies a positional projection of path to post, the
// document the projection made (with path included), as MongoDB's
// applyFindPositionalProjection does: the first array met along path in
// post is replaced by the one-element array of its element at pos, the
// index the filter recorded. A document (or a missing value) on the way is
// descended into; a value of another kind is passed over, the walk going
// on with the next name in the same document. Without an array, post is
// unchanged; with one, a filter that recorded no index fails with 51246,
// and an index past the array's end (its elements that are not documents
// or arrays were dropped by a nested inclusion) with 51247. Both are
// run-time errors: the find reports them with its executor's prefix.
func applyPositional(post []byte, path []string, pos int) (bson.Raw, error) {
	sub := post
	for i, name := range path {
		switch v := rawdoc.Lookup(sub, name); v.Type {
		case bson.TypeArray:
			if pos < 0 {
				return nil, mongoerr.New(mongoerr.ProjectionPositionalNoMatch, "positional operator '.$' couldn't find a matching element in the array")
			}
			e, ok := arrayElement(v, pos)
			if !ok {
				return nil, mongoerr.New(mongoerr.ProjectionPositionalMismatch, "positional operator '.$' element mismatch")
			}
			return setNested(nil, post, path[:i+1], oneElementArray(e)), nil
		case bson.TypeEmbeddedDocument:
			sub = v.Value
		}
	}
	return post, nil
}

// setNested appends to dst doc with the value at path set to v, as
// MongoDB's MutableDocument::setNestedField sets it: a field that exists
// keeps its place, a missing one is appended, and a value on the way that
// is not a document becomes one.
func setNested(dst, doc []byte, path []string, v bson.RawValue) []byte {
	start, dst := bsoncore.AppendDocumentStart(dst)
	set := false
	it := rawdoc.Iterate(doc)
	for {
		k, e, ok := it.Next()
		if !ok {
			break
		}
		if set || string(k) != path[0] {
			dst = rawdoc.AppendElement(dst, string(k), e)
			continue
		}
		dst = appendNested(dst, path, e, v)
		set = true
	}
	if !set {
		dst = appendNested(dst, path, bson.RawValue{}, v)
	}
	dst, _ = bsoncore.AppendDocumentEnd(dst, start)
	return dst
}

// appendNested appends the field path[0], whose value was cur, with v set
// at the rest of path.
func appendNested(dst []byte, path []string, cur, v bson.RawValue) []byte {
	if len(path) == 1 {
		return rawdoc.AppendElement(dst, path[0], v)
	}
	inner := emptyDoc
	if cur.Type == bson.TypeEmbeddedDocument {
		inner = cur.Value
	}
	dst = bsoncore.AppendHeader(dst, bsoncore.TypeEmbeddedDocument, path[0])
	return setNested(dst, inner, path[1:], v)
}

// arrayElement returns the element of arr at index i.
func arrayElement(arr bson.RawValue, i int) (bson.RawValue, bool) {
	it := rawdoc.Iterate(arr.Value)
	for j := 0; ; j++ {
		_, e, ok := it.Next()
		if !ok || j == i {
			return e, ok
		}
	}
}

// oneElementArray is [e], what a positional or $elemMatch projection
// leaves of an array.
func oneElementArray(e bson.RawValue) bson.RawValue {
	start, dst := bsoncore.AppendArrayStart(nil)
	dst = rawdoc.AppendElement(dst, "0", e)
	dst, _ = bsoncore.AppendArrayEnd(dst, start)
	return bson.RawValue{Type: bson.TypeArray, Value: dst}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// joinPath joins a parent path and a field name.
func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
