package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkGeoNear measures a $near with a limit of 10 over n random
// points on the sphere, beside an indexed equality lookup of one document
// in the same collection (the bound: within 5×), and reports the
// keys and documents the $near examined.
func BenchmarkGeoNear(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		e := newTestEngine(b)
		for _, key := range []string{`{"loc": "2dsphere"}`, `{"b": 1}`} {
			if _, err := e.CreateIndexes("test", "bench", []IndexSpec{{Key: ext(b, key), ExpireAfter: -1}}, nil); err != nil {
				b.Fatal(err)
			}
		}
		r := rand.New(rand.NewPCG(7, 8))
		batch := make([]bson.Raw, 0, 1000)
		for i := 0; i < n; i++ {
			lng, lat := r.Float64()*360-180, r.Float64()*180-90
			d, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "b", Value: int32(i)},
				{Key: "loc", Value: bson.D{{Key: "type", Value: "Point"}, {Key: "coordinates", Value: bson.A{lng, lat}}}}})
			batch = append(batch, d)
			if len(batch) == cap(batch) || i == n-1 {
				if _, _, err := e.Insert("test", "bench", batch, true, WriteOptions{}); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		near := ext(b, `{"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [2.35, 48.85]}}}}`)
		b.Run(fmt.Sprintf("near/docs=%d", n), func(b *testing.B) {
			var st OpStats
			for b.Loop() {
				st = OpStats{}
				if got := drain(b, e, FindOptions{Filter: near, Limit: 10, Ctx: WithOpStats(context.Background(), &st)}); got != 10 {
					b.Fatalf("%d documents", got)
				}
			}
			b.ReportMetric(float64(st.KeysExamined), "keys")
			b.ReportMetric(float64(st.DocsExamined), "docs")
		})
		eq := ext(b, fmt.Sprintf(`{"b": %d}`, n/2))
		b.Run(fmt.Sprintf("equality/docs=%d", n), func(b *testing.B) {
			for b.Loop() {
				if got := drain(b, e, FindOptions{Filter: eq}); got != 1 {
					b.Fatalf("%d documents", got)
				}
			}
		})
	}
}
