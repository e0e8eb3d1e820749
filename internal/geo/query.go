package geo

import (
	"math"

	"github.com/golang/geo/s1"
	"github.com/golang/geo/s2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/mongoerr"
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

// ParseWithin reads $geoWithin's operand: {$geometry: a Polygon,
// MultiPolygon or GeometryCollection holding one}, {$centerSphere: [[x, y], radians]}, or the flat shapes
// of legacy pairs {$box: [[x1, y1], [x2, y2]]}, {$polygon: [[x, y], ...]},
// {$center: [[x, y], r]}.
func ParseWithin(op string, v bson.RawValue) (*Query, error) {
	shape, arg, err := geoShape(op, v)
	if err != nil {
		return nil, err
	}
	return withinShape(op, v, shape, arg)
}

// geoShape finds the shape of a $geoWithin ($within, the old name) or
// $geoIntersects operand v as MongoDB's GeoExpression::parseQuery does:
// v must be a document, the deprecated $uniqueDocs in it is ignored,
// $geoWithin refuses anything after its shape and the others take the
// last of several.
func geoShape(op string, v bson.RawValue) (string, bson.RawValue, error) {
	if v.Type != bson.TypeEmbeddedDocument {
		return "", bson.RawValue{}, errorf("geometry must be an object")
	}
	elems, _ := v.Document().Elements()
	var shapeElem bson.RawElement
	for _, el := range elems {
		if shapeElem != nil && op == "$geoWithin" {
			return "", bson.RawValue{}, errorf("$geoWithin doesn't accept multiple shapes $geoWithin: %s", values.Shell(v))
		}
		if el.Key() != "$uniqueDocs" {
			shapeElem = el
		}
	}
	if shapeElem == nil {
		return "", bson.RawValue{}, errorf("geo query doesn't have any geometry")
	}
	return shapeElem.Key(), shapeElem.Value(), nil
}

// operatorString prints {op: v}, the operator document a geo expression
// names in its messages.
func operatorString(op string, v bson.RawValue) string {
	return values.ShellDoc(bson.Raw(bsoncore.NewDocumentBuilder().AppendValue(op, bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value}).Build()))
}

// withinShape reads shape's argument arg for $geoWithin (op, whose
// operand is v).
func withinShape(op string, v bson.RawValue, shape string, arg bson.RawValue) (*Query, error) {
	q := &Query{Op: Within}
	switch shape {
	case "$geometry":
		g, err := queryGeometry(arg)
		if err != nil {
			return nil, err
		}
		if len(g.Polygons) == 0 {
			// GeometryContainer::supportsContains: no polygon to hold anything
			return nil, errorf("$within not supported with provided geometry: %s", operatorString(op, v))
		}
		// A GeometryCollection's points and lines hold nothing: what lies
		// within it lies within one of its polygons
		// (GeometryContainer::contains).
		q.region = regionOf(g)
		q.within = func(d *Geometry) bool { return withinPolygons(d, g.Polygons) }
	case "$centerSphere":
		c, r, err := circle(shape, arg, true)
		if err != nil {
			return nil, err
		}
		center := point(c[0], c[1])
		cp := s2.CapFromCenterAngle(center, s1.Angle(r))
		q.region = cp
		q.within = func(d *Geometry) bool { return withinCap(d, cp) }
	case "$box":
		vals, err := specifierValues(shape, arg)
		if err != nil {
			return nil, err
		}
		if len(vals) < 2 {
			return nil, errorf("Point must only contain numeric elements")
		}
		// Values after the two corners are ignored, as in MongoDB.
		pts, err := queryPoints(vals[:2])
		if err != nil {
			return nil, err
		}
		lo := [2]float64{math.Min(pts[0][0], pts[1][0]), math.Min(pts[0][1], pts[1][1])}
		hi := [2]float64{math.Max(pts[0][0], pts[1][0]), math.Max(pts[0][1], pts[1][1])}
		q.region, q.flatBox = flatRect(lo, hi), &[4]float64{lo[0], lo[1], hi[0], hi[1]}
		q.flatIn = func(x, y float64) bool { return x >= lo[0] && x <= hi[0] && y >= lo[1] && y <= hi[1] }
	case "$polygon":
		vals, err := specifierValues(shape, arg)
		if err != nil {
			return nil, err
		}
		pts, err := queryPoints(vals)
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
		c, r, err := circle(shape, arg, false)
		if err != nil {
			return nil, err
		}
		q.region = flatRect([2]float64{c[0] - r, c[1] - r}, [2]float64{c[0] + r, c[1] + r})
		q.flatBox = &[4]float64{c[0] - r, c[1] - r, c[0] + r, c[1] + r}
		q.flatIn = func(x, y float64) bool { return withinRadius(x, y, c, r) }
	default:
		return nil, errorf("unknown geo specifier: %s: %s", shape, values.Shell(arg))
	}
	return q, nil
}

