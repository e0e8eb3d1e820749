package planner

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
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

// GeoPlan is the plan reading ix for a geo query on scan.Field.
func GeoPlan(ix *Index, scan *GeoScan, intervals []Interval) *Plan {
	return &Plan{Index: ix, Intervals: intervals, Geo: scan, multikey: true}
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
	scan[len(scan)-1].Value = bson.D{{Key: p.Geo.Field, Value: bounds}}
	if p.Geo.Near {
		return bson.D{
			{Key: "stage", Value: p.nearStage()},
			{Key: "keyPattern", Value: p.Index.KeyPattern},
			{Key: "indexName", Value: p.Index.Name},
			{Key: "indexVersion", Value: int32(2)},
			{Key: "inputStages", Value: bson.A{scan}},
		}
	}
	return bson.D{{Key: "stage", Value: "FETCH"}, {Key: "filter", Value: s.Filter}, {Key: "inputStage", Value: scan}}
}

// nearStage is the stage name of a $near plan.
func (p *Plan) nearStage() string {
	if p.Geo.Flat {
		return "GEO_NEAR_2D"
	}
	return "GEO_NEAR_2DSPHERE"
}
