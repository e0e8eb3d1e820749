package geo

import (
	"cmp"
	"math"
	"slices"

	"github.com/golang/geo/s2"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/values"
)

// Flat is a 2d index's plane: legacy pairs with both coordinates in
// [Min, Max], each quantized to Bits bits and interleaved into a geohash
// (x's bit first), so that a square of the plane is a run of hashes.
type Flat struct {
	Min, Max float64
	Bits     int
}

// FlatOptions are a 2d index's min, max and bits as given (unset: 0).
type FlatOptions struct{ Min, Max, Bits bson.RawValue }

// NewFlat reads a 2d index's options as MongoDB's
// GeoHashConverter::createFromDoc checks them (defaults -180, 180 and 26
// bits).
func NewFlat(o FlatOptions) (*Flat, error) {
	f := &Flat{Min: -180, Max: 180, Bits: 26}
	for _, opt := range []struct {
		v   bson.RawValue
		dst *float64
	}{{o.Min, &f.Min}, {o.Max, &f.Max}} {
		if opt.v.Type != 0 {
			n, ok := values.Float64(opt.v)
			if !ok || !values.IsNumber(opt.v.Type) {
				return nil, errorf("min and max must be numbers")
			}
			*opt.dst = n
		}
	}
	if o.Bits.Type != 0 {
		// Read as an int, truncated.
		n, ok := values.Float64(o.Bits)
		if !ok || n < 1 || n >= 33 {
			return nil, errorf("bits for hash must be > 0 and <= 32, but %d bits were specified", int64(max(math.MinInt32, min(n, math.MaxInt32))))
		}
		f.Bits = int(n)
	}
	if !(f.Min < f.Max) || math.IsInf(f.Min, 0) || math.IsInf(f.Max, 0) {
		return nil, errorf("region for hash must be valid and have positive area, but [%s, %s] was specified", values.StreamDouble(f.Min), values.StreamDouble(f.Max))
	}
	if scaling := 4 * 1024 * 1024 * 1024 / (f.Max - f.Min); scaling <= 0 || math.IsInf(scaling, 0) {
		return nil, errorf("range [%s, %s] is too small.", values.StreamDouble(f.Min), values.StreamDouble(f.Max))
	}
	return f, nil
}

// Cells is the number of cells along each axis.
func (f *Flat) Cells() float64 { return math.Exp2(float64(f.Bits)) }

// Hash is the geohash of (x, y), or MongoDB's reason when the point is
// outside [Min, Max], both bounds inclusive as GeoHashConverter::hash
// checks them (a coordinate at Max falls in the last cell).
func (f *Flat) Hash(x, y float64) (uint64, error) {
	if !(x >= f.Min && x <= f.Max && y >= f.Min && y <= f.Max) {
		return 0, errorf("point not in interval of [ %s, %s ]", values.StreamDouble(f.Min), values.StreamDouble(f.Max))
	}
	return interleave(f.cell(x), f.cell(y)), nil
}

// cell is the column (or row) of coordinate v.
func (f *Flat) cell(v float64) uint64 {
	c := math.Floor((v - f.Min) / (f.Max - f.Min) * f.Cells())
	return uint64(max(0, min(c, f.Cells()-1)))
}

func interleave(x, y uint64) uint64 {
	var h uint64
	for i := 31; i >= 0; i-- {
		h = h<<2 | (x>>uint(i)&1)<<1 | y>>uint(i)&1
	}
	return h
}

// HashRange is a run of geohashes, [Lo, Hi] inclusive.
type HashRange struct{ Lo, Hi uint64 }

// maxFlatCells bounds the runs a box is covered with.
const maxFlatCells = 64

