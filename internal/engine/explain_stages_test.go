package engine

import (
	"fmt"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/querygen"
)

// TestExplainStagesDifferential checks, on random data sets under random
// indexes, that the per-stage statistics of every random find's explain
// (a $or among them, for index unions) agree with the find itself and
// with the explain's totals: the root returns what the find returns; the
// stages' keysExamined and docsExamined sum to totalKeysExamined and
// totalDocsExamined; and each stage's figures agree with its input's
// (checkStageTree).
func TestExplainStagesDifferential(t *testing.T) {
	e := newTestEngine(t)
	sets := 20
	if testing.Short() {
		sets = 4
	}
	measured, unions, counts, writes, distincts := 0, 0, 0, 0, 0
	for _, seed := range diffSeeds(sets) {
		g := querygen.New(seed)
		coll := fmt.Sprintf("xs%d", datasetCount.Add(1))
		if err := e.CreateCollection("test", coll, CollectionOptions{}); err != nil {
			t.Fatal(err)
		}
		specs := g.Indexes()
		for _, spec := range specs {
			if _, err := e.CreateIndexes("test", coll, []IndexSpec{genIndexSpec(spec)}, nil); err != nil {
				t.Fatalf("seed %d: index %v: %v", seed, spec.Key, err)
			}
		}
		for i := range 20 + g.Intn(60) {
			e.Insert("test", coll, []bson.Raw{bsonDoc(g.Doc(int32(i)))}, true, WriteOptions{})
		}
		for range 60 {
			q := g.Query()
			if g.Intn(4) == 0 {
				q = g.OrFilter()
			}
			o := FindOptions{Filter: bsonDoc(q)}
			if s := g.Sort(); len(s) > 0 {
				o.Sort = bsonDoc(s)
			}
			if p := g.Projection(); len(p) > 0 {
				o.Projection = bsonDoc(p)
			}
			if g.Intn(2) == 0 {
				o.Skip = int64(g.Intn(5))
			}
			if g.Intn(2) == 0 {
				o.Limit = int64(1 + g.Intn(10))
			}
			cur, err := e.Find("test", coll, o)
			if err != nil {
				continue // a query the generator made invalid
			}
			var n int64
			for {
				doc, err := cur.Next()
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if doc == nil {
					break
				}
				n++
			}
			cur.Close()
			out, err := e.Explain("test", coll, o, ExecutionStats)
			if err != nil {
				t.Fatalf("seed %d: explain %s: %v", seed, o.Filter, err)
			}
			es := lookupD(out, "executionStats").(bson.D)
			root := lookupD(es, "executionStages").(bson.D)
			if lookupD(root, "works") == nil {
				continue // a plan whose stages are not measured
			}
			measured++
			if hasStage(root, "OR") {
				unions++
			}
			where := fmt.Sprintf("seed %d, filter %s sort %s proj %s skip %d limit %d:\n%v", seed, o.Filter, o.Sort, o.Projection, o.Skip, o.Limit, root)
			if got := num(lookupD(root, "nReturned")); got != n || num(lookupD(es, "nReturned")) != n {
				t.Fatalf("%s\nroot returns %d, the find %d", where, got, n)
			}
			keys, docs := checkStageTree(t, where, root)
			if keys != num(lookupD(es, "totalKeysExamined")) || docs != num(lookupD(es, "totalDocsExamined")) {
				t.Fatalf("%s\nstages examine %d keys, %d documents; totals %v, %v", where, keys, docs, lookupD(es, "totalKeysExamined"), lookupD(es, "totalDocsExamined"))
			}
			if g.Intn(2) == 0 {
				counts += checkCountStages(t, e, coll, FindOptions{Filter: o.Filter, Skip: o.Skip, Limit: o.Limit})
			}
			if g.Intn(3) == 0 {
				writes += checkWriteStages(t, e, coll, o.Filter, g.Intn(2) == 0, g.Intn(2) == 0)
			}
			if key := specs[g.Intn(len(specs))].Key[0].Key; g.Intn(3) == 0 && key != "$**" {
				filter := o.Filter
				if g.Intn(2) == 0 {
					filter = bsonDoc(g.IndexFilter(bson.D{{Key: key, Value: 1}}))
				}
				distincts += checkDistinctStages(t, e, coll, key, filter)
			}
		}
	}
	t.Logf("%d explains with measured stages, %d with an index union, %d of counts, %d of writes, %d of distinct scans", measured, unions, counts, writes, distincts)
	if *diffSeed == 0 && (measured == 0 || unions == 0 || counts == 0 || writes == 0 || distincts == 0 && !testing.Short()) {
		t.Fatal("no explain had measured stages, or none an index union, a count, a write or a distinct scan")
	}
}

