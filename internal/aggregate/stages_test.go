package aggregate

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/collation"
	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// stageCase is one line of testdata/stages.jsonl: documents of the
// collection "c" (and of other collections), a pipeline, and MongoDB's
// output or error code. unordered compares the output as a multiset;
// after lists the expected content of collections the pipeline writes;
// uniqueIndexes are the key patterns of unique indexes of those collections;
// views are views to create, in order, each on a collection or an earlier
// view.
type stageCase struct {
	Name             string                `bson:"name"`
	Docs             []bson.Raw            `bson:"docs"`
	Colls            map[string][]bson.Raw `bson:"colls"`
	UniqueIndexes    map[string][]bson.Raw `bson:"uniqueIndexes"`
	Pipeline         []bson.Raw            `bson:"pipeline"`
	Expected         []bson.Raw            `bson:"expected"`
	Error            int32                 `bson:"error"`
	Unordered        bool                  `bson:"unordered"`
	Collectionless   bool                  `bson:"collectionless"`
	Let              bson.Raw              `bson:"let"`
	After            map[string][]bson.Raw `bson:"after"`
	MemoryLimit      int64                 `bson:"memoryLimit"`
	MaxDensifyDocs   int64                 `bson:"maxDensifyDocs"`
	MaxPushBytes     int64                 `bson:"maxPushBytes"`
	MaxAddToSetBytes int64                 `bson:"maxAddToSetBytes"`
	MaxTopNBytes     int64                 `bson:"maxTopNBytes"`
	WindowMemory     int64                 `bson:"windowMemoryLimit"`
	DensifyMemory    int64                 `bson:"densifyMemoryLimit"`
	GroupMemory      int64                 `bson:"groupMemoryLimit"`
	AllowDiskUse     bool                  `bson:"allowDiskUse"`
	Collation        bson.Raw              `bson:"collation"`
	Views            []viewCase            `bson:"views"`
	FacetBuffer      int64                 `bson:"facetBuffer"`
}

// viewCase is a view of a case: its name, what it is on, its pipeline.
type viewCase struct {
	Name     string     `bson:"name"`
	ViewOn   string     `bson:"viewOn"`
	Pipeline []bson.Raw `bson:"pipeline"`
}

// loadCases reads a JSON-lines file of Extended JSON cases.
func loadCases(t testing.TB, path string) []stageCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []stageCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		var c stageCase
		if err := bson.UnmarshalExtJSON([]byte(line), false, &c); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, c)
	}
	return out
}

// canonical renders a document as canonical Extended JSON, so that
// comparisons see types and field order.
func canonical(d bson.Raw) string {
	b, err := bson.MarshalExtJSON(d, true, false)
	if err != nil {
		return "<invalid: " + err.Error() + ">"
	}
	return string(b)
}

func canonicalAll(docs []bson.Raw) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = canonical(d)
	}
	return out
}

// runCase runs a case's pipeline over a fresh memEnv.
func runCase(c stageCase) ([]bson.Raw, *memEnv, error) { return runCaseOn(c, "") }

