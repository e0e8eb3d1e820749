package driver_test

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// clockDependent reports whether a corpus case reads the clock, chance or
// the connection's user ($$USER_ROLES: none in the pure packages, the root
// user under FOLIO_TEST_AUTH), which the pure packages fix and a server
// does not, or runs JavaScript,
// which the pure packages do without and the test server has.
func clockDependent(text string) bool {
	for _, s := range []string{"$$NOW", "$$CLUSTER_TIME", "$$USER_ROLES", "$rand", "$sample", "$sampleRate", "$function", "$accumulator", "$where"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// canonicalDocs renders documents as canonical Extended JSON: types and
// field order count.
func canonicalDocs(t *testing.T, docs []bson.Raw) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		b, err := bson.MarshalExtJSON(d, true, false)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// TestExpressionCorpusThroughDriver runs the expression package's corpus
// through the driver: the case's document is stored, the expression is
// evaluated by $replaceWith {__r: expr} (the case's variables passed as the
// aggregate's let), and the value, type included, or the error code must be
// the one the case says MongoDB gives.
func TestExpressionCorpusThroughDriver(t *testing.T) {
	client, _ := startServer(t)
	coll := client.Database(testDB).Collection("ecorpus")
	ctx := context.Background()
	for name, text := range corpusLines(t, "../../internal/expr/testdata/*.jsonl") {
		if clockDependent(text) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var tc struct {
				Expr    bson.RawValue `bson:"expr"`
				Doc     bson.Raw      `bson:"doc"`
				Vars    bson.Raw      `bson:"vars"`
				Result  bson.RawValue `bson:"result"`
				Error   int           `bson:"error"`
				Missing bool          `bson:"missing"`
				Coll    *collationDoc `bson:"collation"`
			}
			if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
				t.Fatal(err)
			}
			if _, err := coll.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			doc := tc.Doc
			if doc == nil {
				doc = mustRaw(t, bson.D{})
			}
			if _, err := doc.LookupErr("_id"); err != nil {
				if strings.Contains(text, "$$ROOT") || strings.Contains(text, "$$CURRENT") {
					t.Skip("the stored document gains an _id the case's root does not have")
				}
				doc = mustRaw(t, append(bson.D{{Key: "_id", Value: 0}}, rawElems(t, doc)...))
			}
			if _, err := coll.InsertOne(ctx, doc); err != nil {
				t.Skipf("document not storable (%v)", err)
			}
			pipeline := bson.A{bson.D{{Key: "$replaceWith", Value: bson.D{{Key: "__r", Value: tc.Expr}}}}}
			opts := options.Aggregate()
			if tc.Vars != nil {
				opts.SetLet(tc.Vars)
			}
			if c := tc.Coll; c != nil {
				opts.SetCollation(c.options())
			}
			cur, err := coll.Aggregate(ctx, pipeline, opts)
			var out []bson.Raw
			if err == nil {
				err = cur.All(ctx, &out)
			}
			if tc.Error != 0 {
				if serverCode(err) != tc.Error {
					t.Fatalf("%s: got %v, want error %d", tc.Expr, err, tc.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.Expr, err)
			}
			if len(out) != 1 {
				t.Fatalf("%s: %d documents", tc.Expr, len(out))
			}
			got, gerr := out[0].LookupErr("__r")
			if tc.Missing {
				if gerr == nil {
					t.Fatalf("%s = %s, want missing", tc.Expr, got)
				}
				return
			}
			want := mustRaw(t, bson.D{{Key: "__r", Value: tc.Result}})
			if g, w := canonicalDocs(t, []bson.Raw{out[0]}), canonicalDocs(t, []bson.Raw{want}); g[0] != w[0] {
				t.Fatalf("%s = %s, want %s", tc.Expr, g[0], w[0])
			}
		})
	}
}

