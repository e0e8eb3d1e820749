package engine

import (
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/folio-db/folio/internal/geo"
	"github.com/folio-db/folio/internal/mongoerr"
)

// A 2dsphere field's keys are the S2 cell ids (as NumberLongs) its
// geometry is keyed by (geo.Geometry.IndexCells): a document has one key
// per cell of each geometry at the path, and none when the path holds no
// geometry (2dsphere indexes are sparse, as MongoDB's version 2 and 3
// are); a malformed geometry fails the write with 16755.

// geoField is the position of ix's 2dsphere field, or -1.
func (ix *Index) geoField() int {
	for i, f := range ix.Fields {
		if f.Geo {
			return i
		}
	}
	return -1
}

// geoKeyValues are the cell ids of the geometries at f's path in doc.
func geoKeyValues(root bson.RawValue, f IndexField, doc bson.Raw) ([]bson.RawValue, error) {
	var out []bson.RawValue
	var visit func(v bson.RawValue, i int) error
	visit = func(v bson.RawValue, i int) error {
		if i == len(f.Parts) {
			if v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
				return nil
			}
			gs, err := geo.Geometries(v)
			if err != nil {
				return mongoerr.New(mongoerr.GeoExtractKeys, "Can't extract geo keys: %s  %v", shellDoc(doc), err)
			}
			for _, g := range gs {
				for _, c := range g.IndexCells() {
					out = append(out, bson.RawValue{Type: bson.TypeInt64, Value: bsoncore.AppendInt64(nil, int64(c))})
				}
			}
			return nil
		}
		switch v.Type {
		case bson.TypeEmbeddedDocument:
			child, err := v.Document().LookupErr(f.Parts[i])
			if err != nil {
				return nil
			}
			return visit(child, i+1)
		case bson.TypeArray:
			if n, err := strconv.Atoi(f.Parts[i]); err == nil && n >= 0 {
				if child, err := v.Array().IndexErr(uint(n)); err == nil {
					return visit(child, i+1)
				}
			}
			elems, _ := v.Array().Values()
			for _, el := range elems {
				if el.Type == bson.TypeEmbeddedDocument {
					if err := visit(el, i); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	err := visit(root, 0)
	return out, err
}
