package aggregate

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// TestWindowSpillMatchesMemory runs $setWindowFields over partitions far
// larger than a small memory limit: with allowDiskUse the partitions go to
// disk and every window function must answer as it does in memory; without
// it the stage must refuse with 292, which shows the limit was passed.
func TestWindowSpillMatchesMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 19))
	var docs []bson.Raw
	for i := range 400 {
		d := bson.D{{Key: "_id", Value: i}, {Key: "p", Value: rng.IntN(3)}, {Key: "x", Value: rng.IntN(50)}}
		if rng.IntN(5) > 0 {
			d = append(d, bson.E{Key: "y", Value: rng.Float64() * 100})
		}
		d = append(d, bson.E{Key: "pad", Value: strings.Repeat("z", rng.IntN(200))})
		b, _ := bson.Marshal(d)
		docs = append(docs, b)
	}
	outputs := []string{
		`{"s": {"$sum": "$y", "window": {"documents": ["unbounded", "current"]}}}`,
		`{"a": {"$avg": "$y", "window": {"documents": [-3, 3]}}, "m": {"$max": "$y", "window": {"range": [-5, 5]}}}`,
		`{"v": {"$push": "$y", "window": {"documents": [-2, 0]}}, "f": {"$first": "$pad", "window": {"documents": [-1, 1]}}}`,
		`{"t": {"$topN": {"n": 2, "sortBy": {"y": -1}, "output": "$_id"}, "window": {"range": [-10, 0]}}}`,
		`{"c": {"$covariancePop": ["$x", "$y"], "window": {"documents": [-4, 0]}}}`,
		`{"r": {"$rank": {}}, "dr": {"$denseRank": {}}, "n": {"$documentNumber": {}}}`,
		`{"sh": {"$shift": {"output": "$pad", "by": -2, "default": "none"}}}`,
		// ($derivative and $integral refuse a missing input)
		`{"d": {"$derivative": {"input": {"$ifNull": ["$y", 0]}}, "window": {"range": [-3, 0]}}, "i": {"$integral": {"input": {"$ifNull": ["$y", 0]}}, "window": {"documents": [-2, 0]}}}`,
		`{"e": {"$expMovingAvg": {"input": "$x", "N": 3}}}`,
		`{"l": {"$locf": "$y"}, "lf": {"$linearFill": "$y"}}`,
		`{"md": {"$median": {"input": "$y", "method": "approximate"}, "window": {"documents": [-5, 5]}}}`,
	}
	for _, out := range outputs {
		for _, partitionBy := range []string{`"$p"`, `null`} {
			src := fmt.Sprintf(`{"$setWindowFields": {"partitionBy": %s, "sortBy": {"x": 1, "_id": 1}, "output": %s}}`, partitionBy, out)
			switch {
			case strings.Contains(out, "Fill"): // needs unique sortBy values
				src = strings.Replace(src, `{"x": 1, "_id": 1}`, `{"_id": 1}`, 1)
			case strings.Contains(out, `"range"`) || strings.Contains(out, "$derivative") || strings.Contains(out, "$rank"):
				src = strings.Replace(src, `{"x": 1, "_id": 1}`, `{"x": 1}`, 1)
			}
			checkSpillMatches(t, docs, src, 4000)
		}
	}
}

// TestDensifySpillMatchesMemory: $densify's output past a small memory
// limit goes to disk with allowDiskUse and is the in-memory output; without
// allowDiskUse the stage refuses with 292.
func TestDensifySpillMatchesMemory(t *testing.T) {
	var docs []bson.Raw
	for i := range 60 {
		b, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "p", Value: i % 3}, {Key: "x", Value: i * 7 % 50}, {Key: "pad", Value: strings.Repeat("z", 50)}})
		docs = append(docs, b)
	}
	for _, src := range []string{
		`{"$densify": {"field": "x", "partitionByFields": ["p"], "range": {"step": 1, "bounds": "full"}}}`,
		`{"$densify": {"field": "x", "range": {"step": 2, "bounds": [-10, 80]}}}`,
	} {
		checkSpillMatches(t, docs, src, 2000)
	}
}

// checkSpillMatches runs the one-stage pipeline src over docs under a
// memory limit it passes: without allowDiskUse it must fail with 292 (the
// limit was passed), with it it must answer as in memory.
func checkSpillMatches(t *testing.T, docs []bson.Raw, src string, limit int64) {
	t.Helper()
	var stage bson.Raw
	if err := bson.UnmarshalExtJSON([]byte(src), false, &stage); err != nil {
		t.Fatal(err)
	}
	c := stageCase{Docs: docs, Pipeline: []bson.Raw{stage}}
	want, _, err := runCase(c)
	if err != nil {
		t.Fatalf("%s in memory: %v", src, err)
	}
	c.MemoryLimit = limit
	if _, _, err := runCase(c); !mongoerr.Is(err, mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed) {
		t.Fatalf("%s under a %d-byte limit without allowDiskUse: %v, want 292", src, limit, err)
	}
	c.AllowDiskUse = true
	got, _, err := runCase(c)
	if err != nil {
		t.Fatalf("%s spilled: %v", src, err)
	}
	if g, w := canonicalAll(got), canonicalAll(want); !slices.Equal(g, w) {
		t.Fatalf("%s: spilled output differs from the in-memory one", src)
	}
}

// TestDocBufferMeta: a document held in memory keeps its metadata, one
// without any has none, and a spill drops them all (MongoDB's
// SpillableCache spills Document::toBson, the fields alone).
func TestDocBufferMeta(t *testing.T) {
	p, err := Parse(nil, Options{DB: "test", Coll: "c", Env: newMemEnv(), AllowDiskUse: true, TempDir: t.TempDir(), MemoryLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := bson.Marshal(bson.D{{Key: "a", Value: 1}})
	_, pt, _ := bson.MarshalValue(bson.A{1.0, 2.0})
	rows := []docsrc.Meta{
		{},
		{TextScore: 1.5, HasTextScore: true},
		{GeoNearDistance: 3, GeoNearPoint: bson.RawValue{Type: bson.TypeArray, Value: pt}, HasGeoNear: true},
		{RecordID: []byte("r"), IndexKey: doc, SortKey: pt},
	}
	buf := newDocBuffer(p.rt, p.rt.holdAccount(), "$setWindowFields")
	defer buf.close()
	for _, m := range rows {
		if err := buf.add(doc, m); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range rows {
		if got := buf.meta(i); !reflect.DeepEqual(got, want) {
			t.Errorf("in memory, document %d: %+v, want %+v", i, got, want)
		}
	}
	for i := 0; i < 100 && !buf.spilled(); i++ {
		if err := buf.add(doc, rows[1]); err != nil {
			t.Fatal(err)
		}
	}
	if !buf.spilled() {
		t.Fatal("did not spill")
	}
	for i := range buf.len() {
		if got := buf.meta(i); hasMeta(got) {
			t.Fatalf("spilled document %d kept %+v", i, got)
		}
	}
}
