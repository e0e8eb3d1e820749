package aggregate

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// spillDocs are n documents in 300 groups g, half of whose first
// documents hold g as a double (so the _id kept is the one first seen),
// with numbers, strings, objects and a missing field here and there for
// the accumulators.
func spillDocs(n int) []bson.Raw {
	docs := make([]bson.Raw, n)
	for i := range n {
		var g any = int32(i % 300)
		if i%2 == 1 {
			g = float64(i % 300)
		}
		d := bson.D{{Key: "_id", Value: i}, {Key: "g", Value: g}, {Key: "v", Value: i % 97}, {Key: "s", Value: fmt.Sprintf("s%04d", (i*7919)%1000)}}
		if i%11 != 0 {
			d = append(d, bson.E{Key: "o", Value: bson.D{{Key: "a", Value: i % 5}, {Key: fmt.Sprintf("b%d", i%7), Value: i}}}, bson.E{Key: "m", Value: i % 13})
		}
		docs[i] = mustMarshal(d)
	}
	return docs
}

// parseStages reads a pipeline written as relaxed Extended JSON.
func parseStages(t *testing.T, pipeline string) []bson.Raw {
	t.Helper()
	var wrapped struct {
		P []bson.Raw `bson:"p"`
	}
	if err := bson.UnmarshalExtJSON([]byte(`{"p": `+pipeline+`}`), false, &wrapped); err != nil {
		t.Fatalf("%s: %v", pipeline, err)
	}
	return wrapped.P
}

