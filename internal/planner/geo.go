package planner

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/query"
)

// GeoScan is how a geo query reads a 2dsphere or 2d index: the ranges of
// the field's keys (S2 cells or geohashes) that may hold a match, under
// the equality values of the fields before it; a $near query widens them
// round by round.
type GeoScan struct {
	// Field is the 2dsphere field's path.
	Field string
	// Near reports a $near or $nearSphere: MongoDB's GEO_NEAR_2DSPHERE
	// (GEO_NEAR_2D on a 2d index).
	Near bool
	// Flat reports a 2d index, whose keys are geohashes.
	Flat bool
	// Cells are the key ranges (S2 cells, or geohashes) as explain shows
	// them; FirstRound, on a $near, computes those of its first round
	// when explain asks.
	Cells      [][2]int64
	FirstRound func() [][2]int64
	// Ref is the engine's own description of a $near scan.
	Ref any
}

// GeoPlan is the plan reading ix for the geo query f on scan.Field. The
// fields after the geo field are bounded by f's other conditions, as
// MongoDB's planner bounds a compound geo index's other fields: the scan
// checks them on each key (CheckKey) and fetches no document whose keys
// all fall outside them (geo_s2ordering.js). The fields before it are
// shown with the bounds the intervals' prefix pins them to. Keys of a geo
// index take the product of their fields' values (every key of a document
// has one value of each), so each field is checked on its own.
func GeoPlan(ix *Index, scan *GeoScan, intervals []Interval, f *query.Filter) *Plan {
	p := &Plan{Index: ix, Intervals: intervals, Geo: scan, multikey: true, fields: ix.Fields}
	p.fieldBounds = make([]fieldBounds, len(ix.Fields))
	leaves := constraintLeaves(f.Root())
	after := false
	for i, fld := range ix.Fields {
		if fld.Geo || fld.Flat {
			after = after || fld.Path == scan.Field
			continue
		}
		if positional(fld.Parts) || fld.Hashed {
			continue
		}
		fb, _ := boundsFor(leaves, fld, anyArray, ix.Collation)
		if fb.empty() {
			continue
		}
		p.fieldBounds[i] = fb
		if after {
			p.checks = append(p.checks, keyCheck{field: i, bounds: fb})
		}
	}
	return p
}

// geoStage is a geo plan's explain: FETCH over an IXSCAN of the cell
// ranges, or GEO_NEAR_2DSPHERE.
func (p *Plan) geoStage(s Shape) bson.D {
	scan := p.scanStage()
	bounds := bson.A{}
	cells := p.Geo.Cells
	if p.Geo.FirstRound != nil {
		cells = p.Geo.FirstRound()
	}
	for _, c := range cells {
		bounds = append(bounds, "["+strconv.FormatInt(c[0], 10)+", "+strconv.FormatInt(c[1], 10)+"]")
	}
	// The geo field's bounds are its key ranges; the others' as any
	// index's (explainBounds).
	shown := scan[len(scan)-1].Value.(bson.D)
	for i := range shown {
		if shown[i].Key == p.Geo.Field {
			shown[i].Value = bounds
		}
	}
	if p.Geo.Near {
		return bson.D{
			{Key: "stage", Value: p.nearStage()},
			{Key: "keyPattern", Value: p.Index.KeyPattern},
			{Key: "indexName", Value: p.Index.Name},
			{Key: "indexVersion", Value: int32(2)},
			{Key: "inputStages", Value: bson.A{scan}},
		}
	}
	return bson.D{{Key: "stage", Value: "FETCH"}, {Key: "filter", Value: s.show(s.Filter)}, {Key: "inputStage", Value: scan}}
}

// nearStage is the stage name of a $near plan.
func (p *Plan) nearStage() string {
	if p.Geo.Flat {
		return "GEO_NEAR_2D"
	}
	return "GEO_NEAR_2DSPHERE"
}
