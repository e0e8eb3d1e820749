package geo

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/rawdoc"
)

// FuzzParse reads any BSON value as a geometry and as the operand of each
// geo operator: errors, never a panic; a parsed geometry has cells and a
// distance.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"type": "Point", "coordinates": [1, 2]}`,
		`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}`,
		`{"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], [[2, 2], [3, 3]]]}`,
		`{"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [0, 0]}]}`,
		`{"$geometry": {"type": "Point", "coordinates": [0, 0]}, "$maxDistance": 10}`,
		`{"$centerSphere": [[0, 0], 0.1]}`, `{"$box": [[0, 0], [1, 1]]}`, `{"$polygon": [[0, 0], [1, 0], [0, 1]]}`,
		`[1, 2]`, `{"x": 1, "y": 2}`,
		`{"$center": 5}`, `{"$centerSphere": {"c": [0, 0], "r": 1}}`, `{"$geometry": [0, 0]}`,
		`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]], "crs": {"type": "name", "properties": {"name": "EPSG:4326"}}}}`,
		`{"type": "LineString", "coordinates": [[0, 0], [0, 0]]}`,
	} {
		var d bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(`{"v": `+s+`}`), false, &d); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := bson.Raw(data)
		if rawdoc.Validate(d) != nil { // as the wire layer checks it
			return
		}
		v, err := d.LookupErr("v")
		if err != nil {
			return
		}
		if g, err := Parse(v); err == nil {
			_ = g.IndexCells()
			_ = g.Distance(point(0, 0))
		}
		_, _ = Geometries(v)
		for _, parse := range []func(bson.RawValue) (*Query, error){
			func(v bson.RawValue) (*Query, error) { return ParseWithin("$within", v) }, ParseIntersects,
			func(v bson.RawValue) (*Query, error) {
				ops, _ := bson.Marshal(bson.D{{Key: "$nearSphere", Value: v}})
				return ParseNear("$nearSphere", ops)
			},
		} {
			if q, err := parse(v); err == nil {
				_ = Ranges(q.Region())
				_ = q.Matches(v)
			}
		}
	})
}
