package query

import (
	"strings"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// projExpr is a computed projection value (MongoDB 4.4+): a literal, a field
// path "$a.b", $$ROOT/$$CURRENT (optionally with a path), $$REMOVE,
// {$literal: v}, or an array of such values. Other aggregation expressions
// are not supported yet.
type projExpr struct {
	literal bson.RawValue
	path    []string // field path from the root document; nil for literals
	isPath  bool
	remove  bool
	array   []*projExpr
	isArray bool
}

func parseProjExpr(v bson.RawValue) (*projExpr, error) {
	if s, ok := v.StringValueOK(); ok {
		if !strings.HasPrefix(s, "$") {
			return &projExpr{literal: v}, nil
		}
		return parseFieldRef(s)
	}
	switch v.Type {
	case bson.TypeArray:
		e := &projExpr{isArray: true}
		it := rawdoc.Iterate(v.Value)
		for {
			_, el, ok := it.Next()
			if !ok {
				return e, nil
			}
			sub, err := parseProjExpr(el)
			if err != nil {
				return nil, err
			}
			e.array = append(e.array, sub)
		}
	case bson.TypeEmbeddedDocument:
		op := rawdoc.FirstKey(v.Value)
		if op == "$literal" {
			return &projExpr{literal: rawdoc.Lookup(v.Value, "$literal")}, nil
		}
		if strings.HasPrefix(op, "$") {
			return nil, mongoerr.New(mongoerr.NotImplemented, "projection expression %s is not supported", op)
		}
	}
	return &projExpr{literal: v}, nil
}

// parseFieldRef parses "$a.b", "$$ROOT[.a]", "$$CURRENT[.a]" and "$$REMOVE".
func parseFieldRef(s string) (*projExpr, error) {
	if s == "$" {
		return nil, mongoerr.New(16872, "'$' by itself is not a valid FieldPath")
	}
	if strings.HasPrefix(s, "$$") {
		name, rest, _ := strings.Cut(s[2:], ".")
		switch name {
		case "REMOVE":
			return &projExpr{remove: true}, nil
		case "ROOT", "CURRENT":
			e := &projExpr{isPath: true}
			if rest != "" {
				if err := checkFieldPath(rest); err != nil {
					return nil, err
				}
				e.path = strings.Split(rest, ".")
			}
			return e, nil
		}
		return nil, mongoerr.New(17276, "Use of undefined variable: %s", name)
	}
	if err := checkFieldPath(s[1:]); err != nil {
		return nil, err
	}
	return &projExpr{isPath: true, path: strings.Split(s[1:], ".")}, nil
}

// eval computes the expression against the root document; ok is false when
// the result is missing (the field is then left out).
func (e *projExpr) eval(root []byte) (bson.RawValue, bool) {
	switch {
	case e.remove:
		return bson.RawValue{}, false
	case e.isPath:
		v := expr.WalkPath(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: root}, e.path)
		return v, v.Type != 0
	case e.isArray:
		start, dst := bsoncore.AppendArrayStart(nil)
		for i, sub := range e.array {
			v, ok := sub.eval(root)
			if !ok {
				v = bson.RawValue{Type: bson.TypeNull}
			}
			dst = appendValue(dst, itoa(i), v)
		}
		dst, _ = bsoncore.AppendArrayEnd(dst, start)
		return bson.RawValue{Type: bson.TypeArray, Value: dst}, true
	}
	return e.literal, e.literal.Type != 0
}