// ParseIntersects reads $geoIntersects' operand: {$geometry: any GeoJSON
// geometry}. As in MongoDB's GeoExpression::parseFrom, a flat shape
// ($box, $polygon, $center) parses but cannot be projected onto the
// sphere, which $geoIntersects needs.
func ParseIntersects(v bson.RawValue) (*Query, error) {
	shape, arg, err := geoShape("$geoIntersects", v)
	if err != nil {
		return nil, err
	}
	switch shape {
	case "$geometry":
		g, err := queryGeometry(arg)
		if err != nil {
			return nil, err
		}
		return &Query{Op: Intersects, region: regionOf(g), geom: g}, nil
	case "$box", "$polygon", "$center":
		if _, err := withinShape("$geoIntersects", v, shape, arg); err != nil {
			return nil, err
		}
		return nil, errorf("$geoIntersect not supported with provided geometry: %s", operatorString("$geoIntersects", v))
	case "$centerSphere":
		if _, err := withinShape("$geoIntersects", v, shape, arg); err != nil {
			return nil, err
		}
		return nil, &UnsupportedError{Msg: "Folio does not support $geoIntersects with $centerSphere"}
	}
	return nil, errorf("unknown geo specifier: %s: %s", shape, values.Shell(arg))
}

// ParseNear reads $near, $nearSphere or $geoNear (op; MongoDB's alias of
// $near) from ops, the operator document holding it, as MongoDB's
// GeoNearExpression does. The legacy form comes first: the operand a
// point (a legacy pair, or a GeoJSON point without $geometry) or
// [x, y, maxDistance], its bounds the siblings $minDistance and
// $maxDistance (16893-16896), $uniqueDocs ignored. Failing that, the
// GeoJSON form: ops holds only op, whose operand is {$geometry: GeoJSON
// point, $minDistance, $maxDistance} (BadValue). Distances are meters
// from a GeoJSON point, radians from a legacy pair for $nearSphere and
// plane units for $near.
func ParseNear(op string, ops bson.Raw) (*Query, error) {
	q, err := parseLegacyNear(ops)
	if q == nil && err == nil {
		q, err = parseNewNear(ops)
	}
	if err != nil {
		return nil, err
	}
	if op == "$nearSphere" && !q.Meters && !validLngLat(q.CenterX, q.CenterY) {
		return nil, errorf("Legacy point is out of bounds for spherical query")
	}
	q.Legacy = op != "$nearSphere" && !q.Meters
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

// nearQuery is a $near query centered on (x, y), a GeoJSON point when
// meters, with bounds min and max in meters or the legacy units.
func nearQuery(x, y float64, meters bool, min, max float64) *Query {
	q := &Query{Op: Near, Min: s1.Angle(min), Max: s1.InfAngle(), Meters: meters, CenterX: x, CenterY: y, Center: point(x, y)}
	if meters {
		q.Min /= EarthRadiusMeters
	}
	if max < math.MaxFloat64 {
		q.Max = s1.Angle(max)
		if meters {
			q.Max /= EarthRadiusMeters
		}
	}
	return q
}

// parseLegacyNear is MongoDB's GeoNearExpression::parseLegacyQuery: nil
// without error when ops is not of the legacy form.
func parseLegacyNear(ops bson.Raw) (*Query, error) {
	var x, y float64
	var meters, found bool
	lo, hi := 0.0, math.MaxFloat64
	var err error
	elems, _ := ops.Elements()
	for _, el := range elems {
		v := el.Value()
		switch el.Key() {
		case "$near", "$nearSphere", "$geoNear":
			if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
				return nil, nil
			}
			if px, py, gj, err := nearPoint(v); err == nil {
				x, y, meters, found = px, py, gj, true
			} else if vals, _ := specifierValues("", v); len(vals) == 3 && allNumbers(vals) {
				x, _ = values.Float64(vals[0])
				y, _ = values.Float64(vals[1])
				hi, _ = values.Float64(vals[2])
				meters, found = false, true
				if !(hi >= 0) {
					return nil, &Error{Code: mongoerr.NearMaxDistanceArgNegative, Msg: "max distance must be non-negative"}
				}
			}
		case "$minDistance":
			if lo, err = legacyNearBound(el.Key(), v, mongoerr.NearMinDistanceNotNumber, mongoerr.NearMinDistanceNegative); err != nil {
				return nil, err
			}
		case "$maxDistance":
			if hi, err = legacyNearBound(el.Key(), v, mongoerr.NearMaxDistanceNotNumber, mongoerr.NearMaxDistanceNegative); err != nil {
				return nil, err
			}
		case "$uniqueDocs":
			// deprecated, ignored
		default:
			return nil, &Error{Code: mongoerr.GeoNearMixedWithOperators, Msg: "invalid argument in geo near query: " + el.Key()}
		}
	}
	if !found {
		return nil, nil
	}
	return nearQuery(x, y, meters, lo, hi), nil
}