// runCaseOn is runCase with the pipeline run on test.<coll> ("c" when
// empty), which may not exist.
func runCaseOn(c stageCase, coll string) ([]bson.Raw, *memEnv, error) {
	if coll == "" {
		coll = "c"
	}
	env := newMemEnv()
	if _, err := env.Insert("test", "c", c.Docs, true); err != nil {
		return nil, nil, err
	}
	for name, docs := range c.Colls {
		if _, err := env.Insert("test", name, docs, true); err != nil {
			return nil, nil, err
		}
	}
	for name, keys := range c.UniqueIndexes {
		env.declareUnique("test", name, keys)
	}
	for _, v := range c.Views {
		base, under, _, _ := env.ResolveView("test", v.ViewOn)
		env.views["test."+v.Name] = append(slices.Clone(under), v.Pipeline...)
		env.bases["test."+v.Name] = base
	}
	opts := Options{DB: "test", Coll: coll, Env: env, Let: c.Let, MemoryLimit: c.MemoryLimit, MaxDensifyDocs: c.MaxDensifyDocs,
		MaxPushBytes: c.MaxPushBytes, MaxAddToSetBytes: c.MaxAddToSetBytes, MaxTopNBytes: c.MaxTopNBytes, WindowMemoryLimit: c.WindowMemory, DensifyMemoryLimit: c.DensifyMemory, GroupMemoryLimit: c.GroupMemory, AllowDiskUse: c.AllowDiskUse, FacetBufferBytes: c.FacetBuffer, Now: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
	if c.Collation != nil {
		coll, err := collation.Parse(c.Collation)
		if err != nil {
			return nil, env, err
		}
		opts.Collator = coll
	}
	if c.Collectionless {
		opts.Coll = ""
	}
	p, err := Parse(c.Pipeline, opts)
	if err != nil {
		return nil, env, err
	}
	var src Source
	if !c.Collectionless {
		if src, err = env.Find("test", coll, nil, opts.Collator); err != nil {
			return nil, env, err
		}
	}
	out := p.Run(src)
	defer out.Close()
	var docs []bson.Raw
	for {
		d, err := out.Next()
		if err != nil {
			return nil, env, err
		}
		if d == nil {
			return docs, env, nil
		}
		docs = append(docs, d)
	}
}

func TestStages(t *testing.T) {
	for _, c := range loadCases(t, "testdata/stages.jsonl") {
		t.Run(c.Name, func(t *testing.T) {
			checkCase(t, c)
		})
	}
}

// TestFacetBatches runs every $facet case again with its input read in
// batches of one document and of 64 bytes (internalQueryFacetBufferSizeBytes):
// the sub-pipelines, run in turn over each batch, must give what they give
// over one batch of all of it.
func TestFacetBatches(t *testing.T) {
	n := 0
	for _, c := range loadCases(t, "testdata/stages.jsonl") {
		if c.FacetBuffer != 0 || !strings.Contains(fmt.Sprint(c.Pipeline), `"$facet"`) {
			continue
		}
		n++
		for _, size := range []int64{1, 64} {
			c.FacetBuffer = size
			t.Run(fmt.Sprintf("%s/%d", c.Name, size), func(t *testing.T) {
				checkCase(t, c)
			})
		}
	}
	if n < 10 {
		t.Fatalf("%d $facet cases", n)
	}
}

func checkCase(t *testing.T, c stageCase) {
	t.Helper()
	got, env, err := runCase(c)
	switch {
	case c.Error != 0 && err == nil:
		t.Fatalf("want error %d, got none; output %v", c.Error, canonicalAll(got))
	case c.Error != 0:
		if code := mongoerr.As(err).Code; code != mongoerr.Code(c.Error) {
			t.Fatalf("want error %d, got %v", c.Error, err)
		}
	case err != nil:
		t.Fatalf("unexpected error: %v", err)
	default:
		g, w := canonicalAll(got), canonicalAll(c.Expected)
		if c.Unordered {
			slices.Sort(g)
			slices.Sort(w)
		}
		if !slices.Equal(g, w) {
			t.Fatalf("output mismatch\n got: %s\nwant: %s", strings.Join(g, "\n      "), strings.Join(w, "\n      "))
		}
	}
	// what a pipeline wrote stays when it fails
	for coll, want := range c.After {
		have := env.colls["test."+coll]
		if g, w := canonicalAll(have), canonicalAll(want); !slices.Equal(g, w) {
			t.Fatalf("collection %s after the pipeline\n got: %s\nwant: %s", coll, strings.Join(g, "\n      "), strings.Join(w, "\n      "))
		}
	}
}

// TestInterrupt checks that a pipeline stops with its operation context's
// interruption, whatever its stages: a maxTimeMS passed, or a kill.
func TestInterrupt(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	killed, kill := context.WithCancelCause(context.Background())
	kill(mongoerr.New(mongoerr.Interrupted, "operation was interrupted"))
	var docs []bson.Raw
	for i := range 200 {
		doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}})
		docs = append(docs, doc)
	}
	stage := func(d bson.D) bson.Raw { b, _ := bson.Marshal(d); return b }
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		stage bson.Raw
		want  mongoerr.Code
	}{
		{"group past maxTimeMS", expired, stage(bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}}}}), mongoerr.MaxTimeMSExpired},
		{"project killed", killed, stage(bson.D{{Key: "$project", Value: bson.D{{Key: "x", Value: 1}}}}), mongoerr.Interrupted},
		{"match killed", killed, stage(bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: -1}}}}), mongoerr.Interrupted},
	} {
		p, err := Parse([]bson.Raw{tc.stage}, Options{DB: "test", Coll: "c", Env: newMemEnv(), Ctx: tc.ctx})
		if err != nil {
			t.Fatal(err)
		}
		out := p.Run(&SliceSource{Docs: slices.Clone(docs)})
		for err == nil {
			var d bson.Raw
			if d, err = out.Next(); d == nil && err == nil {
				t.Fatalf("%s: ran to the end", tc.name)
			}
		}
		if !mongoerr.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %s", tc.name, err, tc.want.Name())
		}
		p, _ = Parse([]bson.Raw{tc.stage}, Options{DB: "test", Coll: "c", Env: newMemEnv(), Ctx: context.Background()})
		for out := p.Run(&SliceSource{Docs: slices.Clone(docs)}); ; {
			d, err := out.Next()
			if err != nil {
				t.Fatalf("%s uninterrupted: %v", tc.name, err)
			}
			if d == nil {
				break
			}
		}
	}
}

