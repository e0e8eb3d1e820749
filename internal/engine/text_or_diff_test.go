package engine

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/querygen"
)

// TestTextOrDifferential checks, on random data sets under random indexes
// and a text index, that a $text in a branch of an $or (the union of the
// text search and the other branches' index scans) finds what two
// separate queries find: the $text query alone and a collection scan of
// the other branches, each under the other conjuncts, as sets. The
// documents the search finds carry its scores, the others none; a union
// MongoDB cannot plan fails with NoQueryExecutionPlans only.
func TestTextOrDifferential(t *testing.T) {
	e := newTestEngine(t)
	planned := 0
	for _, seed := range diffSeeds(20) {
		planned += checkTextOrDataset(t, e, seed, 40)
		if t.Failed() {
			return
		}
	}
	if planned == 0 && *diffSeed == 0 {
		t.Fatal("no union with a $text branch was planned")
	}
	t.Logf("%d unions with a $text branch checked", planned)
}

// textOrWords are the words of the data sets' texts and searches.
var textOrWords = []string{"apple", "banana", "cherry", "date", "elder", "fig", "grape", "the", "and"}

// checkTextOrDataset builds the data set of seed and checks n random
// queries; it returns how many were planned.
func checkTextOrDataset(t *testing.T, e *Engine, seed uint64, n int) int {
	t.Helper()
	g := querygen.New(seed)
	coll := fmt.Sprintf("tor%d", datasetCount.Add(1))
	if err := e.CreateCollection("test", coll, CollectionOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, spec := range g.Indexes() {
		// Errors (a second wildcard index) leave the index out.
		e.CreateIndexes("test", coll, []IndexSpec{genIndexSpec(spec)}, nil)
	}
	mustCreateIndex(t, e, coll, `{"txt": "text"}`, false)
	words := func(k int) string {
		var w []string
		for range k {
			w = append(w, textOrWords[g.Intn(len(textOrWords))])
		}
		return strings.Join(w, " ")
	}
	for i := range 20 + g.Intn(60) {
		d := g.Doc(int32(i))
		if g.Intn(4) > 0 {
			d = append(d, bson.E{Key: "txt", Value: words(1 + g.Intn(4))})
		}
		e.Insert("test", coll, []bson.Raw{bsonDoc(d)}, true, WriteOptions{})
	}
	planned := 0
	for range n {
		search := words(1 + g.Intn(2))
		switch g.Intn(4) {
		case 0:
			search += " -" + textOrWords[g.Intn(len(textOrWords))]
		case 1:
			search += ` "` + words(2) + `"`
		}
		text := bson.D{{Key: "$text", Value: bson.D{{Key: "$search", Value: search}}}}
		textBranch := text
		if g.Intn(3) == 0 {
			textBranch = bson.D{{Key: "$and", Value: bson.A{text, g.Query()}}}
		}
		others := g.OrFilter()[0].Value.(bson.A)
		at := g.Intn(len(others) + 1)
		branches := append(append(append(bson.A{}, others[:at]...), textBranch), others[at:]...)
		if g.Intn(4) == 0 {
			// an $or among the branches, whose branches are the union's
			cut := g.Intn(len(branches))
			branches = append(branches[:cut:cut], bson.D{{Key: "$or", Value: branches[cut:]}})
		}
		var outer bson.A
		if g.Intn(3) == 0 {
			outer = bson.A{g.Query()}
		}
		and := func(f bson.D) bson.D { return bson.D{{Key: "$and", Value: append(append(bson.A{}, outer...), f)}} }
		filter := and(bson.D{{Key: "$or", Value: branches}})
		proj := bson.D{{Key: "_s", Value: bson.D{{Key: "$meta", Value: "textScore"}}}}
		got, err := textOrRun(e, coll, filter, proj, "")
		byText, terr := textOrRun(e, coll, and(textBranch), proj, "")
		byScan, serr := textOrRun(e, coll, and(bson.D{{Key: "$or", Value: others}}), nil, `{"$natural": 1}`)
		switch {
		case mongoerr.Is(err, mongoerr.NoQueryExecutionPlans):
			continue
		case err != nil || terr != nil || serr != nil:
			// A filter the generator made that fails (a comparison to
			// undefined, ...) fails alike each way.
			code := mongoerr.As(firstErr(terr, serr)).Code
			if err == nil || terr == nil && serr == nil || mongoerr.As(err).Code != code {
				t.Fatalf("data set seed %d (-diffseed=%d): %s: %v; text %v, scan %v", seed, seed, extJSON(filter), err, terr, serr)
			}
			continue
		}
		planned++
		want := map[string]float64{}
		for id := range byScan {
			want[id] = math.NaN() // no score
		}
		for id, s := range byText {
			want[id] = s
		}
		same := len(got) == len(want)
		for id, s := range got {
			w, ok := want[id]
			same = same && ok && (math.IsNaN(s) && math.IsNaN(w) || s == w)
		}
		if !same {
			t.Fatalf("data set seed %d (-diffseed=%d): %s\ngot (id: score) %v\nwant %v (text %v, scan %v)\nindexes %s\nplan %s",
				seed, seed, extJSON(filter), got, want, byText, byScan, indexList(e.Collection("test", coll)),
				explainWinning(e, coll, diffQuery{filter: filter, proj: proj}))
		}
	}
	return planned
}

// textOrRun runs a find and returns the _ids it found (Extended JSON)
// with the score each carries in _s (NaN for none).
func textOrRun(e *Engine, coll string, filter, proj bson.D, hint string) (map[string]float64, error) {
	o := FindOptions{Filter: bsonDoc(filter)}
	if proj != nil {
		o.Projection = bsonDoc(proj)
	}
	if hint != "" {
		var h bson.Raw
		if err := bson.UnmarshalExtJSON([]byte(`{"h": `+hint+`}`), false, &h); err != nil {
			return nil, err
		}
		o.Hint = h.Lookup("h")
	}
	cur, err := e.Find("test", coll, o)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	out := map[string]float64{}
	for {
		doc, err := cur.Next()
		if err != nil || doc == nil {
			return out, err
		}
		s := math.NaN()
		if v, err := doc.LookupErr("_s"); err == nil {
			s = v.Double()
		}
		out[doc.Lookup("_id").String()] = s
	}
}
