package driver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/folio-db/folio/internal/instance"
)

// BenchmarkTimeseriesStorage loads #16's data set, 1M measurements (10
// metrics, 100 hosts, 1 s apart), into a time series collection and the
// same documents into a plain collection with an index on host and time,
// compacts both on an on-disk store and reports their disk sizes (data
// plus secondary indexes, from collStats) and the ratio; the target is at most
// 1/3. Then it times #16's query on both, a $match on one host and an
// hour followed by a $group by minute (target: the time series within 2×
// of the plain collection). One iteration; run with -benchtime 1x.
func BenchmarkTimeseriesStorage(b *testing.B) {
	const hosts, seconds = 100, 10_000
	in := startInstance(b, instance.Config{Addr: "127.0.0.1:0", DBPath: b.TempDir()})
	client := connect(b, in)
	ctx := context.Background()
	db := client.Database("tsdisk")
	if err := db.CreateCollection(ctx, "ts", options.CreateCollection().SetTimeSeriesOptions(
		options.TimeSeries().SetTimeField("t").SetMetaField("host").SetGranularity("seconds"))); err != nil {
		b.Fatal(err)
	}
	plain := db.Collection("plain")
	if _, err := plain.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "host", Value: 1}, {Key: "t", Value: 1}}}); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Metrics that drift as real ones do: each host's value moves a
	// little from second to second, with two decimals.
	level := make([][10]float64, hosts)
	for range b.N {
		for s := 0; s < seconds; s += 10 {
			batch := make([]any, 0, 10*hosts)
			for ds := range 10 {
				for h := range hosts {
					d := bson.D{{Key: "t", Value: start.Add(time.Duration(s+ds) * time.Second)}, {Key: "host", Value: fmt.Sprintf("host%03d", h)}}
					for m := range 10 {
						level[h][m] += r.NormFloat64()
						d = append(d, bson.E{Key: fmt.Sprintf("m%d", m), Value: float64(int(level[h][m]*100)) / 100})
					}
					batch = append(batch, d)
				}
			}
			for _, coll := range []*mongo.Collection{db.Collection("ts"), plain} {
				if _, err := coll.InsertMany(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	size := func(coll string) float64 {
		if err := db.RunCommand(ctx, bson.D{{Key: "compact", Value: coll}}).Err(); err != nil {
			b.Fatal(err)
		}
		var st bson.Raw
		if err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: coll}}).Decode(&st); err != nil {
			b.Fatal(err)
		}
		// storageSize holds the documents with their keys, which the
		// _id index's size is a share of (Folio clusters documents by
		// _id): count them once.
		data, _ := st.Lookup("storageSize").AsFloat64OK()
		ix, _ := st.Lookup("totalIndexSize").AsFloat64OK()
		id, _ := st.Lookup("indexSizes", "_id_").AsFloat64OK()
		return data + ix - id
	}
	ts, pl := size("system.buckets.ts"), size("plain")
	b.ReportMetric(ts/(1<<20), "ts-MB")
	b.ReportMetric(pl/(1<<20), "plain-MB")
	b.ReportMetric(ts/pl, "ts/plain")

	// An hour of one host, by minute: 60 groups of 60 measurements.
	const queries = 50
	perQuery := func(coll string) float64 {
		began := time.Now()
		for q := range queries {
			from := start.Add(time.Duration(q%(seconds/3600-1)) * time.Hour)
			pipeline := bson.A{
				bson.D{{Key: "$match", Value: bson.D{{Key: "host", Value: fmt.Sprintf("host%03d", q%hosts)},
					{Key: "t", Value: bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: from.Add(time.Hour)}}}}}},
				bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$dateTrunc", Value: bson.D{{Key: "date", Value: "$t"}, {Key: "unit", Value: "minute"}}}}},
					{Key: "avg", Value: bson.D{{Key: "$avg", Value: "$m0"}}}}}},
			}
			cur, err := db.Collection(coll).Aggregate(ctx, pipeline)
			if err != nil {
				b.Fatal(err)
			}
			var groups []bson.Raw
			if err := cur.All(ctx, &groups); err != nil || len(groups) != 60 {
				b.Fatalf("%s: %d groups, %v", coll, len(groups), err)
			}
		}
		return float64(time.Since(began).Microseconds()) / 1000 / queries
	}
	tsMS, plainMS := perQuery("ts"), perQuery("plain")
	b.ReportMetric(tsMS, "ts-query-ms")
	b.ReportMetric(plainMS, "plain-query-ms")
	b.ReportMetric(tsMS/plainMS, "ts/plain-query")
}