func TestTakePushdown(t *testing.T) {
	stage := func(d bson.D) bson.Raw { b, _ := bson.Marshal(d); return b }
	for _, tc := range []struct {
		stages       []bson.Raw
		filter, sort bool
		limit        int64
		left         int
	}{
		{[]bson.Raw{stage(bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 1}}}}), stage(bson.D{{Key: "$sort", Value: bson.D{{Key: "a", Value: 1}}}}), stage(bson.D{{Key: "$limit", Value: 3}})}, true, true, 3, 1},
		// a $match goes before a $sort (moveMatches)
		{[]bson.Raw{stage(bson.D{{Key: "$sort", Value: bson.D{{Key: "a", Value: 1}}}}), stage(bson.D{{Key: "$match", Value: bson.D{}}})}, true, true, 0, 0},
		// and the $limit after it then reaches the $sort
		{[]bson.Raw{stage(bson.D{{Key: "$sort", Value: bson.D{{Key: "a", Value: 1}}}}), stage(bson.D{{Key: "$match", Value: bson.D{{Key: "b", Value: 1}}}}), stage(bson.D{{Key: "$skip", Value: 1}}), stage(bson.D{{Key: "$limit", Value: 3}})}, true, true, 4, 2},
		// an $expr goes to the scan with the rest of its $match, as
		// MongoDB's query layer takes it
		{[]bson.Raw{stage(bson.D{{Key: "$match", Value: bson.D{{Key: "$expr", Value: true}}}}), stage(bson.D{{Key: "$sort", Value: bson.D{{Key: "a", Value: 1}}}})}, true, true, 0, 0},
		// a $limit bounds the read past $skip stages and the stages that
		// pass each document on as one (explain_sort.js: 5 examined)
		{[]bson.Raw{stage(bson.D{{Key: "$project", Value: bson.D{{Key: "_id", Value: 1}}}}), stage(bson.D{{Key: "$limit", Value: 5}})}, false, false, 5, 2},
		{[]bson.Raw{stage(bson.D{{Key: "$match", Value: bson.D{{Key: "a", Value: 1}}}}), stage(bson.D{{Key: "$skip", Value: 2}}), stage(bson.D{{Key: "$addFields", Value: bson.D{{Key: "b", Value: 1}}}}), stage(bson.D{{Key: "$skip", Value: 1}}), stage(bson.D{{Key: "$limit", Value: 5}})}, true, false, 8, 4},
		{[]bson.Raw{stage(bson.D{{Key: "$unwind", Value: "$a"}}), stage(bson.D{{Key: "$limit", Value: 5}})}, false, false, 0, 2},
	} {
		p, err := Parse(tc.stages, Options{DB: "test", Coll: "c", Env: newMemEnv()})
		if err != nil {
			t.Fatal(err)
		}
		pd := p.TakePushdown()
		if (pd.Filter != nil) != tc.filter || (pd.Sort != nil) != tc.sort || pd.Limit != tc.limit || len(p.stages) != tc.left {
			t.Errorf("%v: got %+v with %d stages left", tc.stages, pd, len(p.stages))
		}
	}
}

// A $group by one field path and nothing else, first or after the
// $match, names its path for a distinct scan (Pushdown.GroupKey), as
// MongoDB's groupIsEligibleForDistinctScan does with no accumulator.
func TestTakePushdownGroupKey(t *testing.T) {
	for _, tc := range []struct {
		pipeline string
		want     string
	}{
		{`[{"$group": {"_id": "$a"}}]`, "a"},
		{`[{"$match": {"x": 1}}, {"$group": {"_id": "$a.b"}}, {"$sort": {"_id": 1}}]`, "a.b"},
		{`[{"$group": {"_id": "$a", "n": {"$sum": 1}}}]`, ""},
		{`[{"$group": {"_id": "$$ROOT"}}]`, ""},
		{`[{"$group": {"_id": {"a": "$a"}}}]`, ""},
		{`[{"$group": {"_id": null}}]`, ""},
		{`[{"$sort": {"a": 1}}, {"$group": {"_id": "$a"}}]`, ""},
		{`[{"$project": {"a": 1}}, {"$group": {"_id": "$a"}}]`, ""},
		{`[{"$count": "n"}]`, ""},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$group": {"_id": "$a"}}]`, ""},
	} {
		if got := parsePipelineText(t, tc.pipeline).TakePushdown().GroupKey; got != tc.want {
			t.Errorf("%s: GroupKey %q, want %q", tc.pipeline, got, tc.want)
		}
	}
}