// runSpill runs stages over docs with a memory limit (0: the default);
// it reports how many spill files existed after the first result and how
// many are left once the output is closed.
func runSpill(t *testing.T, stages []bson.Raw, docs []bson.Raw, limit int64, allowDiskUse bool) (out []bson.Raw, filesDuring, filesAfter int, err error) {
	t.Helper()
	dir := t.TempDir()
	p, err := Parse(stages, Options{DB: "test", Coll: "c", Env: newMemEnv(), MemoryLimit: limit, AllowDiskUse: allowDiskUse, TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	src := p.Run(&SliceSource{Docs: slices.Clone(docs)})
	count := func() int {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	for {
		d, err := src.Next()
		if err != nil || d == nil {
			src.Close()
			return out, filesDuring, count(), err
		}
		if out == nil {
			filesDuring = count()
		}
		out = append(out, d)
	}
}

// sameValue compares two values exactly, but doubles within a relative
// 1e-9: merging partial standard deviations rounds differently from one
// pass.
func sameValue(a, b bson.RawValue) bool {
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case bson.TypeDouble:
		x, y := a.Double(), b.Double()
		return x == y || math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
	case bson.TypeEmbeddedDocument, bson.TypeArray:
		fa, fb := fieldsOf(a.Value), fieldsOf(b.Value)
		if len(fa) != len(fb) {
			return false
		}
		for i := range fa {
			if fa[i].key != fb[i].key || !sameValue(fa[i].val, fb[i].val) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// TestGroupSpill runs grouping stages with every accumulator in memory and
// again with a memory limit small enough to spill many runs, and expects
// the same groups; the spill files exist while the output is read and are
// gone once it is closed.
func TestGroupSpill(t *testing.T) {
	docs := spillDocs(3000)
	for _, tc := range []struct {
		name     string
		pipeline string
		ordered  bool // the stage defines its output order
		// reads says the spill files are there while the output is read;
		// $bucketAuto removes them before (TestGroupMemoryLimit shows it
		// passes the limit), a $group as soon as its runs are merged (the
		// first of two), and $count's one group never spills.
		reads bool
	}{
		{name: "every accumulator", pipeline: `[{"$group": {"_id": "$g",
			"sum": {"$sum": "$v"}, "avg": {"$avg": "$v"}, "min": {"$min": "$s"}, "max": {"$max": "$m"},
			"first": {"$first": "$m"}, "last": {"$last": "$m"}, "push": {"$push": "$m"}, "set": {"$addToSet": "$o.a"},
			"count": {"$count": {}}, "merged": {"$mergeObjects": "$o"},
			"pop": {"$stdDevPop": "$v"}, "samp": {"$stdDevSamp": "$m"},
			"top": {"$top": {"output": "$_id", "sortBy": {"v": 1}}}, "bottom": {"$bottom": {"output": ["$_id", "$s"], "sortBy": {"m": -1}}},
			"topN": {"$topN": {"output": "$_id", "n": 3, "sortBy": {"v": -1}}}, "bottomN": {"$bottomN": {"output": "$m", "n": 4, "sortBy": {"s": 1}}},
			"firstN": {"$firstN": {"input": "$m", "n": 3}}, "lastN": {"$lastN": {"input": "$m", "n": {"$cond": [{"$gt": ["$_id", 100]}, 2, 5]}}},
			"maxN": {"$maxN": {"input": "$m", "n": 2}}, "minN": {"$minN": {"input": "$s", "n": 3}}}}]`, reads: true},
		{name: "group of groups", pipeline: `[{"$group": {"_id": {"g": "$g", "a": "$o.a"}, "n": {"$sum": 1}}}, {"$group": {"_id": "$_id.a", "groups": {"$sum": 1}, "n": {"$sum": "$n"}}}]`},
		{name: "sortByCount", pipeline: `[{"$sortByCount": "$v"}, {"$sort": {"count": -1, "_id": 1}}]`, ordered: true, reads: true},
		{name: "count", pipeline: `[{"$count": "total"}]`, ordered: true},
		{name: "bucket", pipeline: `[{"$bucket": {"groupBy": "$v", "boundaries": [0, 10, 20, 50, 90], "default": "other",
			"output": {"n": {"$sum": 1}, "ids": {"$push": "$_id"}, "last": {"$last": "$s"}}}}]`, ordered: true, reads: true},
		{name: "bucketAuto", pipeline: `[{"$bucketAuto": {"groupBy": "$m", "buckets": 5,
			"output": {"n": {"$sum": 1}, "ids": {"$push": "$_id"}, "top": {"$topN": {"output": "$_id", "n": 2, "sortBy": {"v": -1}}}}}}]`, ordered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stages := parseStages(t, tc.pipeline)
			want, _, _, err := runSpill(t, stages, docs, 0, false)
			if err != nil {
				t.Fatal(err)
			}
			got, during, after, err := runSpill(t, stages, docs, 4096, true)
			if err != nil {
				t.Fatal(err)
			}
			if tc.reads != (during > 0) {
				t.Errorf("%d spill files while reading the output", during)
			}
			if after != 0 {
				t.Errorf("%d spill files left after Close", after)
			}
			if !tc.ordered {
				byID := func(a, b bson.Raw) int {
					return strings.Compare(canonical(mustMarshal(bson.D{{Key: "k", Value: a.Lookup("_id")}})), canonical(mustMarshal(bson.D{{Key: "k", Value: b.Lookup("_id")}})))
				}
				slices.SortFunc(want, byID)
				slices.SortFunc(got, byID)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d documents spilled, %d in memory", len(got), len(want))
			}
			for i := range got {
				if !sameValue(docValue(got[i]), docValue(want[i])) {
					t.Fatalf("document %d:\nspilled   %s\nin memory %s", i, canonical(got[i]), canonical(want[i]))
				}
			}
		})
	}
}

// Without allowDiskUse a grouping stage past the limit fails as MongoDB
// does.
func TestGroupMemoryLimit(t *testing.T) {
	docs := spillDocs(3000)
	for _, tc := range []struct{ pipeline, what string }{
		{`[{"$group": {"_id": "$_id", "all": {"$push": "$$ROOT"}}}]`, "$group"},
		{`[{"$sortByCount": "$_id"}]`, "$group"},
		{`[{"$bucket": {"groupBy": "$v", "boundaries": [0, 100], "output": {"all": {"$push": "$$ROOT"}}}}]`, "$group"},
		{`[{"$bucketAuto": {"groupBy": "$v", "buckets": 3}}]`, "$bucketAuto"},
	} {
		_, _, after, err := runSpill(t, parseStages(t, tc.pipeline), docs, 4096, false)
		want := "Exceeded memory limit for " + tc.what + ", but didn't allow external sort. Pass allowDiskUse:true to opt in."
		if e := mongoerr.As(err); e == nil || e.Code != mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed || e.Msg != want {
			t.Errorf("%s: got %v, want code 292 %q", tc.pipeline, err, want)
		}
		if after != 0 {
			t.Errorf("%s: %d spill files left", tc.pipeline, after)
		}
	}
}

// TestSortSpill: $sort (and $sort + $limit, a top-k) with a memory limit
// small enough to spill many runs gives the in-memory order exactly, equal
// keys in arrival order as in MongoDB; without allowDiskUse it fails with
// 292, and no spill file outlives the output.
func TestSortSpill(t *testing.T) {
	docs := spillDocs(3000)
	for _, tc := range []struct {
		pipeline string
		spills   bool // a top-5 fits in 4 KiB
	}{
		{`[{"$sort": {"v": 1}}]`, true},
		{`[{"$sort": {"m": -1, "s": 1}}]`, true},
		{`[{"$sort": {"o.a": 1}}, {"$limit": 700}]`, true},
		{`[{"$sort": {"g": -1}}, {"$limit": 5}]`, false},
		// the $limit reaches the $sort over stages that pass each
		// document on as one, and over a $skip (the top 3+5)
		{`[{"$sort": {"g": -1}}, {"$project": {"g": 1, "v": 1}}, {"$limit": 5}]`, false},
		{`[{"$sort": {"g": -1}}, {"$skip": 3}, {"$set": {"x": 1}}, {"$unset": "m"}, {"$limit": 5}]`, false},
		// but not over a $match, which may drop documents (this one
		// reads the field the $addFields writes, so it stays there)
		{`[{"$sort": {"g": -1}}, {"$addFields": {"w": {"$add": ["$v", 0]}}}, {"$match": {"w": {"$gte": 0}}}, {"$limit": 5}]`, true},
		// a $match that moves before the $sort leaves the $limit to it
		{`[{"$sort": {"g": -1}}, {"$match": {"v": {"$gte": 0}}}, {"$limit": 5}]`, false},
	} {
		pipeline := tc.pipeline
		stages := parseStages(t, pipeline)
		want, _, _, err := runSpill(t, stages, docs, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		got, during, after, err := runSpill(t, stages, docs, 4096, true)
		if err != nil {
			t.Fatal(err)
		}
		if (during > 0) != tc.spills || after != 0 {
			t.Errorf("%s: %d spill files while reading, %d after Close", pipeline, during, after)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d documents spilled, %d in memory", pipeline, len(got), len(want))
		}
		for i := range got {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("%s: document %d:\nspilled   %s\nin memory %s", pipeline, i, got[i], want[i])
			}
		}
		for i := 1; i < len(got) && pipeline == `[{"$sort": {"v": 1}}]`; i++ {
			a, b := got[i-1], got[i]
			if a.Lookup("v").Int32() == b.Lookup("v").Int32() && a.Lookup("_id").Int32() > b.Lookup("_id").Int32() {
				t.Fatalf("equal keys out of arrival order: %s before %s", a, b)
			}
		}
		_, _, after, err = runSpill(t, stages, docs, 4096, false)
		if tc.spills && !mongoerr.Is(err, mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed) || !tc.spills && err != nil {
			t.Errorf("%s without allowDiskUse: %v, want code 292", pipeline, err)
		}
		if after != 0 {
			t.Errorf("%s: %d spill files left", pipeline, after)
		}
	}
}
