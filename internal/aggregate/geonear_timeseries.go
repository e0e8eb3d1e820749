package aggregate

import (
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/rawdoc"
	"github.com/folio-db/folio/internal/timeseries"
	"github.com/folio-db/folio/internal/values"
)

// computeGeoDistance is MongoDB's $_internalComputeGeoNearDistance stage
// name, which a $geoNear on a time series collection's measurement
// becomes.
const computeGeoDistance = "$_internalComputeGeoNearDistance"

// timeseriesGeoNear rewrites a $geoNear right after a time series view's
// $_internalUnpackBucket (docs[1], the user's first stage) as MongoDB 7.0's
// optimizer does (DocumentSourceInternalUnpackBucket::doOptimizeAt): its
// key is required (5892921) and its query refused (1938439); on the
// metaField or a path into it, the $geoNear runs on the buckets, before the
// unpacking, with the key renamed to meta (so the buckets' index of it
// serves it, and the distance it sets on a bucket does not reach the
// measurements, which unpacking builds from the bucket's time, meta and
// data alone); on a measurement it becomes stages after the unpacking
// (DocumentSourceGeoNear::splitForTimeseries), needing no index:
// includeLocs is refused (5860208), then a $geoWithin of the region the
// bounds allow (which also drops measurements without a location), the
// distance of each measurement, a $match of its bounds and a $sort by it.
// Other pipelines come back as they are.
func (p *parser) timeseriesGeoNear(docs []bson.Raw) ([]bson.Raw, error) {
	if len(docs) < 2 || rawdoc.FirstKey(docs[0]) != timeseries.UnpackStage || rawdoc.FirstKey(docs[1]) != "$geoNear" {
		return docs, nil
	}
	unpack, ok := docs[0].Lookup(timeseries.UnpackStage).DocumentOK()
	if !ok {
		return docs, nil
	}
	o, err := timeseries.ParseUnpackSpec(unpack)
	if err != nil {
		return nil, err
	}
	s, err := p.parseGeoNear(docs[1].Lookup("$geoNear"))
	if err != nil {
		return nil, err
	}
	g := s.(*geoNearStage)
	key := g.search.Key
	switch {
	case key == "":
		return nil, mongoerr.New(mongoerr.TimeseriesGeoNearNoKey, "Must specify 'key' option for $geoNear on a time-series collection")
	case len(g.search.Query) > 5:
		return nil, mongoerr.New(mongoerr.TimeseriesGeoNearQuery, "Must not specify 'query' for $geoNear on a time-series collection; use $match instead")
	}
	rest := docs[2:]
	if root, _, _ := strings.Cut(key, "."); o.MetaField != "" && root == o.MetaField {
		spec := replaceField(docs[1].Lookup("$geoNear").Document(), "key", "meta"+key[len(o.MetaField):])
		return append([]bson.Raw{stageDoc("$geoNear", spec), docs[0]}, rest...), nil
	}
	if g.nearExpr != nil {
		// near names a variable of a $lookup's let: MongoDB splits the
		// stage only once near is a constant, and a $geoNear left after
		// the unpacking is not first.
		return nil, mongoerr.New(mongoerr.StageMustBeFirst, "$geoNear is only valid as the first stage in a pipeline")
	}
	if g.locsField != "" {
		return nil, mongoerr.New(mongoerr.TimeseriesGeoNearIncludeLocs, "$geoNear 'includeLocs' is not supported on time-series metrics")
	}
	split, err := g.splitForMeasurements()
	if err != nil {
		return nil, err
	}
	out := append([]bson.Raw{docs[0]}, split...)
	return append(out, rest...), nil
}

// subTimeseriesGeoNear is the collection a $lookup's or $unionWith's
// sub-pipeline docs read from coll, and its stages, when coll is a time
// series collection (its view's one stage the unpacking) and docs start
// with $geoNear: MongoDB resolves the view into the sub-pipeline, the
// unpacking then the $geoNear, and optimizes it as a top-level one
// (timeseriesGeoNear), so the sub-pipeline reads the buckets with the
// unpacking among its stages. Otherwise it is coll and docs: on another
// view, the view's stages come first and the $geoNear fails (FindNear).
func (p *parser) subTimeseriesGeoNear(coll string, docs []bson.Raw) (string, []bson.Raw, error) {
	if p.opts.Env == nil || coll == "" || len(docs) == 0 || rawdoc.FirstKey(docs[0]) != "$geoNear" {
		return coll, docs, nil
	}
	base, stages, isView, err := p.opts.Env.ResolveView(p.opts.DB, coll)
	if err != nil || !isView || len(stages) != 1 || rawdoc.FirstKey(stages[0]) != timeseries.UnpackStage {
		// A view that cannot be resolved fails when it is read.
		return coll, docs, nil
	}
	out, err := p.timeseriesGeoNear(append([]bson.Raw{stages[0]}, docs...))
	if err != nil {
		return "", nil, err
	}
	return base, out, nil
}