// legacyNearBound reads a legacy near query's $minDistance or
// $maxDistance (key): a number (else notNumber), not negative (else
// negative).
func legacyNearBound(key string, v bson.RawValue, notNumber, negative mongoerr.Code) (float64, error) {
	f, ok := values.Float64(v)
	if !ok || !values.IsNumber(v.Type) {
		return 0, &Error{Code: notNumber, Msg: key + " must be a number"}
	}
	if !(f >= 0) {
		return 0, &Error{Code: negative, Msg: key + " must be non-negative"}
	}
	return f, nil
}

// parseNewNear is MongoDB's GeoNearExpression::parseNewQuery: ops holds
// only the near operator, {$geometry: GeoJSON point, $minDistance,
// $maxDistance} (meters, finite and not negative).
func parseNewNear(ops bson.Raw) (*Query, error) {
	elems, _ := ops.Elements()
	switch {
	case len(elems) == 0:
		return nil, errorf("empty geo near query object")
	case len(elems) > 1:
		return nil, errorf("geo near accepts just one argument when querying for a GeoJSON point. Extra field found: %s: %s", elems[1].Key(), values.Shell(elems[1].Value()))
	}
	arg := elems[0].Value()
	if arg.Type != bson.TypeEmbeddedDocument && arg.Type != bson.TypeArray {
		return nil, errorf("geo near query argument is not an object")
	}
	var x, y float64
	var found bool
	lo, hi := 0.0, math.MaxFloat64
	args, _ := bson.Raw(arg.Value).Elements()
	for _, el := range args {
		v := el.Value()
		switch el.Key() {
		case "$geometry":
			if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
				continue
			}
			// (MongoDB shows the operand as an object, an array too)
			obj := values.Shell(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: v.Value})
			px, py, gj, err := nearPoint(v)
			if err != nil {
				return nil, errorf("invalid point in geo near query $geometry argument: %s  %s", obj, err)
			}
			if !gj {
				return nil, errorf("$near requires geojson point, given %s", obj)
			}
			x, y, found = px, py, true
		case "$minDistance", "$maxDistance":
			f, ok := values.Float64(v)
			if !ok || !values.IsNumber(v.Type) {
				return nil, errorf("%s must be a number", el.Key())
			}
			if !(f >= 0) || math.IsInf(f, 0) {
				return nil, errorf("%s must be non-negative", el.Key())
			}
			if el.Key() == "$minDistance" {
				lo = f
			} else {
				hi = f
			}
		default:
			return nil, errorf("invalid argument in geo near query: %s", el.Key())
		}
	}
	if !found {
		return nil, errorf("$geometry is required for geo near query")
	}
	return nearQuery(x, y, true, lo, hi), nil
}

// nearPoint reads a near query's point as MongoDB's
// GeoParser::parseQueryPoint: an array, or a document whose first value
// is a number, is a legacy pair (exactly two finite numbers); another
// document is a GeoJSON point (geoJSON true), read from its crs and
// coordinates alone, which must lie on the sphere.
func nearPoint(v bson.RawValue) (x, y float64, geoJSON bool, err error) {
	d, isDoc := v.DocumentOK()
	if elems, _ := d.Elements(); !isDoc || len(elems) > 0 && values.IsNumber(elems[0].Value().Type) {
		p, err := queryPoint(v)
		return p[0], p[1], false, err
	}
	if strict, err := strictCRS(d); err != nil || strict {
		if err == nil {
			err = errorf("Strict winding order is only supported by polygon")
		}
		return 0, 0, true, err
	}
	c := d.Lookup("coordinates")
	if c.Type != bson.TypeArray && c.Type != bson.TypeEmbeddedDocument {
		return 0, 0, true, errorf("Point must be an array or object, instead got type %s", values.TypeName(c.Type))
	}
	vals, _ := specifierValues("", c)
	if len(vals) < 2 || !allNumbers(vals[:2]) {
		return 0, 0, true, errorf("Point must only contain numeric elements")
	}
	x, _ = values.Float64(vals[0])
	y, _ = values.Float64(vals[1])
	if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		return 0, 0, true, errorf("Point coordinates must be finite numbers")
	}
	if !validLngLat(x, y) {
		return 0, 0, true, errorf("longitude/latitude is out of bounds, lng: %g lat: %g", x, y)
	}
	return x, y, true, nil
}