// The stage after the $match reads nothing of its input when it is a
// $count or a $group by a constant accumulating constants
// (Pushdown.Counted): MongoDB's dependency analysis then finds no
// requirement and plans the scan as a count (PipelineD, IS_COUNT).
func TestTakePushdownCounted(t *testing.T) {
	for _, tc := range []struct {
		pipeline string
		want     bool
	}{
		{`[{"$match": {"a": 1}}, {"$count": "n"}]`, true},
		{`[{"$count": "n"}]`, true},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": null, "n": {"$sum": 1}}}]`, true},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": "x", "n": {"$count": {}}, "m": {"$sum": 2}}}]`, true},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": null}}]`, true},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": null, "n": {"$sum": "$a"}}}]`, false},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": null, "n": {"$max": 1}, "f": {"$firstN": {"input": 1, "n": 2}}}}]`, true},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": null, "n": {"$top": {"output": 1, "sortBy": {"a": 1}}}}}]`, false},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": "$a", "n": {"$sum": 1}}}]`, false},
		{`[{"$match": {"a": 1}}, {"$group": {"_id": "$$ROOT"}}]`, false},
		{`[{"$match": {"a": 1}}, {"$sortByCount": "$a"}]`, false},
		{`[{"$match": {"a": 1}}, {"$bucket": {"groupBy": "$a", "boundaries": [0, 5]}}]`, false},
		{`[{"$match": {"a": 1}}, {"$project": {"a": 1}}, {"$count": "n"}]`, false},
		{`[{"$match": {"a": 1}}, {"$sort": {"a": 1}}, {"$count": "n"}]`, false},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$count": "n"}]`, false},
	} {
		if got := parsePipelineText(t, tc.pipeline).TakePushdown().Counted; got != tc.want {
			t.Errorf("%s: Counted %v, want %v", tc.pipeline, got, tc.want)
		}
	}
}

// parsePipelineText parses a pipeline written as an extended JSON array
// of stages, on collection test.c of an empty memEnv.
func parsePipelineText(t *testing.T, text string) *Pipeline {
	t.Helper()
	var arr bson.A
	if err := bson.UnmarshalExtJSON([]byte(`{"p": `+text+`}`), false, &struct{ P *bson.A }{&arr}); err != nil {
		t.Fatal(err)
	}
	stages := make([]bson.Raw, len(arr))
	for i, st := range arr {
		stages[i], _ = bson.Marshal(st)
	}
	p, err := Parse(stages, Options{DB: "test", Coll: "c", Env: newMemEnv()})
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return p
}

