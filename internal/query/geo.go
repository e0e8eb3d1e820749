package query

import (
	"errors"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/values"
)

// parseGeo parses $geoWithin (and its old name $within), $geoIntersects,
// $near (and its alias $geoNear) and $nearSphere on path; ops is the operator document, which
// also holds a legacy $near's $minDistance and $maxDistance. A proximity
// operator fails first where env does not allow it, as MongoDB's parseGeo
// checks.
func parseGeo(path, op string, v bson.RawValue, ops []byte, env *parseEnv) (*Node, error) {
	if op != "$geoWithin" && op != "$within" && op != "$geoIntersects" && env.allowed&FeatureGeoNear == 0 {
		return nil, notAllowed(FeatureGeoNear)
	}
	if err := geoSiblings(op, ops); err != nil {
		return nil, err
	}
	var q *geo.Query
	var err error
	switch op {
	case "$geoWithin", "$within":
		q, err = geo.ParseWithin(op, v)
	case "$geoIntersects":
		q, err = geo.ParseIntersects(v)
	default:
		q, err = geo.ParseNear(op, ops)
	}
	if err != nil {
		var unsupported *geo.UnsupportedError
		if errors.As(err, &unsupported) {
			return nil, mongoerr.New(mongoerr.NotImplemented, "%s", err.Error())
		}
		if ge, ok := err.(*geo.Error); ok && ge.Code != 0 {
			return nil, mongoerr.New(ge.Code, "%s", err.Error())
		}
		return nil, mongoerr.New(mongoerr.BadValue, "%s", err.Error())
	}
	// the node's value is the operator document as MongoDB's geo
	// expressions keep it (and serialize it): a proximity operator's whole
	// document, with its distance bounds, or {op: v}
	raw := bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: ops}
	if q.Op != geo.Near {
		raw.Value = bsoncore.NewDocumentBuilder().AppendValue(op, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}).Build()
	}
	return leaf(KindGeo, path, raw, func(n *Node) { n.geo = q }), nil
}

// geoSiblings checks what sits beside geo operator op in its operator
// document ops. MongoDB parses a geo operator from the whole document:
// $geoWithin and $geoIntersects stand alone, and $near or $nearSphere
// take only $minDistance, $maxDistance and the ignored $uniqueDocs
// beside them (34413 otherwise; a second near operator is BadValue).
func geoSiblings(op string, ops []byte) error {
	near := op == "$near" || op == "$nearSphere" || op == "$geoNear"
	if !near {
		// GeoExpression::parseQuery reads the whole operator document:
		// its first element is the query, a second one is named, value
		// and all, wherever op stands.
		elems, _ := bson.Raw(ops).Elements()
		if len(elems) > 1 {
			return mongoerr.New(mongoerr.BadValue, "can't parse extra field: %s", values.ShellElement(elems[1].Key(), elems[1].Value()))
		}
		return nil
	}
	it := rawdoc.Iterate(ops)
	for {
		k, _, ok := it.Next()
		if !ok {
			return nil
		}
		key := string(k)
		if key == op || key == "$minDistance" || key == "$maxDistance" || key == "$uniqueDocs" {
			continue
		}
		if key != "$near" && key != "$nearSphere" && key != "$geoNear" {
			return mongoerr.New(mongoerr.GeoNearMixedWithOperators, "%s cannot be mixed with other operators on its field: %s", op, key)
		}
		return mongoerr.New(mongoerr.BadValue, "can't parse extra field: %s", key)
	}
}

// nearBound reports whether a $minDistance, $maxDistance or $uniqueDocs
// in ops sits beside a legacy $near, $nearSphere or $geoNear, which reads
// it.
func nearBound(ops []byte) bool {
	return rawdoc.Lookup(ops, "$near").Type != 0 || rawdoc.Lookup(ops, "$nearSphere").Type != 0 ||
		rawdoc.Lookup(ops, "$geoNear").Type != 0
}

// Geo is a geo node's query.
func (n *Node) Geo() *geo.Query { return n.geo }

// GeoNear is the filter's $near or $nearSphere node, or nil. MongoDB
// allows one, at the top level (or in a top-level $and) once the filter
// is normalized, where an $and or $or of one clause is that clause
// (CanonicalQuery::isValidNormalized, MatchExpression::normalize).
func (f *Filter) GeoNear() (*Node, error) {
	var found *Node
	var err error
	var visit func(n *Node, top bool)
	visit = func(n *Node, top bool) {
		if n.Kind == KindGeo && n.geo.Op == geo.Near {
			switch {
			case found != nil:
				err = mongoerr.New(mongoerr.BadValue, "Too many geoNear expressions")
			case !top:
				err = mongoerr.New(mongoerr.BadValue, "geo $near must be top-level expr")
			}
			found = n
		}
		for _, c := range n.Children {
			visit(c, top && (n.Kind == KindAnd || n.Kind == KindOr && len(n.Children) == 1))
		}
	}
	visit(f.root, true)
	if err != nil {
		return nil, err
	}
	return found, nil
}

// HasNear reports whether the filter holds a $near or $nearSphere
// anywhere, which contexts that cannot sort by distance (an aggregation's
// $match) refuse.
func (f *Filter) HasNear() bool {
	var has func(n *Node) bool
	has = func(n *Node) bool {
		return n.Kind == KindGeo && n.geo.Op == geo.Near || slices.ContainsFunc(n.Children, has)
	}
	return has(f.root)
}