// splitForMeasurements is the $geoNear g on a measurement as the stages
// that follow the unpacking: the center and bounds read as its $near
// condition reads them (spherical from a GeoJSON point or with spherical,
// in meters from a GeoJSON point, else radians; flat from a legacy pair
// without spherical); a $geoWithin $centerSphere of maxDistance (none:
// the whole sphere, as a radius of the largest double) and, for
// minDistance, the inside-out cap around the antipode, or a $geoWithin
// $center of maxDistance and the complement of a $center 1% short of a
// normal minDistance (the plane's $geoWithin holds its boundary); then
// the distance, its bounds times distanceMultiplier, and a $sort by it.
func (g *geoNearStage) splitForMeasurements() ([]bson.Raw, error) {
	cond, _ := bson.Marshal(g.search.NearCondition())
	op := rawdoc.FirstKey(cond)
	q, err := geo.ParseNear(op, cond)
	if err != nil {
		return nil, mongoerr.New(mongoerr.TimeseriesGeoNearUnparsable, "Unable to parse geoNear query: %s", mongoerr.As(err).Msg)
	}
	key, x, y := g.search.Key, q.CenterX, q.CenterY
	minD, hasMin := values.Float64(g.search.MinDistance)
	maxD, hasMax := values.Float64(g.search.MaxDistance)
	if !hasMax {
		maxD = math.MaxFloat64
	}
	within := func(shape string, cx, cy, r float64) bson.D {
		return bson.D{{Key: "$geoWithin", Value: bson.D{{Key: shape, Value: bson.A{bson.A{cx, cy}, r}}}}}
	}
	var out []bson.Raw
	match := func(path string, cond bson.D) {
		out = append(out, stageDoc("$match", marshalD(bson.D{{Key: path, Value: cond}})))
	}
	spherical := !q.Legacy
	radians := func(d float64) float64 {
		if q.Meters {
			return d / geo.EarthRadiusMeters
		}
		return d
	}
	if spherical {
		match(key, within("$centerSphere", x, y, radians(maxD)))
		if hasMin {
			ax, ay := x-180, -y
			if x < 0 {
				ax = x + 180
			}
			if r := math.Pi - radians(minD); r > 0 {
				match(key, within("$centerSphere", ax, ay, r))
			}
		}
	} else {
		match(key, within("$center", x, y, maxD))
		if hasMin && minD != 0 && math.Abs(minD) >= 0x1p-1022 && !math.IsInf(minD, 0) {
			match(key, bson.D{{Key: "$not", Value: within("$center", x, y, 0.99*minD)}})
		}
	}
	multiplier := g.multiplier
	if spherical && !q.Meters {
		// distances in radians, as $geoNear reports from a legacy pair
		multiplier /= geo.EarthRadiusMeters
	}
	var near any = bson.A{x, y}
	if spherical {
		near = bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{x, y}}}
	}
	out = append(out, stageDoc(computeGeoDistance, marshalD(bson.D{
		{Key: "near", Value: near}, {Key: "key", Value: key},
		{Key: "distanceField", Value: g.distField}, {Key: "distanceMultiplier", Value: multiplier},
	})))
	if hasMin {
		match(g.distField, bson.D{{Key: "$gte", Value: minD * g.multiplier}})
	}
	if hasMax {
		match(g.distField, bson.D{{Key: "$lte", Value: maxD * g.multiplier}})
	}
	out = append(out, stageDoc("$sort", marshalD(bson.D{{Key: g.distField, Value: 1}})))
	return out, nil
}

