package aggregate

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/expr"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// GeoNear is the search of a $geoNear stage, which the collection scan
// runs (Pushdown): the documents matching Query, by distance from Near
// along the 2dsphere field Key ("" for the collection's one 2dsphere
// index), within MinDistance and MaxDistance (meters from a GeoJSON
// point, radians from a legacy pair; unset: none).
type GeoNear struct {
	Key                      string
	Near                     bson.RawValue
	Spherical                bool
	MinDistance, MaxDistance bson.RawValue
	Query                    bson.Raw
}

// NearCondition is the search as the condition on its key a find runs
// (DocumentSourceGeoNear::asNearQuery): $nearSphere, or from a legacy pair
// without spherical a flat $near, with the search's $minDistance and
// $maxDistance.
func (g *GeoNear) NearCondition() bson.D {
	op := "$nearSphere"
	var near bson.D
	if d, ok := g.Near.DocumentOK(); ok && d.Lookup("type").Type == bson.TypeString {
		near = bson.D{{Key: "$geometry", Value: g.Near}}
	} else if !g.Spherical {
		op = "$near"
	}
	bounds := bson.D{}
	if g.MinDistance.Type != 0 {
		bounds = append(bounds, bson.E{Key: "$minDistance", Value: g.MinDistance})
	}
	if g.MaxDistance.Type != 0 {
		bounds = append(bounds, bson.E{Key: "$maxDistance", Value: g.MaxDistance})
	}
	if near != nil {
		return bson.D{{Key: op, Value: append(near, bounds...)}}
	}
	return append(bson.D{{Key: op, Value: g.Near}}, bounds...)
}

// geoNearStage is $geoNear: it sets distanceField (times
// distanceMultiplier) and includeLocs from the distance and location the
// scan measured for each document.
type geoNearStage struct {
	search GeoNear
	// nearExpr, in a $lookup's sub-pipeline whose near is a variable of
	// the $lookup's let, gives search.Near for each local document
	// (searchFor); nil: Near was evaluated when the stage was parsed.
	nearExpr   *expr.Expr
	distField  string
	locsField  string
	multiplier float64
}

// leadingGeoNear is stages' leading $geoNear (nil: none), whose search
// the read of the pipeline's collection runs; the stage stays to set its
// fields from the distances the read measures.
func leadingGeoNear(stages []stage) *geoNearStage {
	if len(stages) > 0 {
		if g, ok := stages[0].(*geoNearStage); ok {
			return g
		}
	}
	return nil
}

// searchFor is the stage's search, its near evaluated in ectx (the
// $lookup's let variables bound to a local document's values) when it
// names one of them: MongoDB folds such a variable to a constant for each
// run of the sub-pipeline (DocumentSourceGeoNear::asNearQuery).
func (g *geoNearStage) searchFor(ectx *expr.Context) (*GeoNear, error) {
	if g.nearExpr == nil {
		return &g.search, nil
	}
	near, err := g.nearExpr.Eval(ectx, emptyDoc)
	if err != nil {
		return nil, err
	}
	if near.Type != bson.TypeArray && near.Type != bson.TypeEmbeddedDocument {
		return nil, errNearNotPoint()
	}
	s := g.search
	s.Near = near
	return &s, nil
}

func errNearNotPoint() error {
	return mongoerr.New(mongoerr.GeoNearNearNotPoint, "$geoNear requires near argument to be a GeoJSON object or a legacy point(array)")
}