// allNumbers reports whether every value is a number.
func allNumbers(vals []bson.RawValue) bool {
	for _, v := range vals {
		if !values.IsNumber(v.Type) {
			return false
		}
	}
	return true
}

// queryGeometry reads a query's $geometry: a GeoJSON geometry, whose crs
// may name the default coordinate system (MongoDB's strict-winding one,
// for big polygons, is not supported), or a legacy point.
func queryGeometry(v bson.RawValue) (*Geometry, error) {
	d, ok := v.DocumentOK()
	if !ok && v.Type != bson.TypeArray {
		return nil, errorf("$geometry must be an object: %s", v)
	}
	if elems, _ := d.Elements(); !ok || len(elems) > 0 && values.IsNumber(elems[0].Value().Type) {
		p, err := queryPoint(v)
		if err != nil {
			return nil, err
		}
		if !validLngLat(p[0], p[1]) {
			return nil, errorf("longitude/latitude is out of bounds, lng: %g lat: %g", p[0], p[1])
		}
		return &Geometry{Type: "Point", Legacy: true, X: p[0], Y: p[1], Points: []s2.Point{point(p[0], p[1])}}, nil
	}
	if d.Lookup("type").Type != bson.TypeString {
		return nil, errorf("unknown GeoJSON type: %s", values.ShellDoc(d))
	}
	strict, err := strictCRS(d)
	if err != nil {
		return nil, err
	}
	if strict {
		if t, _ := d.Lookup("type").StringValueOK(); t != "Polygon" {
			return nil, errorf("Strict winding order is only supported by polygon")
		}
		return nil, &UnsupportedError{Msg: "Folio does not support the strict winding order crs in $geometry (big polygons) yet"}
	}
	return parseGeoJSON(d)
}

// The coordinate reference systems a GeoJSON crs may name: MongoDB's
// default (two names) and its strict-winding one, for big polygons.
var defaultCRSNames = map[string]bool{"urn:ogc:def:crs:OGC:1.3:CRS84": true, "EPSG:4326": true}

const strictCRSName = "urn:x-mongodb:crs:strictwinding:EPSG:4326"

// strictCRS checks a GeoJSON object's crs, {type: "name", properties:
// {name: <name>}}, and reports whether it names the strict-winding one.
func strictCRS(d bson.Raw) (bool, error) {
	crs := d.Lookup("crs")
	if crs.Type == 0 {
		return false, nil
	}
	c, ok := crs.DocumentOK()
	if !ok {
		return false, errorf("GeoJSON CRS must be an object")
	}
	if t, _ := c.Lookup("type").StringValueOK(); t != "name" {
		return false, errorf(`GeoJSON CRS must have field "type": "name"`)
	}
	props, ok := c.Lookup("properties").DocumentOK()
	if !ok {
		return false, errorf("CRS must have field \"properties\" which is an object")
	}
	name, ok := props.Lookup("name").StringValueOK()
	switch {
	case !ok:
		return false, errorf("In CRS, \"properties.name\" must be a string")
	case defaultCRSNames[name]:
		return false, nil
	case name == strictCRSName:
		return true, nil
	}
	return false, errorf("Unknown CRS name: %s", name)
}

// UnsupportedError is a geo feature Folio does not implement
// (NotImplemented).
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

// specifierValues are the values of a flat shape's or a circle's
// operand, an array or a document; anything else is no geo specifier.
func specifierValues(shape string, v bson.RawValue) ([]bson.RawValue, error) {
	switch v.Type {
	case bson.TypeArray:
		vals, _ := v.Array().Values()
		return vals, nil
	case bson.TypeEmbeddedDocument:
		elems, _ := v.Document().Elements()
		vals := make([]bson.RawValue, len(elems))
		for i, e := range elems {
			vals[i] = e.Value()
		}
		return vals, nil
	}
	return nil, errorf("unknown geo specifier: %s: %s", shape, values.Shell(v))
}