// Ranges are the runs of geohashes of the cells meeting the box [x0, x1]
// × [y0, y1]: a quadtree descent that keeps a cell whole once it lies
// inside the box or the runs would pass maxFlatCells.
func (f *Flat) Ranges(x0, y0, x1, y1 float64) []HashRange {
	cx0, cx1 := f.cell(math.Max(x0, f.Min)), f.cell(math.Min(x1, f.Max))
	cy0, cy1 := f.cell(math.Max(y0, f.Min)), f.cell(math.Min(y1, f.Max))
	if x1 < f.Min || y1 < f.Min || x0 > f.Max || y0 > f.Max || x0 > x1 || y0 > y1 {
		return nil
	}
	type quad struct {
		x, y  uint64 // the cell's lowest column and row
		level int    // its side is 2^(Bits-level) cells
	}
	var out []HashRange
	queue := []quad{{0, 0, 0}}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		side := uint64(1) << uint(f.Bits-q.level)
		qx1, qy1 := q.x+side-1, q.y+side-1
		if qx1 < cx0 || q.x > cx1 || qy1 < cy0 || q.y > cy1 {
			continue
		}
		inside := q.x >= cx0 && qx1 <= cx1 && q.y >= cy0 && qy1 <= cy1
		if inside || q.level == f.Bits || len(out)+len(queue) >= maxFlatCells {
			lo := interleave(q.x, q.y)
			out = append(out, HashRange{lo, lo + side*side - 1})
			continue
		}
		half := side / 2
		queue = append(queue, quad{q.x, q.y, q.level + 1}, quad{q.x, q.y + half, q.level + 1},
			quad{q.x + half, q.y, q.level + 1}, quad{q.x + half, q.y + half, q.level + 1})
	}
	return mergeHashRanges(out)
}

func mergeHashRanges(rs []HashRange) []HashRange {
	slices.SortFunc(rs, func(a, b HashRange) int { return cmp.Compare(a.Lo, b.Lo) })
	merged := rs[:0]
	for _, r := range rs {
		if n := len(merged); n > 0 && r.Lo <= merged[n-1].Hi+1 {
			merged[n-1].Hi = max(merged[n-1].Hi, r.Hi)
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// LegacyPairs are the legacy pairs of a value: a pair, or an array of
// them (a 2d index's multi-location); none when it holds anything else.
func LegacyPairs(v bson.RawValue) [][2]float64 {
	if x, y, ok := LegacyPair(v); ok {
		return [][2]float64{{x, y}}
	}
	if v.Type != bson.TypeArray {
		return nil
	}
	vals, _ := v.Array().Values()
	out := make([][2]float64, 0, len(vals))
	for _, e := range vals {
		x, y, ok := LegacyPair(e)
		if !ok {
			return nil
		}
		out = append(out, [2]float64{x, y})
	}
	return out
}

// SpherePoints are the legacy pairs of v that lie on the sphere
// (longitude in [-180, 180], latitude in [-90, 90]), as points.
func SpherePoints(v bson.RawValue) []s2.Point {
	var out []s2.Point
	for _, p := range LegacyPairs(v) {
		if p[0] >= -180 && p[0] <= 180 && p[1] >= -90 && p[1] <= 90 {
			out = append(out, point(p[0], p[1]))
		}
	}
	return out
}

// FlatDistance is the plane distance from (x, y) to the closest of pairs;
// ok is false when there is none.
func FlatDistance(pairs [][2]float64, x, y float64) (d float64, ok bool) {
	d = math.Inf(1)
	for _, p := range pairs {
		d, ok = math.Min(d, flatDistance(x-p[0], y-p[1])), true
	}
	return d, ok
}

// flatDistance is the length of (a, b) as MongoDB's distance (geo/shapes.cpp)
// computes it, to the last bit: the other coordinate's difference when one
// is 0, else sqrt(a*a + b*b), which rounds differently from math.Hypot.
func flatDistance(a, b float64) float64 {
	switch {
	case a == 0:
		return math.Abs(b)
	case b == 0:
		return math.Abs(a)
	}
	return math.Sqrt(a*a + b*b)
}
