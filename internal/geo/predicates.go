package geo

import (
	"slices"
	"strconv"

	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// onEdge is how close a point must be to a line to lie on it.
const onEdge = s1.Angle(1e-12)

// Geometries reads the geometries of a document's value at an indexed or
// queried path: a geometry, or an array of them (an array of numbers is
// one legacy pair). ok is false when the value holds none or a malformed
// one.
func Geometries(v bson.RawValue) (gs []*Geometry, err error) {
	if v.Type == bson.TypeArray {
		vals, _ := v.Array().Values()
		if len(vals) > 0 && vals[0].Type != bson.TypeArray && vals[0].Type != bson.TypeEmbeddedDocument {
			g, err := Parse(v)
			if err != nil {
				return nil, err
			}
			return []*Geometry{g}, nil
		}
		for _, e := range vals {
			g, err := Parse(e)
			if err != nil {
				return nil, err
			}
			gs = append(gs, g)
		}
		return gs, nil
	}
	g, err := Parse(v)
	if err != nil {
		return nil, err
	}
	return []*Geometry{g}, nil
}

// Matches reports whether the value v of a document answers the query:
// any of its geometries (malformed values never match). A Near query
// matches values within its bounds.
func (q *Query) Matches(v bson.RawValue) bool {
	switch {
	case q.flatIn != nil:
		return slices.ContainsFunc(planePoints(v), func(p [2]float64) bool { return q.flatIn(p[0], p[1]) })
	case q.Op == Near && q.Legacy:
		d, ok := FlatDistance(LegacyPairs(v), q.CenterX, q.CenterY)
		return ok && d >= float64(q.Min) && d <= float64(q.Max)
	}
	gs, err := Geometries(v)
	if err != nil {
		return false
	}
	for _, g := range gs {
		switch q.Op {
		case Within:
			if q.within(g) {
				return true
			}
		case Intersects:
			if intersects(g, q.geom) {
				return true
			}
		case Near:
			if d := g.Distance(q.Center); d >= q.Min && d <= q.Max {
				return true
			}
		}
	}
	return false
}

// planePoints are the points of a document's value a flat shape tests:
// the value when it is a point, a legacy pair or a GeoJSON Point (which
// MongoDB projects onto the plane), else each element of an array that
// is one. Other geometries have no plane form and never match.
func planePoints(v bson.RawValue) [][2]float64 {
	if p, ok := planePoint(v); ok {
		return [][2]float64{p}
	}
	if v.Type != bson.TypeArray {
		return nil
	}
	vals, _ := v.Array().Values()
	var out [][2]float64
	for _, e := range vals {
		if p, ok := planePoint(e); ok {
			out = append(out, p)
		}
	}
	return out
}

func planePoint(v bson.RawValue) ([2]float64, bool) {
	if x, y, ok := LegacyPair(v); ok {
		return [2]float64{x, y}, true
	}
	if d, ok := v.DocumentOK(); ok && d.Lookup("type").Type == bson.TypeString {
		if g, err := parseGeoJSON(d); err == nil && g.Type == "Point" {
			return [2]float64{g.X, g.Y}, true
		}
	}
	return [2]float64{}, false
}

// withinPolygons reports whether every part of g lies inside one of ps.
func withinPolygons(g *Geometry, ps []*s2.Polygon) bool {
	inOne := func(test func(*s2.Polygon) bool) bool {
		for _, p := range ps {
			if test(p) {
				return true
			}
		}
		return false
	}
	for _, pt := range g.Points {
		if !inOne(func(p *s2.Polygon) bool { return pointInPolygon(pt, p) }) {
			return false
		}
	}
	for _, l := range g.Lines {
		if !inOne(func(p *s2.Polygon) bool { return lineInPolygon(*l, p) }) {
			return false
		}
	}
	for _, poly := range g.Polygons {
		if !inOne(func(p *s2.Polygon) bool { return p.Contains(poly) }) {
			return false
		}
	}
	return true
}

// pointInPolygon is MongoDB's containsPoint: inside p, or on its boundary
// (p meets the leaf cell of the point), so that the vertices and edges of
// a polygon are within it.
func pointInPolygon(pt s2.Point, p *s2.Polygon) bool {
	return p.ContainsPoint(pt) || p.IntersectsCell(s2.CellFromPoint(pt))
}

// lineInPolygon: every vertex, and the middle of every edge, inside or on
// the boundary (pointInPolygon), and no edge crossing the boundary; an
// edge along the boundary, vertex to vertex, is within.
func lineInPolygon(l s2.Polyline, p *s2.Polygon) bool {
	for i, v := range l {
		if !pointInPolygon(v, p) {
			return false
		}
		if i > 0 && !pointInPolygon(s2.Interpolate(0.5, l[i-1], v), p) {
			return false
		}
	}
	return !lineCrossesPolygon(l, p)
}

// lineCrossesPolygon reports whether an edge of l crosses an edge of p.
func lineCrossesPolygon(l s2.Polyline, p *s2.Polygon) bool {
	for i := 0; i+1 < len(l); i++ {
		for _, loop := range p.Loops() {
			vs := loop.Vertices()
			for j := range vs {
				if s2.CrossingSign(l[i], l[i+1], vs[j], vs[(j+1)%len(vs)]) == s2.Cross {
					return true
				}
			}
		}
	}
	return false
}

// withinCap reports whether g lies in c: each point's leaf cell meets
// it, and no line or polygon comes nearer to the center of c's complement
// than the complement's radius, as MongoDB's GeometryContainer::contains
// tests a $centerSphere (a cap larger than a hemisphere may hold every
// vertex of a line whose edges leave it).
func withinCap(g *Geometry, c s2.Cap) bool {
	for _, p := range g.Points {
		// MongoDB's test of a point: the cap meets the point's leaf cell
		if !c.IntersectsCell(s2.CellFromPoint(p)) {
			return false
		}
	}
	comp := c.Complement()
	for _, l := range g.Lines {
		if lineDistance(comp.Center(), *l) < comp.Radius() {
			return false
		}
	}
	for _, poly := range g.Polygons {
		if (&Geometry{Polygons: []*s2.Polygon{poly}}).Distance(comp.Center()) < comp.Radius() {
			return false
		}
	}
	return true
}

// intersects reports whether a and b share a point.
func intersects(a, b *Geometry) bool {
	for _, p := range a.Points {
		if b.Distance(p) <= onEdge {
			return true
		}
	}
	for _, p := range b.Points {
		if a.Distance(p) <= onEdge {
			return true
		}
	}
	for _, l := range a.Lines {
		if lineMeets(*l, b) {
			return true
		}
	}
	for _, l := range b.Lines {
		if lineMeets(*l, a) {
			return true
		}
	}
	for _, p := range a.Polygons {
		for _, q := range b.Polygons {
			if p.Intersects(q) {
				return true
			}
		}
	}
	return false
}

// lineMeets reports whether l meets a line or polygon of g.
func lineMeets(l s2.Polyline, g *Geometry) bool {
	for _, m := range g.Lines {
		if l.Intersects(m) {
			return true
		}
	}
	for _, p := range g.Polygons {
		for _, v := range l {
			if p.ContainsPoint(v) {
				return true
			}
		}
		if lineCrossesPolygon(l, p) {
			return true
		}
	}
	return false
}

// EachValue calls fn with each value at parts below v, the values a geo
// index keys and a geo query reads: an array on the way is entered at the
// position a numeric part names when it has one, else through its
// documents; the value at the end is passed whole.
func EachValue(v bson.RawValue, parts []string, fn func(bson.RawValue) error) error {
	if len(parts) == 0 {
		return fn(v)
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		if child, err := v.Document().LookupErr(parts[0]); err == nil {
			return EachValue(child, parts[1:], fn)
		}
	case bson.TypeArray:
		if n, err := strconv.Atoi(parts[0]); err == nil && n >= 0 {
			if child, err := v.Array().IndexErr(uint(n)); err == nil {
				return EachValue(child, parts[1:], fn)
			}
		}
		elems, _ := v.Array().Values()
		for _, el := range elems {
			if el.Type == bson.TypeEmbeddedDocument {
				if err := EachValue(el, parts, fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Locations are the locations of a field's value: each element of an
// array of pairs or geometries (a multi-location field), else the value.
// The closest one is the location $geoNear's includeLocs reports.
func Locations(v bson.RawValue) []bson.RawValue {
	if v.Type != bson.TypeArray {
		return []bson.RawValue{v}
	}
	vals, _ := v.Array().Values()
	if len(vals) == 0 || vals[0].Type != bson.TypeArray && vals[0].Type != bson.TypeEmbeddedDocument {
		return []bson.RawValue{v}
	}
	return vals
}

// SphereDistance is the angle from c to the closest of v's geometries
// (legacy pairs on the sphere included, as a value a 2d index keys may
// hold pairs outside it); ok is false when v holds none.
func SphereDistance(v bson.RawValue, c s2.Point) (d s1.Angle, ok bool) {
	best := s1.InfAngle()
	gs, err := Geometries(v)
	for _, g := range gs {
		best = min(best, g.Distance(c))
	}
	if err != nil {
		for _, p := range SpherePoints(v) {
			best = min(best, c.Distance(p))
		}
	}
	return best, best < s1.InfAngle()
}
