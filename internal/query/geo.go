package query

import (
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
)

// parseGeo parses $geoWithin (and its old name $within), $geoIntersects,
// $near and $nearSphere on path; ops is the operator document, which
// also holds a legacy $near's $minDistance and $maxDistance.
func parseGeo(path, op string, v bson.RawValue, ops []byte) (*Node, error) {
	var q *geo.Query
	var err error
	switch op {
	case "$geoWithin", "$within":
		q, err = geo.ParseWithin(v)
	case "$geoIntersects":
		q, err = geo.ParseIntersects(v)
	default:
		q, err = geo.ParseNear(op, v, ops)
	}
	if err != nil {
		var unsupported *geo.UnsupportedError
		if errors.As(err, &unsupported) {
			return nil, mongoerr.New(mongoerr.NotImplemented, "%s", err.Error())
		}
		return nil, mongoerr.New(mongoerr.BadValue, "%s", err.Error())
	}
	return leaf(KindGeo, path, v, func(n *Node) { n.geo = q }), nil
}

// nearBound reports whether a $minDistance or $maxDistance in ops sits
// beside a legacy $near or $nearSphere, which reads it.
func nearBound(ops []byte) bool {
	return rawdoc.Lookup(ops, "$near").Type != 0 || rawdoc.Lookup(ops, "$nearSphere").Type != 0
}

// Geo is a geo node's query.
func (n *Node) Geo() *geo.Query { return n.geo }

// GeoNear is the filter's $near or $nearSphere node, or nil. MongoDB
// allows one, at the top level (or in a top-level $and).
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
				err = mongoerr.New(mongoerr.BadValue, "geoNear must be top-level expr")
			}
			found = n
		}
		for _, c := range n.Children {
			visit(c, top && n.Kind == KindAnd)
		}
	}
	visit(f.root, true)
	if err != nil {
		return nil, err
	}
	return found, nil
}