func rawElems(t *testing.T, d bson.Raw) bson.D {
	var out bson.D
	if err := bson.Unmarshal(d, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStageCorpusThroughDriver runs the aggregation package's stage
// corpora through the driver: the case's collections are stored in a
// fresh database, the pipeline runs with aggregate, and the output (and the
// collections a pipeline writes) or the error code must be MongoDB's.
// Cases that set a memory limit of their own stay in the pure package (the
// server's limit is MongoDB's 100 MiB). The pure package reads "c" in _id
// order, as the server's collection scan does.
func TestStageCorpusThroughDriver(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB) // the corpora's $out and $collStats name "test"
	ctx := context.Background()
	for name, text := range corpusLines(t, "../../internal/aggregate/testdata/*.jsonl") {
		if clockDependent(text) {
			continue
		}
		var tc struct {
			Docs           []bson.Raw            `bson:"docs"`
			Colls          map[string][]bson.Raw `bson:"colls"`
			UniqueIndexes  map[string][]bson.Raw `bson:"uniqueIndexes"`
			Pipeline       []bson.Raw            `bson:"pipeline"`
			Expected       []bson.Raw            `bson:"expected"`
			Error          int                   `bson:"error"`
			Unordered      bool                  `bson:"unordered"`
			Collectionless bool                  `bson:"collectionless"`
			Let            bson.Raw              `bson:"let"`
			After          map[string][]bson.Raw `bson:"after"`
			MemoryLimit    int64                 `bson:"memoryLimit"`
			MaxDensifyDocs int64                 `bson:"maxDensifyDocs"`
			MaxPushBytes   int64                 `bson:"maxPushBytes"`
			MaxAddToSet    int64                 `bson:"maxAddToSetBytes"`
			MaxTopN        int64                 `bson:"maxTopNBytes"`
			WindowMemory   int64                 `bson:"windowMemoryLimit"`
			DensifyMemory  int64                 `bson:"densifyMemoryLimit"`
			GroupMemory    int64                 `bson:"groupMemoryLimit"`
			AllowDiskUse   bool                  `bson:"allowDiskUse"`
			Collation      *collationDoc         `bson:"collation"`
			Views          []struct {
				Name     string     `bson:"name"`
				ViewOn   string     `bson:"viewOn"`
				Pipeline []bson.Raw `bson:"pipeline"`
			} `bson:"views"`
		}
		if err := bson.UnmarshalExtJSON([]byte(text), false, &tc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tc.MemoryLimit != 0 || tc.MaxDensifyDocs != 0 || tc.MaxPushBytes != 0 || tc.MaxAddToSet != 0 || tc.MaxTopN != 0 || tc.WindowMemory != 0 || tc.GroupMemory != 0 || tc.DensifyMemory != 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if err := db.Drop(ctx); err != nil {
				t.Fatal(err)
			}
			colls := map[string][]bson.Raw{"c": tc.Docs}
			for k, v := range tc.Colls {
				colls[k] = v
			}
			for k, docs := range colls {
				if err := db.CreateCollection(ctx, k); err != nil {
					t.Fatal(err)
				}
				if len(docs) == 0 {
					continue
				}
				if _, err := db.Collection(k).InsertMany(ctx, docs); err != nil {
					t.Fatal(err)
				}
			}
			for _, v := range tc.Views {
				pipeline := make(bson.A, len(v.Pipeline))
				for i, s := range v.Pipeline {
					pipeline[i] = s
				}
				if err := db.CreateView(ctx, v.Name, v.ViewOn, pipeline); err != nil {
					t.Fatal(err)
				}
			}
			for k, keys := range tc.UniqueIndexes {
				for _, key := range keys {
					if _, err := db.Collection(k).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: key, Options: options.Index().SetUnique(true)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			opts := options.Aggregate().SetAllowDiskUse(tc.AllowDiskUse)
			if tc.Let != nil {
				opts.SetLet(tc.Let)
			}
			if c := tc.Collation; c != nil {
				opts.SetCollation(c.options())
			}
			pipeline := make(bson.A, len(tc.Pipeline))
			for i, s := range tc.Pipeline {
				pipeline[i] = s
			}
			var out []bson.Raw
			var err error
			if tc.Collectionless {
				cur, aerr := db.Aggregate(ctx, pipeline, opts)
				if err = aerr; err == nil {
					err = cur.All(ctx, &out)
				}
			} else {
				cur, aerr := db.Collection("c").Aggregate(ctx, pipeline, opts)
				if err = aerr; err == nil {
					err = cur.All(ctx, &out)
				}
			}
			switch {
			case tc.Error != 0:
				if serverCode(err) != tc.Error {
					t.Fatalf("got %v, want error %d", err, tc.Error)
				}
			case err != nil:
				t.Fatal(err)
			default:
				sameDocs(t, "output", out, tc.Expected, tc.Unordered)
			}
			// what a pipeline wrote stays when it fails
			for k, want := range tc.After {
				sameDocs(t, "collection "+k, findAll(t, db.Collection(k), bson.D{}), want, false)
			}
		})
	}
}

// collationDoc reads a corpus case's collation document.
type collationDoc struct {
	Locale          string `bson:"locale"`
	Strength        int    `bson:"strength"`
	NumericOrdering bool   `bson:"numericOrdering"`
	Alternate       string `bson:"alternate"`
	Backwards       bool   `bson:"backwards"`
	Normalization   bool   `bson:"normalization"`
}

func (c *collationDoc) options() *options.Collation {
	return &options.Collation{Locale: c.Locale, Strength: c.Strength, NumericOrdering: c.NumericOrdering,
		Alternate: c.Alternate, Backwards: c.Backwards, Normalization: c.Normalization}
}

func sameDocs(t *testing.T, what string, got, want []bson.Raw, unordered bool) {
	t.Helper()
	g, w := canonicalDocs(t, got), canonicalDocs(t, want)
	if unordered {
		slices.Sort(g)
		slices.Sort(w)
	}
	if !slices.Equal(g, w) {
		t.Fatalf("%s mismatch\n got: %s\nwant: %s", what, strings.Join(g, "\n      "), strings.Join(w, "\n      "))
	}
}

// TestSampleRandomCursor: a leading $sample of under 5% of a collection of
// more than 100 documents reads a random cursor (MongoDB's plan); either
// way the sample is of distinct documents of the collection, and the
// stages after it run on it.
func TestSampleRandomCursor(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	coll := client.Database(testDB).Collection("sample")
	var docs []any
	for i := range 500 {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "even", Value: i%2 == 0}})
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		size     int
		pipeline bson.A
		want     int
	}{
		{10, nil, 10},   // random cursor
		{400, nil, 400}, // a full scan sampled
		{20, bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "even", Value: true}}}}, bson.D{{Key: "$count", Value: "n"}}}, -1},
	} {
		pipeline := append(bson.A{bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: tc.size}}}}}, tc.pipeline...)
		cur, err := coll.Aggregate(ctx, pipeline)
		if err != nil {
			t.Fatal(err)
		}
		var out []bson.Raw
		if err := cur.All(ctx, &out); err != nil {
			t.Fatal(err)
		}
		if tc.want < 0 {
			// $count of the even documents among 20: at most 20.
			if len(out) > 1 || (len(out) == 1 && out[0].Lookup("n").Int32() > 20) {
				t.Fatalf("$sample then $match/$count: %v", out)
			}
			continue
		}
		seen := map[int32]bool{}
		for _, d := range out {
			id := d.Lookup("_id").Int32()
			if id < 0 || id >= 500 || seen[id] {
				t.Fatalf("size %d: document %d repeated or foreign", tc.size, id)
			}
			seen[id] = true
		}
		if len(seen) != tc.want {
			t.Fatalf("size %d: %d documents", tc.size, len(seen))
		}
	}
}