// checkCountStages checks the explain of the count o of coll against the
// count itself (nCounted; the COUNT's input returns the documents it
// skipped and counted) and its stages' figures against each other and
// its totals (checkStageTree); it returns 1 when the stages were
// measured.
func checkCountStages(t *testing.T, e *Engine, coll string, o FindOptions) int {
	t.Helper()
	n, err := e.Count("test", coll, o)
	if err != nil {
		return 0
	}
	out, err := e.ExplainCount("test", coll, o, ExecutionStats)
	if err != nil {
		t.Fatalf("explain count %s: %v", o.Filter, err)
	}
	es := lookupD(out, "executionStats").(bson.D)
	root := lookupD(es, "executionStages").(bson.D)
	where := fmt.Sprintf("count %s skip %d limit %d:\n%v", o.Filter, o.Skip, o.Limit, root)
	in := lookupD(root, "inputStage").(bson.D)
	if num(lookupD(root, "nCounted")) != n {
		t.Fatalf("%s\nnCounted %v, the count %d", where, lookupD(root, "nCounted"), n)
	}
	if lookupD(root, "works") == nil {
		return 0
	}
	if num(lookupD(root, "nSkipped")) != min(o.Skip, num(lookupD(in, "advanced"))) {
		t.Fatalf("%s\nnSkipped %v", where, lookupD(root, "nSkipped"))
	}
	if num(lookupD(root, "nCounted"))+num(lookupD(root, "nSkipped")) != num(lookupD(in, "advanced")) || num(lookupD(es, "nReturned")) != 0 {
		t.Fatalf("%s\nthe COUNT's input returns %v", where, lookupD(in, "advanced"))
	}
	keys, docs := checkStageTree(t, where, root)
	if keys != num(lookupD(es, "totalKeysExamined")) || docs != num(lookupD(es, "totalDocsExamined")) {
		t.Fatalf("%s\nstages examine %d keys, %d documents; totals %v, %v", where, keys, docs, lookupD(es, "totalKeysExamined"), lookupD(es, "totalDocsExamined"))
	}
	return 1
}

