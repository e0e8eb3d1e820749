package engine

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/storage/testkv"
	"github.com/folio-db/folio/internal/tscodec"
)

// A time series bucket is stored compressed and every read path gives it
// back byte for byte: a collection scan, an _id point read, an index
// fetch (an index written with the document and one backfilled), an
// update's read, $sample, validate and the sizes of collStats. The same
// document in a plain collection is stored as it is.
func TestStoredBuckets(t *testing.T) {
	e := newTestEngine(t)
	const coll = "system.buckets.m"
	if err := e.CreateCollection("test", coll, CollectionOptions{Timeseries: ext(t, `{"timeField": "t", "metaField": "host", "granularity": "seconds", "bucketMaxSpanSeconds": 3600}`)}); err != nil {
		t.Fatal(err)
	}
	mustCreateIndex(t, e, coll, `{"meta": 1}`, false)
	var times, values []string
	for i := range 200 {
		times = append(times, fmt.Sprintf(`"%d": {"$date": {"$numberLong": "%d"}}`, i, 1767225600000+int64(i)*1000))
		values = append(values, fmt.Sprintf(`"%d": %g`, i, float64(1000+i*37%101)/100))
	}
	// 101 buckets, for $sample's random cursor; the first is the one read.
	bucket := func(i int) bson.Raw {
		return ext(t, fmt.Sprintf(`{"_id": {"$oid": "695bc80078a1f7e8c3f1a%03d"}, "control": {"version": 1}, "meta": "h%d", "data": {"t": {%s}, "v": {%s}}}`,
			i, i+1, strings.Join(times, ", "), strings.Join(values[i%2:], ", ")))
	}
	doc := bucket(0)
	buckets := map[string]bool{}
	var docs []bson.Raw
	for i := range 101 {
		docs = append(docs, bucket(i))
		buckets[string(docs[i])] = true
	}
	for _, c := range []string{coll, "plain"} {
		if _, werrs, err := e.Insert("test", c, docs, true, WriteOptions{}); err != nil || len(werrs) > 0 {
			t.Fatal(err, werrs)
		}
	}
	mustCreateIndex(t, e, coll, `{"data.v.0": 1}`, false)
	stored := func(c string) []byte {
		k, err := e.Collection("test", c).recordKey(doc)
		if err != nil {
			t.Fatal(err)
		}
		v, _, err := e.kv.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := stored(coll); !tscodec.Encoded(v) || len(v) > len(doc)/4 {
		t.Fatalf("bucket stored in %d bytes (encoded %v) for %d", len(v), tscodec.Encoded(v), len(doc))
	}
	// as it is, after the mark of its insert's entry (oplog.NewRef) on a
	// store that takes references
	plain := stored("plain")
	if d, err := docOf(plain, nil); err != nil || !bytes.Equal(d, doc) {
		t.Fatal("the plain collection's document is not stored as it is")
	}
	if _, _, marked := insertMark(plain); marked == testkv.TiKV() {
		t.Fatalf("marked %v on TiKV %v", marked, testkv.TiKV())
	}
	all := findDocs(t, e, coll, FindOptions{})
	if len(all) != len(docs) {
		t.Fatalf("a collection scan read %d buckets of %d", len(all), len(docs))
	}
	for i := range all {
		if !bytes.Equal(all[i], docs[i]) {
			t.Fatalf("a collection scan read bucket %d changed", i)
		}
	}
	for _, filter := range []string{`{"_id": {"$oid": "695bc80078a1f7e8c3f1a000"}}`, `{"meta": "h1"}`, `{"data.v.0": 10, "meta": "h1"}`} {
		got := findDocs(t, e, coll, FindOptions{Filter: ext(t, filter)})
		if len(got) != 1 || !bytes.Equal(got[0], doc) {
			t.Fatalf("find %s: %d documents, not the bucket", filter, len(got))
		}
	}
	cur, ok, err := e.RandomSample(context.Background(), "test", coll, 2, nil)
	if err != nil || !ok {
		t.Fatal("no random cursor", err)
	}
	for range 2 {
		if got, err := cur.Next(); err != nil || !buckets[string(got)] {
			t.Fatalf("$sample: not a bucket inserted (%v)", err)
		}
	}
	cur.Close()
	st, err := e.Stats(e.Collection("test", coll))
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	if err != nil || st.Size != int64(size) {
		t.Fatalf("collStats size %d, want %d (%v)", st.Size, size, err)
	}
	if _, err := e.Update("test", coll, UpdateSpec{Filter: ext(t, `{"meta": "h1"}`), Update: ext(t, `{"$set": {"meta": "updated"}}`)}); err != nil {
		t.Fatal(err)
	}
	got := findDocs(t, e, coll, FindOptions{Filter: ext(t, `{"meta": "updated"}`)})
	if len(got) != 1 || !bytes.Equal(got[0].Lookup("data").Value, doc.Lookup("data").Value) || !tscodec.Encoded(stored(coll)) {
		t.Fatal("the updated bucket lost its data or its compression")
	}
	mustValidate(t, e, coll)
}
