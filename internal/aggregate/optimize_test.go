package aggregate

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/querygen"
)

var moveSeed = flag.Uint64("moveseed", 0, "run TestMoveMatchesDifferential on this seed (a failure names it)")

// TestMoveMatchesDifferential: a pipeline whose $match stages moveMatches
// brings forward gives what its stages give run one after the other as
// written, each parsed alone (where nothing can move), on random documents
// and random pipelines of $match, $addFields, $project, $unset, $unwind,
// $sort, $lookup and $limit over the generator's paths.
func TestMoveMatchesDifferential(t *testing.T) {
	seed := *moveSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d", seed)
	g := querygen.New(seed)
	r := rand.New(rand.NewPCG(seed, 1))
	env := newMemEnv()
	var docs, others []bson.Raw
	for i := range 60 {
		docs = append(docs, mustMarshal(g.Doc(int32(i))))
		others = append(others, mustMarshal(bson.D{{Key: "_id", Value: i}, {Key: "k", Value: g.Scalar()}}))
	}
	env.colls["test.other"] = others
	path := func() string { return querygen.Paths[r.IntN(len(querygen.Paths))] }
	stageOf := func() bson.D {
		switch r.IntN(9) {
		case 8:
			return bson.D{{Key: "$limit", Value: 1 + r.IntN(30)}}
		case 0, 1:
			return bson.D{{Key: "$match", Value: g.Filter()}}
		case 2:
			var v any = g.Scalar()
			if r.IntN(2) == 0 {
				v = "$" + path()
			}
			var value any = bson.D{{Key: "$literal", Value: v}}
			if r.IntN(2) == 0 {
				// a rename ({z: "$a"}), or a computed field that is not one
				value = []string{"$", "$$CURRENT.", "$$ROOT."}[r.IntN(3)] + path()
			}
			return bson.D{{Key: []string{"$addFields", "$set"}[r.IntN(2)], Value: bson.D{{Key: path(), Value: value}}}}
		case 3:
			spec := bson.D{{Key: path(), Value: 1}}
			if r.IntN(3) == 0 {
				// a rename, or a computed field that is not one
				spec = bson.D{{Key: path(), Value: "$" + path()}}
			}
			switch r.IntN(3) {
			case 0:
				spec = bson.D{{Key: path(), Value: 0}}
			case 1:
				spec = append(spec, bson.E{Key: "_id", Value: 0})
			}
			return bson.D{{Key: "$project", Value: spec}}
		case 4:
			return bson.D{{Key: "$unset", Value: path()}}
		case 5:
			spec := bson.D{{Key: "path", Value: "$" + path()}, {Key: "preserveNullAndEmptyArrays", Value: r.IntN(2) == 0}}
			if r.IntN(3) == 0 {
				spec = append(spec, bson.E{Key: "includeArrayIndex", Value: path()})
			}
			return bson.D{{Key: "$unwind", Value: spec}}
		case 6:
			return bson.D{{Key: "$sort", Value: bson.D{{Key: path(), Value: []int32{1, -1}[r.IntN(2)]}}}}
		}
		return bson.D{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "other"}, {Key: "localField", Value: path()}, {Key: "foreignField", Value: "k"}, {Key: "as", Value: path()}}}}
	}
	run := func(stages []bson.Raw, in []bson.Raw) ([]bson.Raw, error) {
		p, err := Parse(stages, Options{DB: "test", Coll: "c", Env: env})
		if err != nil {
			return nil, err
		}
		return drain(p.Run(&SliceSource{Docs: in}))
	}
	compared := 0
	for range 3000 {
		var stages []bson.Raw
		for range 2 + r.IntN(4) {
			stages = append(stages, mustMarshal(stageOf()))
		}
		// the oracle: each stage alone, in the order written
		want, wantErr := docs, error(nil)
		for _, s := range stages {
			if want, wantErr = run([]bson.Raw{s}, want); wantErr != nil {
				break
			}
		}
		got, err := run(stages, docs)
		switch {
		case wantErr != nil:
			continue // a stage refused (a path collision) or failed
		case err != nil:
			t.Fatalf("%v: %v; each stage alone gives %d documents", stages, err, len(want))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%v:\n got %v\nwant %v", stages, got, want)
		}
		compared++
	}
	if compared < 1000 {
		t.Fatalf("only %d pipelines compared", compared)
	}
}

// drain reads every document of src.
func drain(src Source) ([]bson.Raw, error) {
	defer src.Close()
	var out []bson.Raw
	for {
		d, err := src.Next()
		if err != nil || d == nil {
			return out, err
		}
		out = append(out, d)
	}
}