// A leading $text match asks the scan for scores when a stage reads them
// before the first that rebuilds its documents (MongoDB's
// Pipeline::getDependencies; optimize_text.js: otherwise no TEXT_OR).
func TestTakePushdownTextScores(t *testing.T) {
	for _, tc := range []struct {
		pipeline string
		want     bool
	}{
		{`[{"$match": {"$text": {"$search": "a"}}}]`, false},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$project": {"s": {"$meta": "textScore"}}}]`, true},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$limit": 1}, {"$addFields": {"s": {"$meta": "textScore"}}}]`, true},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$group": {"_id": null, "s": {"$sum": {"$meta": "textScore"}}}}]`, true},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$group": {"_id": "$x"}}, {"$project": {"s": {"$meta": "textScore"}}}]`, false},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$facet": {"f": [{"$project": {"s": {"$meta": "textScore"}}}]}}]`, true},
		{`[{"$match": {"$text": {"$search": "a"}}}, {"$unionWith": {"coll": "d", "pipeline": [{"$match": {"$text": {"$search": "b"}}}, {"$project": {"s": {"$meta": "textScore"}}}]}}]`, false},
		{`[{"$match": {"x": 1}}, {"$group": {"_id": null}}, {"$project": {"s": {"$meta": "textScore"}}}]`, false},
	} {
		if got := parsePipelineText(t, tc.pipeline).TakePushdown().TextScores; got != tc.want {
			t.Errorf("%s: TextScores %v, want %v", tc.pipeline, got, tc.want)
		}
	}
}

// TestStageCorpora runs the corpora of the stages of issue 19, one file
// per stage.
func TestStageCorpora(t *testing.T) {
	for _, file := range []string{"graphlookup", "redact", "window", "densify", "fill"} {
		path := "testdata/" + file + ".jsonl"
		if _, err := os.Stat(path); err != nil {
			continue
		}
		for _, c := range loadCases(t, path) {
			t.Run(file+"/"+c.Name, func(t *testing.T) { checkCase(t, c) })
		}
	}
}

// killAtEnd is a source that kills its operation once its documents are
// read.
type killAtEnd struct {
	SliceSource
	kill context.CancelCauseFunc
}

func (s *killAtEnd) Next() (bson.Raw, error) {
	doc, err := s.SliceSource.Next()
	if doc == nil && err == nil {
		s.kill(mongoerr.New(mongoerr.Interrupted, "operation was interrupted"))
	}
	return doc, err
}

// TestWindowInterrupted checks that $setWindowFields stops once the
// operation is killed, both while it reads its sorted input back and
// while its functions compute a partition, which runs after the input
// ended: each function's loop must notice the kill itself.
func TestWindowInterrupted(t *testing.T) {
	var docs []bson.Raw
	for i := range 2000 {
		doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "t", Value: i}, {Key: "v", Value: i % 7}})
		docs = append(docs, doc)
	}
	outputs := []string{
		`{"s": {"$sum": "$v", "window": {"documents": [-500, 500]}}}`,
		`{"s": {"$sum": "$v", "window": {"range": [-500, 500]}}}`,
		`{"s": {"$push": "$v"}}`,
		`{"s": {"$covariancePop": ["$t", "$v"], "window": {"documents": [-500, 500]}}}`,
		`{"s": {"$integral": {"input": "$v"}, "window": {"documents": [-500, 500]}}}`,
		`{"s": {"$derivative": {"input": "$v"}, "window": {"documents": [-5, 5]}}}`,
		`{"s": {"$rank": {}}}`,
		`{"s": {"$shift": {"output": "$v", "by": 1}}}`,
		`{"s": {"$expMovingAvg": {"input": "$v", "N": 3}}}`,
		`{"s": {"$locf": "$v"}}`,
		`{"s": {"$linearFill": "$v"}}`,
	}
	for _, out := range outputs {
		spec := `{"$setWindowFields": {"sortBy": {"t": 1}, "output": ` + out + `}}`
		ctx, kill := context.WithCancelCause(context.Background())
		p, err := Parse(parseStages(t, "["+spec+"]"), Options{DB: "test", Coll: "c", Env: newMemEnv(), Ctx: ctx})
		if err != nil {
			t.Fatal(err)
		}
		s := p.stages[0].(*windowStage)
		src := s.run(&killAtEnd{SliceSource{Docs: slices.Clone(docs)}, kill}, p.rt)
		if _, err := src.Next(); !mongoerr.Is(err, mongoerr.Interrupted) {
			t.Errorf("%s, reading its sorted input: %v; want Interrupted", out, err)
		}
		part := newDocBuffer(p.rt, p.rt.holdAccount(), "$setWindowFields")
		for _, d := range docs {
			if err := part.add(d, docsrc.Meta{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.compute(part, p.rt, p.rt.holdAccount(), func(int64) error { return p.rt.refused("$setWindowFields") }); !mongoerr.Is(err, mongoerr.Interrupted) {
			t.Errorf("%s, computing: %v; want Interrupted", out, err)
		}
	}
}

// TestBucketAutoInterruptedAfterInput checks that $bucketAuto's passes over
// its sorted documents, which run after its input ends, stop once the
// operation is killed.
func TestBucketAutoInterruptedAfterInput(t *testing.T) {
	var docs []bson.Raw
	for i := range 100 {
		doc, _ := bson.Marshal(bson.D{{Key: "_id", Value: i}, {Key: "v", Value: i % 7}})
		docs = append(docs, doc)
	}
	for _, spec := range []string{
		`{"$bucketAuto": {"groupBy": "$v", "buckets": 3}}`,
		`{"$bucketAuto": {"groupBy": "$v", "buckets": 3, "granularity": "R5"}}`,
	} {
		ctx, kill := context.WithCancelCause(context.Background())
		p, err := Parse(parseStages(t, "["+spec+"]"), Options{DB: "test", Coll: "c", Env: newMemEnv(), Ctx: ctx})
		if err != nil {
			t.Fatal(err)
		}
		out, err := p.stages[0].(*bucketAutoStage).compute(&killAtEnd{SliceSource{Docs: slices.Clone(docs)}, kill}, p.rt)
		if !mongoerr.Is(err, mongoerr.Interrupted) {
			t.Errorf("%s: %d documents, %v; want Interrupted", spec, len(out), err)
		}
		kill(nil)
	}
}
