package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// textBenchSpec is the text index of the text benchmarks.
func textBenchSpec(b *testing.B) []IndexSpec {
	return []IndexSpec{{Name: "body_text", Key: ext(b, `{"body": "text"}`), ExpireAfter: -1}}
}

// textBenchEngine holds n documents of about 1 KB of words drawn from a
// 5,000-word vocabulary, inserted 500 at a time under a text index (when
// indexed is set); one in 1,000 also holds "zebra", one in 1,000
// "quokka".
func textBenchEngine(b *testing.B, n int, indexed bool) *Engine {
	b.Helper()
	e := newTestEngine(b)
	if indexed {
		if _, err := e.CreateIndexes("test", "bench", textBenchSpec(b), nil); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	batch := make([]bson.Raw, 0, 500)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.Reset()
		for sb.Len() < 1000 {
			sb.WriteString(vocab[r.IntN(len(vocab))])
			sb.WriteByte(' ')
		}
		switch i % 1000 {
		case 7:
			sb.WriteString("zebra")
		case 500:
			sb.WriteString("quokka")
		}
		d, _ := bson.Marshal(bson.D{{Key: "_id", Value: int32(i)}, {Key: "body", Value: sb.String()}})
		batch = append(batch, d)
		if len(batch) == cap(batch) || i == n-1 {
			if _, _, err := e.Insert("test", "bench", batch, true, WriteOptions{}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return e
}

// BenchmarkTextSearch measures a two-term $text search whose terms occur
// in 0.2% of the documents, at growing collection sizes: it reads the
// keys of its terms and their documents only, so its latency grows with
// the matches (n/500), not with the collection.
func BenchmarkTextSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		e := textBenchEngine(b, n, true)
		filter := ext(b, `{"$text": {"$search": "zebra quokka"}}`)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			var got int
			for b.Loop() {
				got = drain(b, e, FindOptions{Filter: filter})
			}
			if got != n/500 {
				b.Fatalf("%d matches, want %d", got, n/500)
			}
			b.ReportMetric(float64(got), "matches")
		})
	}
}

// BenchmarkTextIndexed measures, per document, inserting 10,000 documents
// of about 1 KB of words into a text-indexed collection (some 170 index
// entries each, 500 documents a transaction) and building the text index
// over the same documents; the build also reports the longest wait
// between two of its progress reports, which is how late an interrupted
// build stops.
func BenchmarkTextIndexed(b *testing.B) {
	const n = 10_000
	b.Run("insert", func(b *testing.B) {
		for b.Loop() {
			textBenchEngine(b, n, true)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/doc")
	})
	b.Run("build", func(b *testing.B) {
		var build, longest time.Duration
		for b.Loop() {
			b.StopTimer()
			e := textBenchEngine(b, n, false)
			b.StartTimer()
			start := time.Now()
			last := start
			if _, err := e.CreateIndexes("test", "bench", textBenchSpec(b), func(int64, int64) error {
				longest = max(longest, time.Since(last))
				last = time.Now()
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			build += time.Since(start)
		}
		b.ReportMetric(float64(build.Nanoseconds())/float64(b.N*n), "ns/doc")
		b.ReportMetric(float64(longest.Microseconds())/1000, "ms-between-reports")
	})
}