// TestMoveMatchesStages: a condition on a field a projection computes as
// a bare path of a top-level field goes before it on that field, as
// MongoDB swaps a $match past a rename (match_swapping_renamed_fields.js);
// a dotted source is no rename. An $expr goes before a stage when it reads
// only fields the stage leaves alone.
func TestMoveMatchesStages(t *testing.T) {
	for _, tc := range []struct{ pipeline, want string }{
		{`[{"$project": {"_id": 0, "z": "$a", "c": 1}}, {"$match": {"z": {"$gt": 1}}}]`,
			`[{"$match": {"a": {"$gt": 1}}}, {"$project": {"_id": 0, "z": "$a", "c": 1}}]`},
		{`[{"$addFields": {"z": "$$CURRENT.a"}}, {"$match": {"z.b": 1, "w": 2}}]`,
			`[{"$match": {"a.b": 1, "w": 2}}, {"$addFields": {"z": "$$CURRENT.a"}}]`},
		{`[{"$project": {"x": "$x", "y": "$x"}}, {"$match": {"y": 1, "w": 1}}]`,
			`[{"$match": {"x": 1}}, {"$project": {"x": "$x", "y": "$x"}}, {"$match": {"w": 1}}]`},
		{`[{"$set": {"z": "$a"}}, {"$match": {"$or": [{"z": 1, "a": 2}, {"c": 3}]}}]`,
			`[{"$match": {"$or": [{"$and": [{"a": 1}, {"a": 2}]}, {"c": 3}]}}, {"$set": {"z": "$a"}}]`},
		{`[{"$project": {"f": "$$ROOT.e"}}, {"$match": {"f": 1}}]`,
			`[{"$match": {"e": 1}}, {"$project": {"f": "$$ROOT.e"}}]`},
		{`[{"$project": {"z": "$a.b"}}, {"$match": {"z": 1}}]`,
			`[{"$project": {"z": "$a.b"}}, {"$match": {"z": 1}}]`},
		{`[{"$project": {"z": {"$add": ["$a", 1]}}}, {"$match": {"z": 1}}]`,
			`[{"$project": {"z": {"$add": ["$a", 1]}}}, {"$match": {"z": 1}}]`},
		// a clause of a top-level $and that stays is a condition of its own
		{`[{"$addFields": {"x": 1}}, {"$match": {"$and": [{"a": 5}, {"x": 1}, {"x": {"$ne": 2}}]}}]`,
			`[{"$match": {"a": 5}}, {"$addFields": {"x": 1}}, {"$match": {"$and": [{"x": 1}, {"x": {"$ne": 2}}]}}]`},
		{`[{"$addFields": {"x": 1}}, {"$match": {"$and": [{"a": 5}, {"x": 1}]}}]`,
			`[{"$match": {"a": 5}}, {"$addFields": {"x": 1}}, {"$match": {"x": 1}}]`},
		// an $expr moves when it reads only fields the stage leaves alone
		{`[{"$addFields": {"c": 1}}, {"$match": {"$expr": {"$eq": ["$a.b", 1]}}}]`,
			`[{"$match": {"$expr": {"$eq": ["$a.b", 1]}}}, {"$addFields": {"c": 1}}]`},
		{`[{"$addFields": {"c": 1}}, {"$match": {"a": 1, "$expr": {"$eq": ["$c", 1]}}}]`,
			`[{"$match": {"a": 1}}, {"$addFields": {"c": 1}}, {"$match": {"$expr": {"$eq": ["$c", 1]}}}]`},
		{`[{"$unwind": "$u"}, {"$match": {"$or": [{"$expr": {"$eq": ["$$ROOT.b", 1]}}, {"c": 2}]}}]`,
			`[{"$match": {"$or": [{"$expr": {"$eq": ["$$ROOT.b", 1]}}, {"c": 2}]}}, {"$unwind": "$u"}]`},
		{`[{"$addFields": {"a": 1}}, {"$match": {"$expr": {"$let": {"vars": {"CURRENT": "$$ROOT.x"}, "in": {"$eq": ["$a", 1]}}}}}]`,
			`[{"$match": {"$expr": {"$let": {"vars": {"CURRENT": "$$ROOT.x"}, "in": {"$eq": ["$a", 1]}}}}}, {"$addFields": {"a": 1}}]`},
		// one reading the whole document stays (do_not_push_match_past_project.js)
		{`[{"$project": {"b": 1}}, {"$match": {"$expr": {"$getField": {"$literal": "a"}}}}]`,
			`[{"$project": {"b": 1}}, {"$match": {"$expr": {"$getField": {"$literal": "a"}}}}]`},
		{`[{"$unwind": "$u"}, {"$match": {"$expr": {"$eq": [{"$size": {"$objectToArray": "$$ROOT"}}, 2]}}}]`,
			`[{"$unwind": "$u"}, {"$match": {"$expr": {"$eq": [{"$size": {"$objectToArray": "$$ROOT"}}, 2]}}}]`},
		{`[{"$addFields": {"a": 1}}, {"$match": {"$expr": {"$let": {"vars": {"CURRENT": "$$ROOT"}, "in": {"$eq": ["$b", 1]}}}}}]`,
			`[{"$addFields": {"a": 1}}, {"$match": {"$expr": {"$let": {"vars": {"CURRENT": "$$ROOT"}, "in": {"$eq": ["$b", 1]}}}}}]`},
	} {
		stages, want := pipelineDocs(t, tc.pipeline), pipelineDocs(t, tc.want)
		p, err := Parse(stages, Options{DB: "test", Coll: "c", Env: newMemEnv()})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Stages(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.pipeline, got, want)
		}
	}
}

// pipelineDocs are the stage documents of a pipeline written in extended
// JSON.
func pipelineDocs(t *testing.T, text string) []bson.Raw {
	var arr bson.A
	if err := bson.UnmarshalExtJSON([]byte(`{"p": `+text+`}`), false, &struct{ P *bson.A }{&arr}); err != nil {
		t.Fatal(err)
	}
	out := make([]bson.Raw, len(arr))
	for i, st := range arr {
		out[i], _ = bson.Marshal(st)
	}
	return out
}
