package engine

import (
	"errors"
	"math"
	"slices"

	"github.com/golang/geo/s2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/values"
)

// A 2dsphere field's keys are the S2 cell ids (as NumberLongs) its
// geometry is keyed by (geo.Geometry.IndexCells): a document has one key
// per cell of each geometry at the path, null when the path holds no
// geometry, and no key at all when none of the index's 2dsphere fields
// holds one (2dsphere indexes are sparse, as MongoDB's version 2 and 3
// are); a malformed geometry fails the write with 16755.

// A 2d field's keys are the geohashes (geo.Flat, as NumberLongs with the
// top bit flipped) of the legacy pairs at its path (flatKeys); a document
// without one is not indexed.

// A 2dsphere_bucket field (bucketGeoPlugin) is a time series buckets'
// index of a measurement's 2dsphere index: its keys are the leaf cells of
// the points of the bucket's column at its path (bucketGeoKeys), as
// MongoDB keys the column's points as one MultiPoint.

// bucketGeoPlugin is the index type of a buckets' field keyed by its
// column's points.
const bucketGeoPlugin = "2dsphere_bucket"

// bucketGeoKeys are the keys of the columns cols of a bucket: each
// measurement's value must be a geometry (183934) and a point (183493),
// as MongoDB's getS2BucketKeys requires.
func bucketGeoKeys(cols []bson.RawValue) ([]bson.RawValue, error) {
	var cells []s2.CellID
	for _, col := range cols {
		d, ok := col.DocumentOK()
		if !ok {
			continue
		}
		vals, err := d.Values()
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			g, err := geo.Parse(v)
			if err != nil {
				return nil, mongoerr.New(mongoerr.BucketGeoExtractKeys, "Can't extract geo keys: %v", err)
			}
			if g.Type != "Point" {
				return nil, mongoerr.New(mongoerr.BucketGeoNotPoint, "Time-series collections '2dsphere' indexes only support point data")
			}
			cells = append(cells, g.IndexCells()...)
		}
	}
	slices.Sort(cells)
	cells = slices.Compact(cells)
	out := make([]bson.RawValue, len(cells))
	for i, c := range cells {
		out[i] = bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, int64(c))}
	}
	return out, nil
}

// geoField is the position of ix's 2dsphere or 2d field, or -1.
func (ix *Index) geoField() int {
	for i, f := range ix.Fields {
		if f.Geo || f.Flat {
			return i
		}
	}
	return -1
}

// SphereOptions are a 2dsphere index's options as given (unset: 0).
type SphereOptions struct{ Version, Coarsest, Finest bson.RawValue }

// checkSphereOptions refuses the 2dsphere options ix cannot honour when it
// is a 2dsphere index: Folio builds version 3 (MongoDB's default) and its
// default cell levels only.
func checkSphereOptions(ix *Index, spec IndexSpec) error {
	if ix.sphereField() < 0 {
		return nil
	}
	if v := spec.Sphere.Version; v.Type != 0 {
		// MongoDB's S2AccessMethod::fixSpec: a double must be normal (not
		// 0, subnormal, infinite or NaN) and is then truncated to a long.
		f, _ := values.Float64(v)
		if v.Type == bson.TypeDouble && (f == 0 || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) < 0x1p-1022) {
			return mongoerr.New(mongoerr.CannotCreateIndex, "Invalid value for geo index version { 2dsphereIndexVersion : %s }, only versions: [1,2,3] are supported", values.ShellElement("2dsphereIndexVersion", v))
		}
		switch f = math.Trunc(f); {
		case f == 1 || f == 2:
			return mongoerr.New(mongoerr.NotImplemented, "Folio does not support 2dsphereIndexVersion %d; it builds version 3", int(f))
		case f != 3:
			return mongoerr.New(mongoerr.CannotCreateIndex, "unsupported geo index version { 2dsphereIndexVersion : %s }, only versions: [1,2,3] are supported", values.ShellElement("2dsphereIndexVersion", v))
		}
	}
	for _, o := range []givenOption{{"coarsestIndexedLevel", spec.Sphere.Coarsest}, {"finestIndexedLevel", spec.Sphere.Finest}} {
		if o.v.Type != 0 {
			return mongoerr.New(mongoerr.NotImplemented, "Folio does not support the index option '%s' on a 2dsphere index yet", o.name)
		}
	}
	return nil
}

// newFlatIndex sets up a 2d index (MongoDB: its 2d field first, 16801,
// and only one, 16800; bits, min and max as GeoHashConverter reads them,
// InvalidOptions); another index keeps the 2d options as given
// (IndexSpec.Flat).
func newFlatIndex(ix *Index, spec IndexSpec) error {
	g := ix.geoField()
	if g < 0 || !ix.Fields[g].Flat {
		return nil
	}
	if g != 0 {
		return mongoerr.New(mongoerr.FlatNotFirst, "2d has to be first in index")
	}
	for _, f := range ix.Fields[1:] {
		if f.Flat {
			return mongoerr.New(mongoerr.FlatTwoGeoFields, "can't have 2 geo fields")
		}
	}
	flat, err := geo.NewFlat(spec.Flat)
	if err != nil {
		return mongoerr.New(mongoerr.InvalidOptions, "%v", err)
	}
	ix.flat = flat
	return nil
}