// geoDistanceStage is $_internalComputeGeoNearDistance: it sets
// distanceField to the distance from near to the closest location at key
// (DocumentSourceInternalGeoNearDistance): on the sphere, in meters, from
// a GeoJSON point, of the document's geometries and its legacy pairs on
// the sphere; on the plane, from a legacy pair, of its legacy pairs;
// times distanceMultiplier. A document with no such location gets -1
// times distanceMultiplier.
type geoDistanceStage struct {
	parts      []string
	field      []string
	near       *geo.Query
	multiplier float64
}

func parseGeoDistance(arg bson.RawValue) (stage, error) {
	d, ok := arg.DocumentOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.FailedToParse, "%s must take a nested object but found: %s", computeGeoDistance, values.Shell(arg))
	}
	key, ok := d.Lookup("key").StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.GeoDistanceKeyNotString, "key field is required and must be a string")
	}
	near := d.Lookup("near")
	if near.Type != bson.TypeEmbeddedDocument && near.Type != bson.TypeArray {
		return nil, mongoerr.New(mongoerr.GeoDistanceNearNotObject, "near field is required and must be an object or array")
	}
	field, ok := d.Lookup("distanceField").StringValueOK()
	if !ok {
		return nil, mongoerr.New(mongoerr.GeoDistanceFieldNotString, "distanceField field is required and must be a string")
	}
	mult := d.Lookup("distanceMultiplier")
	m, ok := values.Float64(mult)
	if !ok || !values.IsNumber(mult.Type) {
		return nil, mongoerr.New(mongoerr.GeoDistanceMultiplierNotNumber, "distanceMultiplier field is required and must be a number")
	}
	if elems, _ := d.Elements(); len(elems) != 4 {
		return nil, mongoerr.New(mongoerr.GeoDistanceArgCount, "%s expected 4 arguments but got %d", computeGeoDistance, len(elems))
	}
	// The center reads as a $nearSphere's: a GeoJSON point on the sphere,
	// a legacy pair on the plane.
	op, operand := "$near", bson.D{{Key: "$near", Value: near}}
	if near.Type == bson.TypeEmbeddedDocument {
		op, operand = "$nearSphere", bson.D{{Key: "$nearSphere", Value: bson.D{{Key: "$geometry", Value: near}}}}
	}
	q, err := geo.ParseNear(op, marshalD(operand))
	if err != nil {
		return nil, mongoerr.New(mongoerr.BadValue, "%s", mongoerr.As(err).Msg)
	}
	for _, f := range []string{key, field} {
		if err := expr.CheckFieldPath(f); err != nil {
			return nil, err
		}
	}
	return &geoDistanceStage{parts: strings.Split(key, "."), field: strings.Split(field, "."), near: q, multiplier: m}, nil
}

func (s *geoDistanceStage) run(in Source, _ *runtime) Source {
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		d := bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, s.distance(doc)*s.multiplier)}
		return []bson.Raw{setPath(doc, s.field, d)}, nil
	}}
}

// distance is the distance from the center to doc's closest location at
// the key, -1 when it has none.
func (s *geoDistanceStage) distance(doc bson.Raw) float64 {
	best := -1.0
	_ = geo.EachValue(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, s.parts, func(v bson.RawValue) error {
		for _, loc := range geo.Locations(v) {
			var d float64
			var ok bool
			if s.near.Legacy {
				d, ok = geo.FlatDistance(geo.LegacyPairs(loc), s.near.CenterX, s.near.CenterY)
			} else {
				var a float64
				if angle, found := geo.SphereDistance(loc, s.near.Center); found {
					a, ok = float64(angle), true
				}
				d = a * geo.EarthRadiusMeters
			}
			if ok && (best < 0 || d < best) {
				best = d
			}
		}
		return nil
	})
	return best
}

// stageDoc is the stage document {name: spec}.
func stageDoc(name string, spec bson.Raw) bson.Raw {
	return marshalD(bson.D{{Key: name, Value: spec}})
}

func marshalD(d bson.D) bson.Raw {
	b, err := bson.Marshal(d)
	if err != nil {
		panic(err) // values built here always marshal
	}
	return b
}

// replaceField is d with field name's value set to the string s.
func replaceField(d bson.Raw, name, s string) bson.Raw {
	elems, _ := d.Elements()
	out := make(bson.D, 0, len(elems))
	for _, el := range elems {
		if el.Key() == name {
			out = append(out, bson.E{Key: name, Value: s})
			continue
		}
		out = append(out, bson.E{Key: el.Key(), Value: el.Value()})
	}
	return marshalD(out)
}
