package geo

import (
	"math"

	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// Op is a geo query operator.
type Op uint8

const (
	// Within is $geoWithin: the value lies entirely inside the shape.
	Within Op = iota
	// Intersects is $geoIntersects: the value meets the geometry.
	Intersects
	// Near is $near or $nearSphere: the value within [Min, Max] of the
	// center, ordered by distance (which needs an index).
	Near
)

// Query is a parsed geo query operator.
type Query struct {
	Op Op
	// region bounds what may match, for the index's cells.
	region s2.Region
	// within decides $geoWithin on the sphere, flatIn on the plane (the
	// flat shapes, of legacy pairs only); geom is $geoIntersects'
	// geometry.
	within func(*Geometry) bool
	flatIn func(x, y float64) bool
	geom   *Geometry
	// Near's center, whether its distances are in meters (a GeoJSON
	// point) rather than radians, and its bounds as angles.
	Center   s2.Point
	Meters   bool
	Min, Max s1.Angle
	// Legacy is a $near on a legacy pair: plane distances (Min and Max
	// in coordinate units from CenterX, CenterY), which need a 2d index.
	Legacy           bool
	CenterX, CenterY float64
	// flatBox, when set, is the plane box a flat shape lies in.
	flatBox *[4]float64
}

// FlatBox is the box of the plane (x as longitude, y as latitude) holding
// every legacy pair that may match, for a 2d index scan.
func (q *Query) FlatBox() (x0, y0, x1, y1 float64) {
	if q.flatBox != nil {
		return q.flatBox[0], q.flatBox[1], q.flatBox[2], q.flatBox[3]
	}
	r := q.region.RectBound()
	x0, x1 = r.Lng.Lo*180/math.Pi, r.Lng.Hi*180/math.Pi
	if r.Lng.IsInverted() || r.Lng.IsFull() {
		x0, x1 = -180, 180
	}
	return x0, r.Lat.Lo * 180 / math.Pi, x1, r.Lat.Hi * 180 / math.Pi
}

// Region bounds the values that may match, for an index scan.
func (q *Query) Region() s2.Region { return q.region }

// ParseWithin reads $geoWithin's operand: {$geometry: Polygon or
// MultiPolygon}, {$centerSphere: [[x, y], radians]}, or the flat shapes
// of legacy pairs {$box: [[x1, y1], [x2, y2]]}, {$polygon: [[x, y], ...]},
// {$center: [[x, y], r]}.
func ParseWithin(v bson.RawValue) (*Query, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, errorf("$geoWithin not an object: %s", v)
	}
	elems, _ := v.Document().Elements()
	if len(elems) != 1 {
		return nil, errorf("$geoWithin must have exactly one shape: %s", v)
	}
	shape, arg := elems[0].Key(), elems[0].Value()
	q := &Query{Op: Within}
	switch shape {
	case "$geometry":
		g, err := queryGeometry(arg)
		if err != nil {
			return nil, err
		}
		if len(g.Polygons) == 0 || len(g.Points) > 0 || len(g.Lines) > 0 {
			return nil, errorf("$geoWithin $geometry must be a Polygon or MultiPolygon: %s", arg)
		}
		q.region = regionOf(g)
		q.within = func(d *Geometry) bool { return withinPolygons(d, g.Polygons) }
	case "$centerSphere":
		c, r, err := circle(arg)
		if err != nil {
			return nil, err
		}
		center := point(c[0], c[1])
		cp := s2.CapFromCenterAngle(center, s1.Angle(r))
		q.region = cp
		q.within = func(d *Geometry) bool { return withinCap(d, cp) }
	case "$box":
		pts, err := flatPoints(arg)
		if err != nil || len(pts) != 2 {
			return nil, errorf("Point must only contain numeric elements")
		}
		lo := [2]float64{math.Min(pts[0][0], pts[1][0]), math.Min(pts[0][1], pts[1][1])}
		hi := [2]float64{math.Max(pts[0][0], pts[1][0]), math.Max(pts[0][1], pts[1][1])}
		q.region, q.flatBox = flatRect(lo, hi), &[4]float64{lo[0], lo[1], hi[0], hi[1]}
		q.flatIn = func(x, y float64) bool { return x >= lo[0] && x <= hi[0] && y >= lo[1] && y <= hi[1] }
	case "$polygon":
		pts, err := flatPoints(arg)
		if err != nil {
			return nil, err
		}
		if len(pts) < 3 {
			return nil, errorf("Polygon must have at least 3 points")
		}
		lo, hi := pts[0], pts[0]
		for _, p := range pts {
			lo = [2]float64{math.Min(lo[0], p[0]), math.Min(lo[1], p[1])}
			hi = [2]float64{math.Max(hi[0], p[0]), math.Max(hi[1], p[1])}
		}
		q.region, q.flatBox = flatRect(lo, hi), &[4]float64{lo[0], lo[1], hi[0], hi[1]}
		q.flatIn = func(x, y float64) bool { return inFlatPolygon(x, y, pts) }
	case "$center":
		c, r, err := circle(arg)
		if err != nil {
			return nil, err
		}
		q.region = flatRect([2]float64{c[0] - r, c[1] - r}, [2]float64{c[0] + r, c[1] + r})
		q.flatBox = &[4]float64{c[0] - r, c[1] - r, c[0] + r, c[1] + r}
		q.flatIn = func(x, y float64) bool { return math.Hypot(x-c[0], y-c[1]) <= r }
	default:
		return nil, errorf("unknown geo specifier: %s: %s", shape, arg)
	}
	return q, nil
}