// TestDensifyDocsLimitParameter: internalQueryMaxAllowedDensifyDocs bounds
// the documents one $densify generates, counted across its partitions,
// the documents read not counted (densify/generated_limit.js).
func TestDensifyDocsLimitParameter(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	admin := client.Database("admin")
	set := func(n int) {
		t.Helper()
		if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxAllowedDensifyDocs", Value: n}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		N int32 `bson:"internalQueryMaxAllowedDensifyDocs"`
	}
	if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: "internalQueryMaxAllowedDensifyDocs", Value: 1}}).Decode(&got); err != nil || got.N != 500000 {
		t.Fatalf("default: %d %v", got.N, err)
	}
	err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: "internalQueryMaxAllowedDensifyDocs", Value: 0}}).Err()
	requireCode(t, err, 2, "BadValue")
	coll := client.Database("densifylimit").Collection("c")
	densify := func(bounds any) error {
		cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$densify", Value: bson.D{{Key: "field", Value: "val"},
			{Key: "range", Value: bson.D{{Key: "step", Value: 1}, {Key: "bounds", Value: bounds}}}}}}})
		if err == nil {
			err = cur.All(ctx, &[]bson.Raw{})
		}
		return err
	}
	set(10)
	requireCode(t, densify(bson.A{0, 11}), 5897900, "Location5897900")
	if err := densify(bson.A{0, 10}); err != nil {
		t.Fatal(err)
	}
	coll.InsertMany(ctx, []any{bson.D{{Key: "val", Value: 0}}, bson.D{{Key: "val", Value: 12}}})
	requireCode(t, densify("full"), 5897900, "Location5897900")
	coll.InsertOne(ctx, bson.D{{Key: "val", Value: 5}})
	if err := densify("full"); err != nil {
		t.Fatal(err)
	}
	set(500000)
}

