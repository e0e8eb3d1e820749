package geo

import (
	"cmp"
	"math"
	"slices"

	"github.com/golang/geo/s2"
)

// indexMaxLevel is the finest level at which lines and polygons are
// keyed (MongoDB's finestIndexedLevel for 2dsphere version 3 is about
// this size: cells of some 500 m² at the equator); points are keyed by
// their leaf cell.
const indexMaxLevel = 23

// IndexCells are the cells g is keyed by in a 2dsphere index: each
// point's leaf cell, a covering of each line and polygon; sorted,
// distinct.
func (g *Geometry) IndexCells() []s2.CellID {
	var cells []s2.CellID
	for _, p := range g.Points {
		cells = append(cells, s2.CellIDFromLatLng(s2.LatLngFromPoint(p)))
	}
	rc := &s2.RegionCoverer{MaxLevel: indexMaxLevel, LevelMod: 1, MaxCells: 8}
	for _, l := range g.Lines {
		cells = append(cells, rc.Covering(l)...)
	}
	for _, p := range g.Polygons {
		cells = append(cells, rc.Covering(p)...)
	}
	slices.Sort(cells)
	return slices.Compact(cells)
}

// Range is a run of cell ids to scan, [Lo, Hi] inclusive.
type Range struct{ Lo, Hi s2.CellID }

// Ranges are the index ranges holding the keys of every geometry that
// may meet region: the ids inside each cell of a covering of region, and
// each of those cells' ancestors (where a line or polygon keyed by a
// coarser cell sits); sorted and merged.
func Ranges(region s2.Region) []Range {
	rc := &s2.RegionCoverer{MaxLevel: indexMaxLevel, LevelMod: 1, MaxCells: 16}
	return cellRuns(rc.Covering(region), true)
}

// cellRuns are the ranges of the ids inside cells and, when ancestors is
// set, of their ancestors; sorted and merged.
func cellRuns(cover []s2.CellID, ancestors bool) []Range {
	var out []Range
	for _, c := range cover {
		out = append(out, Range{c.RangeMin(), c.RangeMax()})
		for lvl := c.Level() - 1; ancestors && lvl >= 0; lvl-- {
			a := c.Parent(lvl)
			out = append(out, Range{a, a})
		}
	}
	slices.SortFunc(out, func(a, b Range) int { return cmp.Compare(a.Lo, b.Lo) })
	merged := out[:0]
	for _, r := range out {
		// Runs merge within a face: a run's ids then keep one sign as
		// int64, the form index keys hold them in.
		if n := len(merged); n > 0 && r.Lo <= merged[n-1].Hi+1 && r.Lo.Face() == merged[n-1].Lo.Face() {
			merged[n-1].Hi = max(merged[n-1].Hi, r.Hi)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// NearRanges are the index ranges holding the keys of every geometry
// within radius of center, cheaper than a covering of the cap for a $near
// round: the cell around center at the finest level whose cells are at
// least radius wide, its neighbors (edge and vertex), and their
// ancestors (unless the index holds points only: leaf cells); sorted and
// merged. covered is the radius they hold every key within: the
// neighbors' least width (at least radius), or π when a radius past level
// 0's width covers the sphere.
func NearRanges(center s2.Point, radius float64, pointsOnly bool) (ranges []Range, covered float64) {
	if radius >= s2.MinWidthMetric.Value(0) {
		return Ranges(s2.FullCap()), math.Pi
	}
	level := min(s2.MinWidthMetric.MaxLevel(radius), indexMaxLevel)
	cell := s2.CellIDFromLatLng(s2.LatLngFromPoint(center)).Parent(level)
	return cellRuns(append(cell.AllNeighbors(level), cell), !pointsOnly), s2.MinWidthMetric.Value(level)
}