// ParseIntersects reads $geoIntersects' operand: {$geometry: any GeoJSON
// geometry}.
func ParseIntersects(v bson.RawValue) (*Query, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return nil, errorf("$geoIntersects not an object: %s", v)
	}
	arg, err := v.Document().LookupErr("$geometry")
	if elems, _ := v.Document().Elements(); err != nil || len(elems) != 1 {
		return nil, errorf("$geoIntersects must have exactly one $geometry: %s", v)
	}
	g, err := queryGeometry(arg)
	if err != nil {
		return nil, err
	}
	return &Query{Op: Intersects, region: regionOf(g), geom: g}, nil
}

// ParseNear reads $near or $nearSphere (op) with operand v: a GeoJSON
// point under $geometry with $minDistance and $maxDistance in meters
// beside it, or a legacy pair with them (in radians) in ops, the
// operator document holding it.
func ParseNear(op string, v bson.RawValue, ops bson.Raw) (*Query, error) {
	q := &Query{Op: Near, Max: s1.InfAngle()}
	bound := func(name string, doc bson.Raw) (float64, bool, error) {
		b, err := doc.LookupErr(name)
		if err != nil {
			return 0, false, nil
		}
		f, ok := values.Float64(b)
		if !ok || !values.IsNumber(b.Type) {
			return 0, false, errorf("%s must be a number", name)
		}
		if f < 0 || math.IsNaN(f) {
			return 0, false, errorf("%s must be non-negative", name)
		}
		return f, true, nil
	}
	var boundsDoc bson.Raw
	if d, ok := v.DocumentOK(); ok && len(d) > 5 && d.Lookup("$geometry").Type != 0 {
		g, err := queryGeometry(d.Lookup("$geometry"))
		if err != nil {
			return nil, err
		}
		if g.Type != "Point" || len(g.Points) != 1 {
			return nil, errorf("invalid point in geo near query $geometry argument: %s", d.Lookup("$geometry"))
		}
		q.Center, q.Meters, boundsDoc = g.Points[0], true, d
	} else {
		x, y, ok := LegacyPair(v)
		if !ok {
			return nil, errorf("geo near accepts just one argument when querying for a GeoJSON point. Extra field found: %s", v)
		}
		q.Center, q.Legacy, q.CenterX, q.CenterY = point(x, y), op == "$near", x, y
		boundsDoc = ops
	}
	for _, b := range []struct {
		name string
		dst  *s1.Angle
	}{{"$minDistance", &q.Min}, {"$maxDistance", &q.Max}} {
		f, ok, err := bound(b.name, boundsDoc)
		if err != nil {
			return nil, err
		}
		if ok {
			if q.Meters {
				f /= EarthRadiusMeters
			}
			*b.dst = s1.Angle(f)
		}
	}
	switch {
	case q.Legacy:
		q.region = s2.FullCap()
		if q.Max < s1.InfAngle() {
			m := float64(q.Max)
			q.flatBox = &[4]float64{q.CenterX - m, q.CenterY - m, q.CenterX + m, q.CenterY + m}
		}
	case q.Max < s1.InfAngle():
		q.region = s2.CapFromCenterAngle(q.Center, q.Max)
	default:
		q.region = s2.FullCap()
	}
	return q, nil
}