// TestAccumulatorBytesParameters: internalQueryMaxPushBytes,
// internalQueryMaxAddToSetBytes and internalQueryTopNAccumulatorBytes bound
// the memory one $push, $addToSet or N accumulator holds; past them the
// aggregate fails ExceededMemoryLimit (146), a $group's spilling
// notwithstanding (accumulator_push.cpp, accumulator_add_to_set.cpp,
// accumulator_multi.cpp). $addToSet counts its distinct values only, an N
// accumulator the values it keeps.
func TestAccumulatorBytesParameters(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	admin := client.Database("admin")
	for _, name := range []string{"internalQueryMaxPushBytes", "internalQueryMaxAddToSetBytes", "internalQueryTopNAccumulatorBytes"} {
		var got bson.Raw
		if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if v, ok := got.Lookup(name).Int32OK(); !ok || v != 100*1024*1024 {
			t.Fatalf("%s default: %v", name, got)
		}
		if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: 1000}}).Err(); err != nil {
			t.Fatal(err)
		}
		defer admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: 100 * 1024 * 1024}})
	}
	coll := client.Database("accbytes").Collection("c")
	for i := range 20 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: strings.Repeat("x", 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	group := func(acc bson.D) error {
		cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "a", Value: acc}}}}})
		if err == nil {
			err = cur.All(ctx, &[]bson.Raw{})
		}
		return err
	}
	requireCode(t, group(bson.D{{Key: "$push", Value: "$s"}}), 146, "ExceededMemoryLimit")
	requireCode(t, group(bson.D{{Key: "$addToSet", Value: bson.D{{Key: "$concat", Value: bson.A{"$s", bson.D{{Key: "$toString", Value: "$_id"}}}}}}}), 146, "ExceededMemoryLimit")
	if err := group(bson.D{{Key: "$addToSet", Value: "$s"}}); err != nil {
		t.Fatal(err)
	}
	if err := group(bson.D{{Key: "$push", Value: "$_id"}}); err != nil {
		t.Fatal(err)
	}
	requireCode(t, group(bson.D{{Key: "$firstN", Value: bson.D{{Key: "n", Value: 20}, {Key: "input", Value: "$s"}}}}), 146, "ExceededMemoryLimit")
	requireCode(t, group(bson.D{{Key: "$topN", Value: bson.D{{Key: "n", Value: 20}, {Key: "sortBy", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "output", Value: "$s"}}}}), 146, "ExceededMemoryLimit")
	if err := group(bson.D{{Key: "$lastN", Value: bson.D{{Key: "n", Value: 2}, {Key: "input", Value: "$s"}}}}); err != nil {
		t.Fatal(err)
	}
}

