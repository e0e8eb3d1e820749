// Package geo is MongoDB's spherical geometry without I/O: GeoJSON
// geometries and legacy coordinate pairs parsed and validated as a
// 2dsphere index and the geo query operators parse them, the S2 cells a
// 2dsphere index keys them by and a query scans, and the predicates and
// distances of $geoWithin, $geoIntersects, $near and $geoNear, on
// github.com/golang/geo's S2.
package geo

import (
	"fmt"
	"math"

	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// EarthRadiusMeters is the radius MongoDB converts GeoJSON distances in
// meters with.
const EarthRadiusMeters = 6378100.0

// Geometry is a parsed geometry: its points, lines and polygons on the
// sphere. A point, a legacy coordinate pair or a GeoJSON Point, also
// keeps its plane coordinates (X, Y) for the flat shapes ($box,
// $polygon, $center).
type Geometry struct {
	Type     string // the GeoJSON type, "Point" for a legacy pair
	Legacy   bool
	X, Y     float64
	Points   []s2.Point
	Lines    []*s2.Polyline
	Polygons []*s2.Polygon
	// BigPolygon is a stored Polygon naming the strict-winding crs,
	// which a 2dsphere index cannot key (S2GetKeysForElement).
	BigPolygon bool
}

// Error is why a value is no geometry; the caller wraps it in the code of
// its context (16755 on insert, BadValue in a query) unless it carries
// a code of its own. A value it quotes is printed as GeoParser prints it,
// by BSONElement::toString (values.Shell), not as extended JSON.
type Error struct {
	Msg  string
	Code mongoerr.Code
}

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Parse reads a GeoJSON geometry object or a legacy coordinate pair (an
// array, or a document, whose first two values are numbers). A pair off
// the sphere is refused as a stored one is (S2GetKeysForElement: the flat
// point parses, its projection fails), naming the value.
func Parse(v bson.RawValue) (*Geometry, error) {
	if v.Type == bson.TypeEmbeddedDocument {
		d := v.Document()
		if t, err := d.LookupErr("type"); err == nil && t.Type == bson.TypeString {
			// GeoParser reads a stored object's crs as a query's: an
			// unknown one is malformed, and only a Polygon may name the
			// strict-winding one (a big polygon): parseGeoJSONCRS allows
			// it for polygons alone, as nearPoint does.
			strict, err := strictCRS(d)
			if err != nil {
				return nil, err
			}
			if strict && t.StringValue() != "Polygon" {
				return nil, errorf("Strict winding order is only supported by polygon")
			}
			g, err := parseGeoJSON(d)
			if g != nil {
				g.BigPolygon = strict
			}
			return g, err
		}
	}
	x, y, ok := LegacyPair(v)
	if !ok {
		return nil, errorf("Point must be an array or object, instead got type %s", values.TypeName(v.Type))
	}
	if x < -180 || x > 180 || y < -90 || y > 90 {
		return nil, errorf("can't project geometry into spherical CRS: %s", values.Shell(v))
	}
	return &Geometry{Type: "Point", Legacy: true, X: x, Y: y, Points: []s2.Point{point(x, y)}}, nil
}

// LegacyPair reads [x, y] or {a: x, b: y} (the first two values, which
// must be numbers).
func LegacyPair(v bson.RawValue) (x, y float64, ok bool) {
	var vals []bson.RawValue
	switch v.Type {
	case bson.TypeArray:
		vals, _ = v.Array().Values()
	case bson.TypeEmbeddedDocument:
		elems, _ := v.Document().Elements()
		for _, el := range elems {
			vals = append(vals, el.Value())
		}
	default:
		return 0, 0, false
	}
	if len(vals) < 2 {
		return 0, 0, false
	}
	x, okX := values.Float64(vals[0])
	y, okY := values.Float64(vals[1])
	return x, y, okX && okY && values.IsNumber(vals[0].Type) && values.IsNumber(vals[1].Type)
}

func point(lng, lat float64) s2.Point { return s2.PointFromLatLng(s2.LatLngFromDegrees(lat, lng)) }

func parseGeoJSON(d bson.Raw) (*Geometry, error) {
	typ, ok := d.Lookup("type").StringValueOK()
	if !ok {
		return nil, errorf("unknown GeoJSON type: %s", values.ShellDoc(d))
	}
	g := &Geometry{Type: typ}
	if typ == "GeometryCollection" {
		geoms, err := d.LookupErr("geometries")
		if err != nil || geoms.Type != bson.TypeArray {
			return nil, errorf("GeometryCollection geometries must be an array")
		}
		vals, _ := geoms.Array().Values()
		if len(vals) == 0 {
			return nil, errorf("GeometryCollection geometries must have at least 1 element")
		}
		for i, v := range vals {
			if v.Type != bson.TypeEmbeddedDocument {
				return nil, errorf("Element %d of \"geometries\" is not an object", i)
			}
			sub, err := parseGeoJSON(v.Document())
			if err != nil {
				return nil, err
			}
			g.Points = append(g.Points, sub.Points...)
			g.Lines = append(g.Lines, sub.Lines...)
			g.Polygons = append(g.Polygons, sub.Polygons...)
		}
		return g, nil
	}
	coords, err := d.LookupErr("coordinates")
	if err != nil || coords.Type != bson.TypeArray {
		return nil, errorf("GeoJSON coordinates must be an array")
	}
	switch typ {
	case "Point":
		p, err := position(coords)
		if err != nil {
			return nil, err
		}
		g.Points = append(g.Points, p)
		// The plane coordinates a flat shape tests the point by.
		vals, _ := coords.Array().Values()
		g.X, _ = values.Float64(vals[0])
		g.Y, _ = values.Float64(vals[1])
	case "MultiPoint":
		err = eachInto(coords, typ, position, &g.Points)
	case "LineString":
		var l *s2.Polyline
		if l, err = lineString(coords); err == nil {
			g.Lines = append(g.Lines, l)
		}
	case "MultiLineString":
		err = eachInto(coords, typ, lineString, &g.Lines)
	case "Polygon":
		var p *s2.Polygon
		if p, err = polygon(coords); err == nil {
			g.Polygons = append(g.Polygons, p)
		}
	case "MultiPolygon":
		err = eachInto(coords, typ, polygon, &g.Polygons)
	default:
		return nil, errorf("unknown GeoJSON type: %s", values.ShellDoc(d))
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// eachInto appends to dst each element of the array coords of a Multi-
// geometry of type typ, as parse reads it; it must hold at least one.
func eachInto[T any](coords bson.RawValue, typ string, parse func(bson.RawValue) (T, error), dst *[]T) error {
	n := len(*dst)
	err := each(coords, func(v bson.RawValue) error {
		x, err := parse(v)
		*dst = append(*dst, x)
		return err
	})
	if err == nil && len(*dst) == n {
		err = errorf("%s coordinates must have at least 1 element", typ)
	}
	return err
}

// each calls fn with each element of an array value.
func each(v bson.RawValue, fn func(bson.RawValue) error) error {
	if v.Type != bson.TypeArray {
		return errorf("GeoJSON coordinates must be an array of coordinates")
	}
	vals, _ := v.Array().Values()
	for _, e := range vals {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// position reads a GeoJSON position [lng, lat] (a third value, an
// altitude, is allowed and ignored).
func position(v bson.RawValue) (s2.Point, error) {
	if v.Type != bson.TypeArray {
		return s2.Point{}, errorf("GeoJSON coordinates must be an array")
	}
	vals, _ := v.Array().Values()
	if len(vals) < 2 || len(vals) > 3 {
		return s2.Point{}, errorf("Point must only contain numeric elements")
	}
	var c [3]float64
	for i, e := range vals {
		f, ok := values.Float64(e)
		if !ok || !values.IsNumber(e.Type) {
			return s2.Point{}, errorf("Point must only contain numeric elements")
		}
		c[i] = f
	}
	if c[0] < -180 || c[0] > 180 || c[1] < -90 || c[1] > 90 || math.IsNaN(c[0]) || math.IsNaN(c[1]) {
		return s2.Point{}, errorf("longitude/latitude is out of bounds, lng: %g lat: %g", c[0], c[1])
	}
	return point(c[0], c[1]), nil
}

func positions(v bson.RawValue) ([]s2.Point, error) {
	var pts []s2.Point
	err := each(v, func(e bson.RawValue) error {
		p, err := position(e)
		pts = append(pts, p)
		return err
	})
	return pts, err
}

func lineString(v bson.RawValue) (*s2.Polyline, error) {
	pts, err := positions(v)
	if err != nil {
		return nil, err
	}
	// Repeated consecutive vertices are dropped, as MongoDB drops them.
	if pts = dedup(pts); len(pts) < 2 {
		return nil, errorf("GeoJSON LineString must have at least 2 vertices: %s", values.Shell(v))
	}
	l := s2.Polyline(pts)
	if err := l.Validate(); err != nil {
		return nil, errorf("GeoJSON LineString is not valid: %v %s", err, values.Shell(v))
	}
	return &l, nil
}

// polygon reads a GeoJSON polygon: closed rings of at least 4 positions,
// the first the shell, the others holes inside it, none inside another
// hole nor sharing more than one vertex with the loop around it. A ring encloses the
// smaller of the two areas it bounds, as MongoDB reads polygons without a
// big-polygon CRS.
func polygon(v bson.RawValue) (*s2.Polygon, error) {
	var loops []*s2.Loop
	err := each(v, func(ring bson.RawValue) error {
		pts, err := positions(ring)
		if err != nil {
			return err
		}
		if len(pts) < 4 {
			return errorf("Loop must have at least 4 vertices: %s", values.Shell(ring))
		}
		if pts[0] != pts[len(pts)-1] {
			return errorf("Loop is not closed, first vertex does not equal last vertex: %s", values.Shell(ring))
		}
		// GeoParser drops repeated vertices, then the closing one.
		pts = dedup(pts)
		if pts = pts[:len(pts)-1]; len(pts) < 3 {
			return errorf("Loop must have at least 3 different vertices: %s", values.Shell(ring))
		}
		l := s2.LoopFromPoints(pts)
		if err := l.Validate(); err != nil {
			return errorf("Loop is not valid: %s %v", values.Shell(ring), err)
		}
		if i, j, ok := selfCrossing(pts); ok {
			return errorf("Loop is not valid: %s Edges %d and %d cross", values.Shell(ring), i, j)
		}
		l.Normalize()
		loops = append(loops, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(loops) == 0 {
		return nil, errorf("Polygon has no loops.")
	}
	rings, _ := v.Array().Values()
	for i, hole := range loops[1:] {
		if !loops[0].Contains(hole) {
			return nil, errorf("Secondary loops not contained by first exterior loop - secondary loops must be holes: %s first loop: %s",
				values.Shell(rings[i+1]), values.Shell(rings[0]))
		}
	}
	parents := loopParents(loops)
	p := s2.PolygonFromLoops(loops)
	if err := p.Validate(); err != nil {
		return nil, errorf("Polygon isn't valid: %v %s", err, values.Shell(v))
	}
	// S2Polygon::IsNormalized, then the nesting GeoJSON allows.
	for i, pl := range parents {
		if i > 0 && sharedVertices(pl.loop, pl.hole) > 1 {
			return nil, errorf("Loop %d shares more than one vertex with its parent loop %d: %s", i, pl.parent, values.Shell(v))
		}
	}
	for _, pl := range parents[1:] {
		if pl.parent != 0 {
			return nil, errorf("Polygon interior loops cannot be nested: %s", values.Shell(v))
		}
	}
	return p, nil
}

// loopParent is a hole with the loop immediately around it.
type loopParent struct {
	hole, loop *s2.Loop
	parent     int
}

// loopParents are the polygon's loops (the shell first, every hole within
// it) each with the innermost other loop that contains it.
func loopParents(loops []*s2.Loop) []loopParent {
	out := make([]loopParent, len(loops))
	for i, l := range loops {
		out[i] = loopParent{hole: l, loop: loops[0]}
		if i == 0 {
			continue
		}
		for j, o := range loops[1:] {
			if j+1 != i && o.Contains(l) && o.Area() < out[i].loop.Area() {
				out[i].loop, out[i].parent = o, j+1
			}
		}
	}
	return out
}

// sharedVertices counts the vertices of a that b has too.
func sharedVertices(a, b *s2.Loop) int {
	vertices := map[s2.Point]bool{}
	for _, v := range a.Vertices() {
		vertices[v] = true
	}
	n := 0
	for _, v := range b.Vertices() {
		if vertices[v] {
			n++
		}
	}
	return n
}

// selfCrossing finds two edges of a loop that cross.
func selfCrossing(pts []s2.Point) (int, int, bool) {
	n := len(pts)
	for i := 0; i < n; i++ {
		for j := i + 2; j < n; j++ {
			if i == 0 && j == n-1 {
				continue // adjacent through the closing edge
			}
			if s2.CrossingSign(pts[i], pts[(i+1)%n], pts[j], pts[(j+1)%n]) == s2.Cross {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// dedup drops consecutive repeated vertices.
func dedup(pts []s2.Point) []s2.Point {
	if len(pts) == 0 {
		return pts
	}
	out := pts[:1]
	for _, p := range pts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return out
}

// Distance is the angle from p to the closest point of g.
func (g *Geometry) Distance(p s2.Point) s1.Angle {
	best := s1.InfAngle()
	for _, q := range g.Points {
		best = min(best, p.Distance(q))
	}
	for _, l := range g.Lines {
		best = min(best, lineDistance(p, *l))
	}
	for _, poly := range g.Polygons {
		if poly.ContainsPoint(p) {
			return 0
		}
		for _, loop := range poly.Loops() {
			vs := loop.Vertices()
			for i := range vs {
				best = min(best, s2.DistanceFromSegment(p, vs[i], vs[(i+1)%len(vs)]))
			}
		}
	}
	return best
}

func lineDistance(p s2.Point, l s2.Polyline) s1.Angle {
	best := s1.InfAngle()
	for i := 0; i+1 < len(l); i++ {
		best = min(best, s2.DistanceFromSegment(p, l[i], l[i+1]))
	}
	return best
}