// queryGeometry reads a query's $geometry; a CRS (big polygons) is not
// supported.
func queryGeometry(v bson.RawValue) (*Geometry, error) {
	d, ok := v.DocumentOK()
	if !ok {
		return nil, errorf("$geometry must be an object: %s", v)
	}
	if d.Lookup("crs").Type != 0 {
		return nil, &UnsupportedError{Msg: "Folio does not support a crs in $geometry (big polygons) yet"}
	}
	if d.Lookup("type").Type != bson.TypeString {
		return nil, errorf("unknown GeoJSON type: %s", d)
	}
	return parseGeoJSON(d)
}

// UnsupportedError is a geo feature Folio does not implement
// (NotImplemented).
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

// circle reads [[x, y], r].
func circle(v bson.RawValue) ([2]float64, float64, error) {
	vals, _ := v.Array().Values()
	if v.Type != bson.TypeArray || len(vals) != 2 {
		return [2]float64{}, 0, errorf("Circle must be an array of [center, radius]: %s", v)
	}
	x, y, ok := LegacyPair(vals[0])
	r, okR := values.Float64(vals[1])
	if !ok || !okR || !values.IsNumber(vals[1].Type) || r < 0 {
		return [2]float64{}, 0, errorf("radius must be a non-negative number")
	}
	return [2]float64{x, y}, r, nil
}

func flatPoints(v bson.RawValue) ([][2]float64, error) {
	if v.Type != bson.TypeArray {
		return nil, errorf("Point must only contain numeric elements")
	}
	vals, _ := v.Array().Values()
	out := make([][2]float64, 0, len(vals))
	for _, e := range vals {
		x, y, ok := LegacyPair(e)
		if !ok {
			return nil, errorf("Point must only contain numeric elements")
		}
		out = append(out, [2]float64{x, y})
	}
	return out, nil
}

// flatRect is the lat/lng rectangle over plane coordinates lo to hi,
// clamped to the sphere's.
func flatRect(lo, hi [2]float64) s2.Region {
	return s2.RectFromLatLng(s2.LatLngFromDegrees(math.Max(lo[1], -90), math.Max(lo[0], -180))).
		AddPoint(s2.LatLngFromDegrees(math.Min(hi[1], 90), math.Min(hi[0], 180)))
}

// inFlatPolygon is the even-odd ray test of (x, y) against a polygon of
// the plane; points on an edge are inside.
func inFlatPolygon(x, y float64, pts [][2]float64) bool {
	in := false
	for i, j := 0, len(pts)-1; i < len(pts); j, i = i, i+1 {
		a, b := pts[i], pts[j]
		if onSegment(x, y, a, b) {
			return true
		}
		if (a[1] > y) != (b[1] > y) && x < (b[0]-a[0])*(y-a[1])/(b[1]-a[1])+a[0] {
			in = !in
		}
	}
	return in
}

func onSegment(x, y float64, a, b [2]float64) bool {
	cross := (b[0]-a[0])*(y-a[1]) - (b[1]-a[1])*(x-a[0])
	return math.Abs(cross) < 1e-12 && x >= math.Min(a[0], b[0]) && x <= math.Max(a[0], b[0]) && y >= math.Min(a[1], b[1]) && y <= math.Max(a[1], b[1])
}

// regionOf is the region g covers.
func regionOf(g *Geometry) s2.Region {
	var u s2.RegionUnion
	for _, p := range g.Points {
		u = append(u, p)
	}
	for _, l := range g.Lines {
		u = append(u, l)
	}
	for _, p := range g.Polygons {
		u = append(u, p)
	}
	if len(u) == 1 {
		return u[0]
	}
	return u
}