// TestSetWindowFieldsMemoryParameter: internalDocumentSourceSetWindowFieldsMaxMemoryBytes
// (a long, 100 MiB by default) bounds what a $setWindowFields holds; past
// it without allowDiskUse the aggregate fails with 5414201, with
// allowDiskUse the partition spills (memory_limit.js, spill_to_disk.js;
// DocumentSourceInternalSetWindowFields::doGetNext).
func TestSetWindowFieldsMemoryParameter(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	set := setMemoryParameter(t, client, "internalDocumentSourceSetWindowFieldsMaxMemoryBytes", 1200)
	coll := client.Database("windowmem").Collection("c")
	for i := range 10 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "partitionKey", Value: 1}, {Key: "largeStr", Value: strings.Repeat(",", 1024)}}); err != nil {
			t.Fatal(err)
		}
	}
	window := func(allowDiskUse bool) ([]bson.Raw, error) {
		stage := bson.D{{Key: "$setWindowFields", Value: bson.D{{Key: "sortBy", Value: bson.D{{Key: "partitionKey", Value: 1}}},
			{Key: "output", Value: bson.D{{Key: "val", Value: bson.D{{Key: "$sum", Value: "$_id"}}}}}}}}
		return aggregateResult(coll, bson.A{stage, bson.D{{Key: "$project", Value: bson.D{{Key: "val", Value: 1}}}}}, options.Aggregate().SetAllowDiskUse(allowDiskUse))
	}
	_, err := window(false)
	requireCode(t, err, 5414201, "Location5414201")
	out, err := window(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 10 || out[0].Lookup("val").Int32() != 45 {
		t.Fatalf("spilled window: %v", out)
	}
	set(3 * 1200 * 10)
	if _, err := window(false); err != nil {
		t.Fatal(err)
	}
}

// TestGroupMemoryParameter: internalDocumentSourceGroupMaxMemoryBytes (a
// long, 100 MiB by default) is what a $group holds before it spills; past
// it without allowDiskUse the aggregate fails with 292
// (DocumentSourceGroup's memory tracker).
func TestGroupMemoryParameter(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	set := setMemoryParameter(t, client, "internalDocumentSourceGroupMaxMemoryBytes", 1000)
	coll := client.Database("groupmem").Collection("c")
	for i := range 10 {
		if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: strings.Repeat(string(rune('a'+i)), 200)}}); err != nil {
			t.Fatal(err)
		}
	}
	group := func(allowDiskUse bool) ([]bson.Raw, error) {
		cur, err := coll.Aggregate(ctx, bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$s"}}}}}, options.Aggregate().SetAllowDiskUse(allowDiskUse))
		var out []bson.Raw
		if err == nil {
			err = cur.All(ctx, &out)
		}
		return out, err
	}
	_, err := group(false)
	requireCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	if out, err := group(true); err != nil || len(out) != 10 {
		t.Fatalf("spilled $group: %d groups, %v", len(out), err)
	}
	set(1 << 20)
	if _, err := group(false); err != nil {
		t.Fatal(err)
	}
}

// TestGroupMemoryCountsAccumulatorState: an $accumulator's state counts
// against the $group memory limit, as AccumulatorJs reports its state's
// size to DocumentSourceGroup's memory tracker after each call: groups of
// large JavaScript states fail with 292 without allowDiskUse and spill
// with it (jstests/aggregation/accumulators/accumulator_js_size_limits.js,
// "$group size limit exceeded, and cannot spill").
func TestGroupMemoryCountsAccumulatorState(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	setMemoryParameter(t, client, "internalDocumentSourceGroupMaxMemoryBytes", 20000)
	coll := client.Database("groupjsmem").Collection("c")
	docs := make([]any, 20)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	group := func(allowDiskUse bool) ([]bson.Raw, error) {
		acc := bson.D{{Key: "init", Value: "function() { return 'a'.repeat(2000); }"},
			{Key: "accumulate", Value: "function(s) { return s; }"}, {Key: "accumulateArgs", Value: bson.A{1}},
			{Key: "merge", Value: "function(a, b) { return a; }"}, {Key: "finalize", Value: "function(s) { return s.length; }"}, {Key: "lang", Value: "js"}}
		return aggregateResult(coll, bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$_id"}, {Key: "n", Value: bson.D{{Key: "$accumulator", Value: acc}}}}}}},
			options.Aggregate().SetAllowDiskUse(allowDiskUse))
	}
	_, err := group(false)
	requireCode(t, err, 292, "QueryExceededMemoryLimitNoDiskUseAllowed")
	out, err := group(true)
	if err != nil || len(out) != 20 {
		t.Fatalf("spilled $group: %d groups, %v", len(out), err)
	}
	for _, d := range out {
		if n, ok := d.Lookup("n").AsInt64OK(); !ok || n != 2000 {
			t.Fatalf("spilled $group: %s", d)
		}
	}
}