// geoFieldOf is the position of ix's 2dsphere or 2d field on path, or
// -1. A 2dsphere index may have several 2dsphere fields, each of which
// serves a query on its path (MongoDB's GeoNear2DSphereStage finds the
// near field in the key pattern by name).
func (ix *Index) geoFieldOf(path string) int {
	return slices.IndexFunc(ix.Fields, func(f IndexField) bool { return (f.Geo || f.Flat) && f.Path == path })
}

// sphereField is the position of ix's (first) 2dsphere field, or -1.
func (ix *Index) sphereField() int {
	if g := ix.geoField(); g >= 0 && !ix.Fields[g].Flat {
		return g
	}
	return -1
}

// raiseCoarseCells raises ix's coarseCells flag when one of keys holds a
// cell coarser than a leaf, and reports whether it was down before.
func (ix *Index) raiseCoarseCells(keys []indexKey) bool {
	if ix.sphereField() < 0 || ix.coarseCells.Load() {
		return false
	}
	for g, f := range ix.Fields {
		if !f.Geo || f.Flat {
			continue
		}
		for _, k := range keys {
			if n, ok := k.vals[g].Int64OK(); ok && !s2.CellID(n).IsLeaf() {
				return !ix.coarseCells.Swap(true)
			}
		}
	}
	return false
}

// geoKeyValues are the keys of the geometries at f's path in doc: S2
// cell ids, or a 2d index's geohashes.
func (ix *Index) geoKeyValues(root bson.RawValue, f IndexField, doc bson.Raw) ([]bson.RawValue, error) {
	var out []bson.RawValue
	var found []bson.RawValue
	geo.EachValue(root, f.Parts, func(v bson.RawValue) error { found = append(found, v); return nil })
	if len(found) == 1 && !f.Flat && (found[0].Type == bson.TypeEmbeddedDocument || found[0].Type == bson.TypeArray) {
		if vals, _ := bson.Raw(found[0].Value).Values(); len(vals) == 0 {
			// getS2Keys: a field whose one value is an empty document
			// or array holds no geometry, as null does.
			return nil, nil
		}
	}
	if f.GeoBucket {
		return bucketGeoKeys(found)
	}
	for _, v := range found {
		if v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
			continue
		}
		if f.Flat {
			if err := ix.flatKeys(v, doc, &out); err != nil {
				return nil, err
			}
			continue
		}
		// getS2Keys does not expand an array at the path's end: the
		// value is one geometry (an array of them is malformed). A big
		// polygon (the strict-winding crs) is refused before any
		// projection, as S2GetKeysForElement does.
		g, err := geo.Parse(v)
		if err == nil && g.BigPolygon {
			err = errors.New("can't index geometry with strict winding order")
		}
		if err != nil {
			return nil, mongoerr.New(mongoerr.GeoExtractKeys, "Can't extract geo keys: %s  %v", values.ShellDoc(doc), err)
		}
		for _, c := range g.IndexCells() {
			out = append(out, bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, int64(c))})
		}
	}
	return out, nil
}

// flatKeys appends the geohashes of the locations of v to out, as
// MongoDB's get2DKeys reads them: v is one location when its first
// value is a number, else each of its values is one (16804 when one is
// no array or document); a value that is no array or document, and an
// empty location, key nothing. A location is the pair of its first two
// values (13068 with one, 13026 when they are not numbers, 13027 outside
// the index's bounds: GeoHashConverter::hash).
func (ix *Index) flatKeys(v bson.RawValue, doc bson.Raw, out *[]bson.RawValue) error {
	if v.Type != bson.TypeEmbeddedDocument && v.Type != bson.TypeArray {
		return nil
	}
	vals, _ := bson.Raw(v.Value).Values()
	if len(vals) == 0 {
		return nil
	}
	locs := [][]bson.RawValue{vals}
	if !values.IsNumber(vals[0].Type) {
		locs = locs[:0]
		for _, l := range vals {
			if l.Type != bson.TypeEmbeddedDocument && l.Type != bson.TypeArray {
				return mongoerr.New(mongoerr.FlatLocationMalformed, "location object expected, location array not in correct format")
			}
			if lv, _ := bson.Raw(l.Value).Values(); len(lv) > 0 {
				locs = append(locs, lv)
			}
		}
	}
	for _, l := range locs {
		if len(l) == 1 {
			return mongoerr.New(mongoerr.FlatLocationOneValue, "geo field only has 1 element :: caused by :: %s", values.ShellDoc(doc))
		}
		if !values.IsNumber(l[0].Type) || !values.IsNumber(l[1].Type) {
			return mongoerr.New(mongoerr.FlatLocationNotNumbers, "geo values must be 'legacy coordinate pairs' for 2d indexes :: caused by :: %s", values.ShellDoc(doc))
		}
		x, _ := values.Float64(l[0])
		y, _ := values.Float64(l[1])
		h, err := ix.flat.Hash(x, y)
		if err != nil {
			return mongoerr.New(mongoerr.FlatPointOutOfBounds, "%v :: caused by :: %s", err, values.ShellDoc(doc))
		}
		*out = append(*out, int64Value(hashKey(h)))
	}
	return nil
}