func (p *parser) parseGeoNear(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.FailedToParse, "$geoNear argument must be an object")
	}
	g := &geoNearStage{multiplier: 1}
	// Options older versions took are refused first, then a missing near
	// (DocumentSourceGeoNear::parseOptions).
	d := arg.Document()
	for _, old := range []struct {
		name string
		code mongoerr.Code
		msg  string
	}{
		{"collation", mongoerr.GeoNearCollation, "$geoNear does not accept the 'collation' parameter. Instead, specify a collation for the entire aggregation command."},
		{"limit", mongoerr.GeoNearLimit, "$geoNear no longer supports the 'limit' parameter. Use a $limit stage instead."},
		{"num", mongoerr.GeoNearNum, "$geoNear no longer supports the 'num' parameter. Use a $limit stage instead."},
		{"start", mongoerr.GeoNearStart, "$geoNear no longer supports the 'start' argument."},
	} {
		if d.Lookup(old.name).Type != 0 {
			return nil, mongoerr.New(old.code, "%s", old.msg)
		}
	}
	if d.Lookup("near").Type == 0 {
		return nil, mongoerr.New(mongoerr.GeoNearNoNear, "$geoNear requires a 'near' argument")
	}
	elems, _ := d.Elements()
	for _, el := range elems {
		v := el.Value()
		switch el.Key() {
		case "near":
			g.search.Near = v
		case "distanceField":
			s, ok := v.StringValueOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.GeoNearDistanceFieldNotString, "$geoNear requires a 'distanceField' option as a String")
			}
			g.distField = s
		case "includeLocs":
			s, ok := v.StringValueOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.GeoNearIncludeLocsNotString, "$geoNear requires that 'includeLocs' option is a String")
			}
			g.locsField = s
		case "key":
			s, ok := v.StringValueOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "$geoNear parameter 'key' must be of type string but found type: %s", values.TypeName(v.Type))
			}
			if s == "" {
				return nil, mongoerr.New(mongoerr.BadValue, "$geoNear parameter 'key' cannot be the empty string")
			}
			// key is a field path (DocumentSourceGeoNear::parseOptions
			// makes a FieldPath of it): no '$' prefix, no NUL.
			if err := expr.CheckFieldPath(s); err != nil {
				return nil, err
			}
			g.search.Key = s
		case "spherical":
			g.search.Spherical = values.Truthy(v)
		case "query":
			d, ok := v.DocumentOK()
			if !ok {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "query must be an object")
			}
			g.search.Query = d
		case "minDistance", "maxDistance", "distanceMultiplier":
			f, ok := values.Float64(v)
			if !ok || !values.IsNumber(v.Type) {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "%s must be a number", el.Key())
			}
			if !(f >= 0) { // NaN too
				return nil, mongoerr.New(mongoerr.BadValue, "%s must be nonnegative", el.Key())
			}
			switch el.Key() {
			case "minDistance":
				g.search.MinDistance = v
			case "maxDistance":
				g.search.MaxDistance = v
			default:
				g.multiplier = f
			}
		case "uniqueDocs":
			// deprecated, ignored
		default:
			return nil, mongoerr.New(mongoerr.FailedToParse, "unknown argument to $geoNear: %s", el.Key())
		}
	}
	if s, ok := g.search.Near.StringValueOK(); ok && strings.HasPrefix(s, "$") {
		// near is an expression MongoDB evaluates once optimized to a
		// constant: a variable of the command's let.
		if root, _, _ := strings.Cut(s, "."); !strings.HasPrefix(s, "$$") || root == "$$ROOT" || root == "$$CURRENT" {
			return nil, mongoerr.New(mongoerr.GeoNearNearNotConstant, "$geoNear requires a constant near argument")
		}
		e, err := expr.Compile(g.search.Near, p.scope)
		if err != nil {
			return nil, err
		}
		// A variable of a $lookup's let has its value for each local
		// document; the command's let has its values now.
		root, _, _ := strings.Cut(s, ".")
		if _, bound := p.ctx.Vars[strings.TrimPrefix(root, "$$")]; p.where == inLookup && !bound {
			g.nearExpr = e
		} else if g.search.Near, err = e.Eval(p.ctx, emptyDoc); err != nil {
			return nil, err
		}
	}
	if t := g.search.Near.Type; g.nearExpr == nil && t != bson.TypeArray && t != bson.TypeEmbeddedDocument {
		return nil, errNearNotPoint()
	}
	if g.distField == "" {
		return nil, mongoerr.New(mongoerr.GeoNearDistanceFieldNotString, "$geoNear requires a 'distanceField' option as a String")
	}
	for _, f := range []string{g.distField, g.locsField} {
		if f == "" {
			continue
		}
		if err := expr.CheckFieldPath(f); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func (g *geoNearStage) run(in Source, rt *runtime) Source {
	return &funcSource{in: in, apply: func(doc bson.Raw) ([]bson.Raw, error) {
		m := docsrc.MetaOf(in)
		if !m.HasGeoNear {
			return nil, mongoerr.New(mongoerr.InternalError, "$geoNear read a document without a distance")
		}
		d := bson.RawValue{Type: bson.TypeDouble, Value: bsoncore.AppendDouble(nil, m.GeoNearDistance*g.multiplier)}
		out := setPath(doc, strings.Split(g.distField, "."), d)
		if g.locsField != "" {
			out = setPath(out, strings.Split(g.locsField, "."), m.GeoNearPoint)
		}
		return []bson.Raw{out}, nil
	}}
}