// TestDensifyMemoryParameter: internalDocumentSourceDensifyMaxMemoryBytes
// (a long, 100 MiB by default) bounds a $densify's partition table; past
// it the aggregate fails with 6007200, and documents without the field
// add no partition (densify/memory_limit.js; setPartitionValue).
func TestDensifyMemoryParameter(t *testing.T) {
	client, _ := startServer(t)
	ctx := context.Background()
	setMemoryParameter(t, client, "internalDocumentSourceDensifyMaxMemoryBytes", 1000)
	coll := client.Database("densifymem").Collection("c")
	long := strings.Repeat(",", 100)
	insert := func(field string) {
		if err := coll.Drop(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: field, Value: i}, {Key: "part", Value: long + strconv.Itoa(i)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	densify := func() error {
		stage := bson.D{{Key: "$densify", Value: bson.D{{Key: "field", Value: "val"}, {Key: "partitionByFields", Value: bson.A{"part"}},
			{Key: "range", Value: bson.D{{Key: "step", Value: 1}, {Key: "bounds", Value: "partition"}}}}}}
		cur, err := coll.Aggregate(ctx, bson.A{stage})
		if err == nil {
			var out []bson.Raw
			err = cur.All(ctx, &out)
		}
		return err
	}
	insert("val")
	requireCode(t, densify(), 6007200, "Location6007200")
	insert("otherVal")
	if err := densify(); err != nil {
		t.Fatal(err)
	}
}

// setMemoryParameter checks that the server parameter name is a long of
// 100 MiB by default, as MongoDB's stage memory limits are, sets it to n,
// and returns the function that sets it again; the default comes back when
// the test ends.
func setMemoryParameter(t *testing.T, client *mongo.Client, name string, n int64) func(int64) {
	t.Helper()
	ctx := context.Background()
	admin := client.Database("admin")
	var got bson.Raw
	if err := admin.RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if v, ok := got.Lookup(name).Int64OK(); !ok || v != 100*1024*1024 {
		t.Fatalf("%s default: %v", name, got)
	}
	set := func(n int64) {
		t.Helper()
		if err := admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: n}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	set(n)
	t.Cleanup(func() {
		admin.RunCommand(ctx, bson.D{{Key: "setParameter", Value: 1}, {Key: name, Value: int64(100 * 1024 * 1024)}})
	})
	return set
}

// TestExplainGroupFigures: at executionStats an explained $group lists,
// after its specification and before nReturned, the figures of its run as
// MongoDB's DocumentSourceGroupBase::serialize does: the most memory the
// accumulators of each output field held (maxAccumulatorMemoryUsageBytes),
// the size of the documents it returned (totalOutputDataSizeBytes), then
// usedDisk, spills, spilledDataStorageSize, numBytesSpilledEstimate and
// spilledRecords, all longs but usedDisk. At queryPlanner verbosity, and
// for the $bucket Folio explains as written, there are none.
func TestExplainGroupFigures(t *testing.T) {
	client, _ := startServer(t)
	ctx := t.Context()
	db := client.Database("groupfigures")
	coll := db.Collection("c")
	docs := make([]any, 300)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i % 3}, {Key: "s", Value: strings.Repeat("x", 50)}}
	}
	if _, err := coll.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	explain := func(pipeline bson.A, verbosity string, allowDiskUse bool) bson.Raw {
		t.Helper()
		cmd := bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}, {Key: "allowDiskUse", Value: allowDiskUse}}
		out, err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: verbosity}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		vals, _ := out.Lookup("stages").Array().Values()
		return vals[1].Document()
	}
	keys := func(d bson.Raw) []string {
		els, _ := d.Elements()
		var ks []string
		for _, e := range els {
			ks = append(ks, e.Key())
		}
		return ks
	}
	group := bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$k"}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}, {Key: "p", Value: bson.D{{Key: "$push", Value: "$s"}}}}}}}
	var outBytes int64
	for _, d := range aggregateAll(t, coll, group) {
		outBytes += int64(len(d))
	}
	want := []string{"$group", "maxAccumulatorMemoryUsageBytes", "totalOutputDataSizeBytes", "usedDisk", "spills",
		"spilledDataStorageSize", "numBytesSpilledEstimate", "spilledRecords", "nReturned", "executionTimeMillisEstimate"}
	st := explain(group, "executionStats", false)
	if got := keys(st); !slices.Equal(got, want) {
		t.Fatalf("$group stage fields %v, want %v", got, want)
	}
	mem := st.Lookup("maxAccumulatorMemoryUsageBytes").Document()
	if got := keys(mem); !slices.Equal(got, []string{"n", "p"}) {
		t.Fatalf("maxAccumulatorMemoryUsageBytes %s", mem)
	}
	// $push keeps its 300 values of 50 bytes and more
	if n, p := mem.Lookup("n").Int64(), mem.Lookup("p").Int64(); n <= 0 || p < 300*50 || p <= n {
		t.Fatalf("maxAccumulatorMemoryUsageBytes %s", mem)
	}
	if got := st.Lookup("totalOutputDataSizeBytes").Int64(); got != outBytes {
		t.Fatalf("totalOutputDataSizeBytes %d, the output is %d bytes", got, outBytes)
	}
	if st.Lookup("usedDisk").Boolean() || st.Lookup("spills").Int64() != 0 || st.Lookup("spilledDataStorageSize").Int64() != 0 ||
		st.Lookup("numBytesSpilledEstimate").Int64() != 0 || st.Lookup("spilledRecords").Int64() != 0 {
		t.Fatalf("an in-memory $group: %s", st)
	}
	if got := keys(explain(group, "queryPlanner", false)); !slices.Equal(got, []string{"$group"}) {
		t.Fatalf("queryPlanner $group stage fields %v", got)
	}
	bucket := bson.A{bson.D{{Key: "$bucket", Value: bson.D{{Key: "groupBy", Value: "$k"}, {Key: "boundaries", Value: bson.A{0, 5}}}}}}
	if got := keys(explain(bucket, "executionStats", false)); !slices.Equal(got, []string{"$bucket", "nReturned", "executionTimeMillisEstimate"}) {
		t.Fatalf("$bucket stage fields %v", got)
	}

	// one group per document, spilled every few groups
	setMemoryParameter(t, client, "internalDocumentSourceGroupMaxMemoryBytes", 20000)
	byID := bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$_id"}, {Key: "p", Value: bson.D{{Key: "$push", Value: "$s"}}}}}}}
	st = explain(byID, "executionStats", true)
	spills, records := st.Lookup("spills").Int64(), st.Lookup("spilledRecords").Int64()
	if !st.Lookup("usedDisk").Boolean() || spills < 2 || records < spills || records > 300 ||
		st.Lookup("spilledDataStorageSize").Int64() < records*50 || st.Lookup("numBytesSpilledEstimate").Int64() < records*50 {
		t.Fatalf("a spilled $group: %s", st)
	}
	if p := st.Lookup("maxAccumulatorMemoryUsageBytes", "p").Int64(); p <= 0 || p > 20000 {
		t.Fatalf("a spilled $group's accumulator peak: %s", st)
	}
}