// checkWriteStages checks the explain of an update (or a delete) of the
// documents of coll matching filter (multi: all, else the first) against
// the count of those documents (nMatched, nWouldDelete) and its stages'
// figures against each other and its totals (checkStageTree); it returns
// 1 when the stages were measured.
func checkWriteStages(t *testing.T, e *Engine, coll string, filter bson.Raw, multi, del bool) int {
	t.Helper()
	n, err := e.Count("test", coll, FindOptions{Filter: filter})
	if err != nil {
		return 0
	}
	if !multi {
		n = min(n, 1)
	}
	var out bson.D
	counted := "nMatched"
	if del {
		limit := 1
		if multi {
			limit = 0
		}
		counted = "nWouldDelete"
		out, err = e.ExplainDelete("test", coll, filter, limit, bson.RawValue{}, WriteOptions{}, ExecutionStats)
	} else {
		out, err = e.ExplainUpdate("test", coll, UpdateSpec{Filter: filter, Update: bsonDoc(bson.D{{Key: "$set", Value: bson.D{{Key: "zz", Value: int32(1)}}}}), Multi: multi}, ExecutionStats)
	}
	if err != nil {
		t.Fatalf("explain write %s: %v", filter, err)
	}
	es := lookupD(out, "executionStats").(bson.D)
	root := lookupD(es, "executionStages").(bson.D)
	where := fmt.Sprintf("write %s multi %v delete %v:\n%v", filter, multi, del, root)
	if num(lookupD(root, counted)) != n {
		t.Fatalf("%s\n%s %v, want %d", where, counted, lookupD(root, counted), n)
	}
	if lookupD(root, "works") == nil {
		return 0
	}
	keys, docs := checkStageTree(t, where, root)
	if keys != num(lookupD(es, "totalKeysExamined")) || docs != num(lookupD(es, "totalDocsExamined")) {
		t.Fatalf("%s\nstages examine %d keys, %d documents; totals %v, %v", where, keys, docs, lookupD(es, "totalKeysExamined"), lookupD(es, "totalDocsExamined"))
	}
	if in := lookupD(root, "inputStage").(bson.D); num(lookupD(in, "advanced")) < n {
		t.Fatalf("%s\nthe write's input returned fewer than its %d documents", where, n)
	}
	return 1
}

// checkDistinctStages checks the explain of a distinct on key of coll
// under filter, when it is a DISTINCT_SCAN: it returns one document per
// distinct value (nReturned), and its figures agree with each other and
// the keys examined (checkStageTree); it returns 1 when it was one.
func checkDistinctStages(t *testing.T, e *Engine, coll, key string, filter bson.Raw) int {
	t.Helper()
	vals, err := e.Distinct("test", coll, key, FindOptions{Filter: filter})
	if err != nil {
		return 0
	}
	out, err := e.ExplainDistinct("test", coll, key, FindOptions{Filter: filter}, ExecutionStats)
	if err != nil {
		t.Fatalf("explain distinct %s %s: %v", key, filter, err)
	}
	es := lookupD(out, "executionStats").(bson.D)
	root := lookupD(es, "executionStages").(bson.D)
	if !hasStage(root, "DISTINCT_SCAN") || lookupD(root, "works") == nil {
		return 0
	}
	where := fmt.Sprintf("distinct %s %s:\n%v", key, filter, root)
	if n := num(lookupD(es, "nReturned")); n != num(lookupD(root, "nReturned")) || n != int64(len(vals)) {
		t.Fatalf("%s\nnReturned %d, the root %v, %d values", where, n, lookupD(root, "nReturned"), len(vals))
	}
	// A value an entry lacks is read from its document, which no stage
	// counts (DISTINCT_SCAN shows no docsExamined).
	if keys, _ := checkStageTree(t, where, root); keys != num(lookupD(es, "totalKeysExamined")) {
		t.Fatalf("%s\nstages examine %d keys; total %v", where, keys, lookupD(es, "totalKeysExamined"))
	}
	return 1
}