// circle reads $center's or $centerSphere's (sphere) [[x, y], r] as
// MongoDB's GeoParser::parseLegacyCenter and parseCenterSphere do: the
// center a query point (on the sphere for $centerSphere), then a radius
// that is a number, not negative and not NaN, then nothing more.
func circle(shape string, v bson.RawValue, sphere bool) ([2]float64, float64, error) {
	vals, err := specifierValues(shape, v)
	if err != nil {
		return [2]float64{}, 0, err
	}
	var at [3]bson.RawValue // missing past the end
	copy(at[:], vals)
	c, err := queryPoint(at[0])
	if err != nil {
		return [2]float64{}, 0, err
	}
	if sphere && !validLngLat(c[0], c[1]) {
		return [2]float64{}, 0, errorf("longitude/latitude is out of bounds, lng: %g lat: %g", c[0], c[1])
	}
	r, ok := values.Float64(at[1])
	if !ok || !values.IsNumber(at[1].Type) || !(r >= 0) {
		return [2]float64{}, 0, errorf("radius must be a non-negative number")
	}
	if len(vals) > 2 {
		return [2]float64{}, 0, errorf("Only 2 fields allowed for circular region")
	}
	return c, r, nil
}

// queryPoint reads a point of a query's flat shape or circle as MongoDB
// does: an array or document of exactly two numbers, both finite.
func queryPoint(v bson.RawValue) ([2]float64, error) {
	vals, err := specifierValues("", v)
	if err != nil {
		return [2]float64{}, errorf("Point must be an array or object, instead got type %s", values.TypeName(v.Type))
	}
	var p [2]float64
	for i := range 2 {
		if i >= len(vals) || !values.IsNumber(vals[i].Type) {
			return p, errorf("Point must only contain numeric elements")
		}
		p[i], _ = values.Float64(vals[i])
	}
	if len(vals) > 2 {
		return p, errorf("Point must only contain two numeric elements")
	}
	if math.IsNaN(p[0]) || math.IsInf(p[0], 0) || math.IsNaN(p[1]) || math.IsInf(p[1], 0) {
		return p, errorf("Point coordinates must be finite numbers")
	}
	return p, nil
}

// queryPoints reads each of vals with queryPoint.
func queryPoints(vals []bson.RawValue) ([][2]float64, error) {
	out := make([][2]float64, 0, len(vals))
	for _, v := range vals {
		p, err := queryPoint(v)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// flatRect is the lat/lng rectangle over plane coordinates lo to hi,
// clamped to the sphere's.
func flatRect(lo, hi [2]float64) s2.Region {
	return s2.RectFromLatLng(s2.LatLngFromDegrees(math.Max(lo[1], -90), math.Max(lo[0], -180))).
		AddPoint(s2.LatLngFromDegrees(math.Min(hi[1], 90), math.Min(hi[0], 180)))
}

// inFlatPolygon tests (x, y) against a polygon of the plane by MongoDB's
// rules for $polygon: a vertex, or a point of a horizontal or vertical
// edge, is inside; otherwise a ray towards -x counts the edges it meets
// (an edge's lower end excluded, a point on a slanted edge counting as a
// crossing), and an odd count is inside.
func inFlatPolygon(x, y float64, pts [][2]float64) bool {
	crossings := 0
	for i := range pts {
		a, b := pts[i], pts[(i+1)%len(pts)]
		if x == a[0] && y == a[1] || x == b[0] && y == b[1] {
			return true
		}
		if a[1] == b[1] {
			if y == a[1] && x >= min(a[0], b[0]) && x <= max(a[0], b[0]) {
				return true
			}
			continue
		}
		if y <= min(a[1], b[1]) || y > max(a[1], b[1]) || x > max(a[0], b[0]) {
			continue
		}
		if a[0] == b[0] {
			if x == a[0] {
				return true
			}
			crossings++
			continue
		}
		if x <= (y-a[1])*(b[0]-a[0])/(b[1]-a[1])+a[0] {
			crossings++
		}
	}
	return crossings%2 == 1
}

// withinRadius reports whether (x, y) lies within r of c. Along an axis
// the offset is compared with c's coordinate plus r, as MongoDB does, so
// that a point at exactly c.x + r is within though the subtraction
// would round past r.
func withinRadius(x, y float64, c [2]float64, r float64) bool {
	dx, dy := x-c[0], y-c[1]
	switch {
	case dx == 0 && y > c[1]:
		return y <= c[1]+r
	case dx == 0:
		return c[1] <= y+r
	case dy == 0 && x > c[0]:
		return x <= c[0]+r
	case dy == 0:
		return c[0] <= x+r
	}
	return math.Sqrt(dx*dx+dy*dy) <= r
}

// validLngLat reports whether (lng, lat) lies on the sphere.
func validLngLat(lng, lat float64) bool { return math.Abs(lng) <= 180 && math.Abs(lat) <= 90 }

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