// TestNotObjectRootMessages: a new root that is not a document fails with
// 40228 in the context of the stage that made it, as MongoDB words it:
// $replaceRoot's and $replaceWith's contexts end in a space before the
// template's own, and $documents' elements are held in _tempDocumentsField
// (ReplaceRootTransformation::applyTransformation,
// DocumentSourceDocuments::createFromBson); an argument of $documents that
// is not an array is its strict $unwind's 5858203.
func TestNotObjectRootMessages(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database(testDB)
	ctx := context.Background()
	coll := db.Collection("notobjroot")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	const prefix = "PlanExecutor error during aggregation :: caused by :: "
	run := func(db *mongo.Database, coll *mongo.Collection, pipeline bson.A) error {
		var cur *mongo.Cursor
		var err error
		if coll != nil {
			cur, err = coll.Aggregate(ctx, pipeline)
		} else {
			cur, err = db.Aggregate(ctx, pipeline)
		}
		if err != nil {
			return err
		}
		var out []bson.Raw
		return cur.All(ctx, &out)
	}
	requireError(t, run(db, coll, bson.A{bson.D{{Key: "$replaceRoot", Value: bson.D{{Key: "newRoot", Value: "$nope"}}}}}), 40228, "Location40228",
		prefix+"'newRoot' expression  must evaluate to an object, but resulting value was: MISSING. Type of resulting value: 'missing'. Input document: {_id: 1}")
	requireError(t, run(db, coll, bson.A{bson.D{{Key: "$replaceWith", Value: "$_id"}}}), 40228, "Location40228",
		prefix+"'replacement document'  must evaluate to an object, but resulting value was: 1. Type of resulting value: 'int'. Input document: {_id: 1}")
	requireError(t, run(db, nil, bson.A{bson.D{{Key: "$documents", Value: bson.A{bson.D{{Key: "a", Value: 1}}, "x"}}}}), 40228, "Location40228",
		prefix+"elements within the array passed to $documents must evaluate to an object, but resulting value was: \"x\". Type of resulting value: 'string'. Input document: {_tempDocumentsField: \"x\"}")
	requireError(t, run(db, nil, bson.A{bson.D{{Key: "$documents", Value: 5}}}), 5858203, "Location5858203",
		prefix+"an array is expected")
}