// checkStageTree checks the figures of stage and of the stages below it,
// by the classic engine's work model, and returns the keys and documents
// they examined: every stage's works are its ADVANCEDs, NEED_TIMEs and
// its end (isEOF) when a work returned it, an IDHACK's end aside; FETCH, SKIP and the projections
// work once per work of their input, a LIMIT at most once more, a SORT
// once per input work and per result, a COUNT, UPDATE or DELETE once per
// work of its input and at most once more, returning nothing; each stage returns no more
// than its input; only a multikey IXSCAN tests for duplicates; an OR works once
// per work of its scans, tests each of their results (dupsTested) and
// returns those it does not drop.
func checkStageTree(t *testing.T, where string, stage bson.D) (keys, docs int64) {
	t.Helper()
	name := lookupD(stage, "stage").(string)
	works, adv, need, eof := num(lookupD(stage, "works")), num(lookupD(stage, "advanced")), num(lookupD(stage, "needTime")), num(lookupD(stage, "isEOF"))
	if num(lookupD(stage, "nReturned")) != adv || adv < 0 || need < 0 || eof < 0 || eof > 1 {
		t.Fatalf("%s\n%s: nReturned %v advanced %d needTime %d isEOF %d", where, name, lookupD(stage, "nReturned"), adv, need, eof)
	}
	// isEOF is the stage's state, not a counted work: a stage whose
	// input reached its end while returning its last result (an IDHACK)
	// is at its end though no work returned IS_EOF, when a LIMIT above it
	// stops asking (MongoDB's isEOF() asks its child).
	if name != "IDHACK" && works != adv+need+eof && (eof == 0 || works != adv+need) {
		t.Fatalf("%s\n%s: works %d, advanced %d + needTime %d + isEOF %d", where, name, works, adv, need, eof)
	}
	if name == "IXSCAN" {
		// Only a multikey scan tests for duplicates; each it drops is a
		// NEED_TIME.
		tested, dropped := num(lookupD(stage, "dupsTested")), num(lookupD(stage, "dupsDropped"))
		if mk, _ := lookupD(stage, "isMultiKey").(bool); mk && (tested != adv+dropped || dropped > need) || !mk && tested+dropped != 0 {
			t.Fatalf("%s\nIXSCAN dupsTested %d dupsDropped %d", where, tested, dropped)
		}
	}
	keys += num(lookupD(stage, "keysExamined"))
	docs += num(lookupD(stage, "docsExamined"))
	if scans, ok := lookupD(stage, "inputStages").(bson.A); ok {
		var cw, ca int64
		for _, s := range scans {
			k, d := checkStageTree(t, where, s.(bson.D))
			keys, docs = keys+k, docs+d
			cw, ca = cw+num(lookupD(s.(bson.D), "works")), ca+num(lookupD(s.(bson.D), "advanced"))
		}
		tested, dropped := num(lookupD(stage, "dupsTested")), num(lookupD(stage, "dupsDropped"))
		if name != "OR" || works != cw || tested != ca || adv != tested-dropped || dropped > need {
			t.Fatalf("%s\n%s works %d advanced %d dupsTested %d dupsDropped %d over works %d advanced %d", where, name, works, adv, tested, dropped, cw, ca)
		}
	}
	if in, ok := lookupD(stage, "inputStage").(bson.D); ok {
		k, d := checkStageTree(t, where, in)
		keys, docs = keys+k, docs+d
		cw, ca := num(lookupD(in, "works")), num(lookupD(in, "advanced"))
		ok := adv <= ca
		switch name {
		case "SORT":
			ok = ok && works == cw+adv+1
		case "COUNT", "UPDATE", "DELETE":
			// It returns nothing (a find and modify aside), and may end
			// without working its input again (its limit, its one
			// document).
			ok = adv == 0 && (works == cw || works == cw+1)
		case "LIMIT":
			ok = ok && (works == cw || works == cw+1)
		default:
			ok = ok && works == cw
		}
		if !ok {
			t.Fatalf("%s\n%s works %d advanced %d over works %d advanced %d", where, name, works, adv, cw, ca)
		}
	}
	return keys, docs
}

// hasStage reports whether tree has a stage called name.
func hasStage(tree bson.D, name string) bool {
	if lookupD(tree, "stage") == name {
		return true
	}
	if in, ok := lookupD(tree, "inputStage").(bson.D); ok && hasStage(in, name) {
		return true
	}
	scans, _ := lookupD(tree, "inputStages").(bson.A)
	for _, s := range scans {
		if hasStage(s.(bson.D), name) {
			return true
		}
	}
	return false
}

// num is an explain count (0 when absent).
func num(v any) int64 {
	n, _ := explainInt(v)
	return n
}