// TestExplainCountStages: explain shows $limit, $skip and $sample's size
// as longs, whatever number was written, and $unwind in its object form,
// as MongoDB 7.0 serializes them
// (jstests/aggregation/bugs/skip_limit_overflow.js).
func TestExplainCountStages(t *testing.T) {
	client, _ := startServer(t)
	db := client.Database("explaincounts")
	if _, err := db.Collection("c").InsertOne(t.Context(), bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	pipeline := bson.A{
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$a"}}}},
		bson.D{{Key: "$limit", Value: int32(6)}},
		bson.D{{Key: "$skip", Value: 2.0}},
		bson.D{{Key: "$sample", Value: bson.D{{Key: "size", Value: int32(3)}}}},
		bson.D{{Key: "$unwind", Value: "$x"}},
	}
	out, err := db.RunCommand(t.Context(), bson.D{{Key: "explain", Value: bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: pipeline}, {Key: "cursor", Value: bson.D{}}}},
		{Key: "verbosity", Value: "queryPlanner"}}).Raw()
	if err != nil {
		t.Fatal(err)
	}
	stages, _ := out.Lookup("stages").Array().Values()
	want := []bson.D{
		{{Key: "$limit", Value: int64(6)}},
		{{Key: "$skip", Value: int64(2)}},
		{{Key: "$sample", Value: bson.D{{Key: "size", Value: int64(3)}}}},
		{{Key: "$unwind", Value: bson.D{{Key: "path", Value: "$x"}}}},
	}
	if len(stages) != 2+len(want) {
		t.Fatalf("stages %v", stages)
	}
	for i, w := range want {
		wantRaw, _ := bson.Marshal(w)
		if got := stages[2+i].Document(); !bytes.Equal(got, wantRaw) {
			t.Errorf("stage %d: got %s, want %s", 2+i, got, bson.Raw(wantRaw))
		}
	}
}
