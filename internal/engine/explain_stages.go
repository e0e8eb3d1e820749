package engine

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/sorter"
)

// countedSource counts, for an explain's run alone, the candidates a
// plan's source hands up and whether it was read to its end. A find that
// is not explained reads its source directly. An index union it reads
// scan by scan itself, as unionSource.Next does, so that each scan's
// figures are its own (scans).
type countedSource struct {
	docSource
	handed int64
	eof    bool
	stats  *OpStats
	union  *unionSource
	// scans are what each scan of the plan did: the union's, in order,
	// or the plan's one scan (set when the run ends).
	scans []scanRun
}

// scanRun is what one scan did in an explain's run: the candidates it
// handed up, the keys it examined, whether it reached its end.
type scanRun struct {
	ps           *planSource // nil: a source of another kind
	handed, keys int64
	eof          bool
}

// countSource wraps src for an explain's run counting into stats.
func countSource(src docSource, stats *OpStats) *countedSource {
	c := &countedSource{docSource: src, stats: stats}
	if u, ok := src.(*unionSource); ok {
		c.union = u
		c.scans = make([]scanRun, len(u.srcs))
		for i, s := range u.srcs {
			s.own = map[string]struct{}{}
			c.scans[i].ps = s
			if s.it == nil && s.lastEntry != nil {
				// A point of a unique index read its key as it opened.
				c.scans[i].keys = 1
			}
		}
	}
	return c
}

func (c *countedSource) Next() (bson.Raw, error) {
	if c.union != nil {
		return c.nextOfUnion()
	}
	doc, err := c.docSource.Next()
	switch {
	case doc != nil:
		c.handed++
	case err == nil:
		c.eof = true
	}
	return doc, err
}

// nextOfUnion is unionSource.Next, noting each scan's figures and the
// record id of each document it yields (own).
func (c *countedSource) nextOfUnion() (bson.Raw, error) {
	u := c.union
	for u.i < len(u.srcs) {
		s, run := u.srcs[u.i], &c.scans[u.i]
		before := c.stats.KeysExamined
		doc, err := s.Next()
		run.keys += c.stats.KeysExamined - before
		if err != nil {
			return nil, err
		}
		if doc != nil {
			run.handed++
			c.handed++
			s.own[string(entryID(s.lastEntry))] = struct{}{}
			return doc, nil
		}
		run.eof = true
		u.i++
	}
	c.eof = true
	return nil, nil
}

// ended notes, once the run is over, the figures of a plan's one scan.
func (c *countedSource) ended() {
	if c.union != nil {
		return
	}
	ps, _ := c.docSource.(*planSource)
	c.scans = []scanRun{{ps: ps, handed: c.handed, keys: c.stats.KeysExamined, eof: c.eof}}
}

// Meta is the metadata of the source's last document.
func (c *countedSource) Meta() docsrc.Meta { return docsrc.MetaOf(c.docSource) }

// stageRun is what an explain's run of a find's plan measured, from which
// each stage's figures follow by the work model of MongoDB's classic
// engine (PlanStage::work): every call of a stage is a work and ends in
// ADVANCED, NEED_TIME or IS_EOF; a parent works its child once per work
// of its own (a blocking SORT's results aside); a stage is asked once
// past its last result unless a LIMIT above stopped first. Folio's
// stages run fused in one loop, never yield (needYield, saveState and
// restoreState are 0), and each stage's time is the run's.
type stageRun struct {
	stats *OpStats
	src   *countedSource
	// matched is the number of candidates that passed the filter.
	matched int64
	// sortBytes and spills are the blocking sort's data sorted and runs
	// spilled.
	sortBytes, spills int64
	millis            int64
	// stopped is set when the plan's consumer (a write of one document)
	// stopped reading after n results: the plan's top stage was not
	// asked past them.
	stopped bool
	n       int64
}

// runStages runs the find's plan p to its end for explain, as execute
// runs it, with its source counted: the documents it returned and what
// its stages did. visit, when set, takes each document and may stop the
// run (stopped). A run that fails once its plan is open returns, with
// its error, what it did until then (run non-nil, stopped).
func (e *Engine) runStages(c *Collection, q compiledFind, p *planner.Plan, o FindOptions, stats *OpStats, visit func(bson.Raw) (bool, error)) (n int64, run *stageRun, err error) {
	m, ordered, err := e.open(c, q, p, o, stats, nil)
	if err != nil {
		return 0, nil, err
	}
	run = &stageRun{stats: stats, src: countSource(m.scan.src, stats)}
	m.scan.src = run.src
	skip := m.skip
	// failed ends a run that failed after n results: its statistics so
	// far are what an explain reports beside the error (explainFailure).
	failed := func(err error) (int64, *stageRun, error) {
		run.n, run.matched, run.stopped = n, skip-m.skip+m.served, true
		return n, run, err
	}
	var cur Cursor = m
	var sorted *sorter.Sorter
	if !ordered {
		o.explaining = true
		if cur, err = sortAll(m, q.sort, o, e.SortMemoryLimit(), e.opts.TempDir); err != nil {
			return failed(err)
		}
		sorted = cur.(*sortedCursor).s
	}
	defer cur.Close()
	for {
		doc, err := cur.Next()
		if err != nil {
			return failed(err)
		}
		if doc == nil {
			break
		}
		n++
		if visit != nil {
			more, err := visit(doc)
			if err != nil {
				return failed(err)
			}
			if !more {
				run.stopped = true
				break
			}
		}
	}
	run.n = n
	if sorted != nil {
		run.matched, run.sortBytes, run.spills = sorted.Sorted(), sorted.DataSize(), int64(sorted.Spilled())
	} else {
		run.matched = skip - m.skip + m.served
	}
	return n, run, nil
}

// stageFigures are a stage's common statistics (CommonStats).
type stageFigures struct {
	works, advanced, needTime int64
	eof                       bool
}

// measuredStages lists the stages whose statistics an explain's run
// gives: a plan with another stage (TEXT, GEO, CLUSTERED_IXSCAN) keeps
// its tree without them. A count's COUNT is
// measured over them (countStages).
var measuredStages = []string{"COLLSCAN", "IXSCAN", "FETCH", "IDHACK", "SORT", "SKIP", "LIMIT", "OR", "COUNT_SCAN", "DISTINCT_SCAN",
	"PROJECTION_DEFAULT", "PROJECTION_COVERED", "PROJECTION_SIMPLE", "RETURN_KEY"}

// stagesMeasurable reports whether every stage of tree, the explain of
// p, is one whose statistics a run gives.
func stagesMeasurable(p *planner.Plan, tree bson.D) bool {
	for {
		name, _ := lookupD(tree, "stage").(string)
		if !slices.Contains(measuredStages, name) {
			return false
		}
		if scans, ok := lookupD(tree, "inputStages").(bson.A); ok {
			// An OR's scans, one per branch of the union.
			for i, s := range scans {
				if i >= len(p.Or) || !stagesMeasurable(p.Or[i], s.(bson.D)) {
					return false
				}
			}
			return true
		}
		in, ok := lookupD(tree, "inputStage").(bson.D)
		if !ok {
			return true
		}
		tree = in
	}
}

// explainInt is a number of an explain tree (explainCount's int or
// long); ok is false when v is neither.
func explainInt(v any) (n int64, ok bool) {
	switch v := v.(type) {
	case int32:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// lookupD is the value of key in d, nil when absent.
func lookupD(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

// annotate returns stage (a plan's explain tree, stagesMeasurable) with
// each stage's statistics, in the order MongoDB's statsToBSON writes
// them: stage and filter, the common statistics, the stage's own fields
// (its specific statistics after them), then its input.
func (r *stageRun) annotate(stage bson.D) (bson.D, stageFigures) {
	r.src.ended()
	return r.annotateScan(stage, &r.src.scans[0])
}

// annotateScan is annotate of a stage whose leaf scan is sc (an OR's
// scans each have their own).
func (r *stageRun) annotateScan(stage bson.D, sc *scanRun) (bson.D, stageFigures) {
	var in bson.D
	var ins bson.A
	var child stageFigures
	var kids []stageFigures
	rest := make(bson.D, 0, len(stage)+8)
	for _, e := range stage {
		switch e.Key {
		case "inputStage":
			in, child = r.annotateScan(e.Value.(bson.D), sc)
			continue
		case "inputStages":
			for i, s := range e.Value.(bson.A) {
				d, f := r.annotateScan(s.(bson.D), &r.src.scans[i])
				ins, kids = append(ins, d), append(kids, f)
			}
			continue
		}
		rest = append(rest, e)
	}
	name := rest[0].Value.(string)
	var f stageFigures
	var specific bson.D
	switch name {
	case "COLLSCAN":
		// The first work opens the cursor (NEED_TIME); each later one
		// reads a document, ADVANCED when it matches.
		d := r.stats.DocsExamined
		f = stageFigures{advanced: r.matched, needTime: 1 + d - r.matched, eof: sc.eof}
		specific = bson.D{{Key: "docsExamined", Value: explainCount(d)}}
	case "IXSCAN":
		// A work per key examined, ADVANCED for each handed up (a key
		// out of the bounds, or a multikey document's second key, is
		// NEED_TIME). In a union, a document another scan found first is
		// advanced too (the OR drops it): own counts those with the
		// scan's.
		ps := sc.ps
		advanced := sc.handed
		if ps.own != nil {
			advanced = int64(len(ps.own))
		}
		f = stageFigures{advanced: advanced, needTime: sc.keys - advanced, eof: sc.eof}
		if ps.doneKey {
			// The key past the last interval ends the scan: its work is
			// the IS_EOF one.
			f.needTime--
		}
		var tested, dropped int64
		if mk, _ := lookupD(stage, "isMultiKey").(bool); mk {
			// Only a multikey scan tests record ids for duplicates.
			tested, dropped = advanced+ps.dupsDropped, ps.dupsDropped
		}
		specific = bson.D{
			{Key: "keysExamined", Value: explainCount(sc.keys)},
			{Key: "seeks", Value: explainCount(ps.seeks)},
			{Key: "dupsTested", Value: explainCount(tested)},
			{Key: "dupsDropped", Value: explainCount(dropped)},
		}
	case "COUNT_SCAN":
		// A work per key read, ADVANCED for each (its keys decide the
		// count's filter as one range); the read finding no further key
		// ends it (count_scan.cpp).
		f = stageFigures{advanced: sc.handed, eof: sc.eof}
		specific = bson.D{{Key: "keysExamined", Value: explainCount(sc.keys)}}
	case "DISTINCT_SCAN":
		// A work per key read (distinct_scan.cpp): ADVANCED for each
		// value, then seeking past the value's other entries; NEED_TIME
		// for a key outside the bounds (or, in Folio, a further null
		// entry, whose document's value is read); the read finding none
		// ends it.
		f = stageFigures{advanced: sc.handed, needTime: sc.keys - sc.handed, eof: sc.eof}
		specific = bson.D{{Key: "keysExamined", Value: explainCount(sc.keys)}}
	case "OR":
		// A work per work of its current scan; each result of a scan is
		// tested against the record ids the OR returned (dupsTested) and
		// dropped as NEED_TIME when among them; a scan's end is NEED_TIME
		// but for the last scan's (or.cpp).
		var tested, dropped, ended int64
		for i, k := range kids {
			f.works += k.works
			f.needTime += k.needTime
			tested += k.advanced
			dropped += k.advanced - r.src.scans[i].handed
			if k.eof {
				ended++
			}
		}
		f.advanced = tested - dropped
		f.eof = ended == int64(len(kids))
		f.needTime += dropped + ended
		if f.eof {
			f.needTime--
		}
		specific = bson.D{
			{Key: "dupsTested", Value: explainCount(tested)},
			{Key: "dupsDropped", Value: explainCount(dropped)},
		}
	case "IDHACK":
		// One lookup, ADVANCED when the document is there; the stage is
		// at its end after it.
		f = stageFigures{advanced: sc.handed, eof: true}
		if sc.eof {
			f.works = 1
		}
		f.works += f.advanced
		specific = bson.D{
			{Key: "keysExamined", Value: explainCount(r.stats.KeysExamined)},
			{Key: "docsExamined", Value: explainCount(r.stats.DocsExamined)},
		}
	case "FETCH":
		// A work per work of its input: each key handed up is fetched,
		// ADVANCED when its document matches.
		f = stageFigures{works: child.works, advanced: r.matched, needTime: child.needTime + child.advanced - r.matched, eof: child.eof}
		specific = bson.D{
			{Key: "docsExamined", Value: explainCount(r.stats.DocsExamined)},
			{Key: "alreadyHasObj", Value: int32(0)},
		}
	case "SORT":
		// Every work of its input while it loads is NEED_TIME, then one
		// ADVANCED per result (limitAmount at most) and the end.
		n := child.advanced
		if lim, ok := explainInt(lookupD(stage, "limitAmount")); ok && lim < n {
			n = lim
		}
		f = stageFigures{works: child.works + n + 1, advanced: n, needTime: child.works, eof: true}
		if r.stopped {
			// Its consumer took r.n results and asked no more; it is at
			// its end when those were all.
			f.works, f.advanced, f.eof = child.works+r.n, r.n, r.n == n
		}
		specific = bson.D{
			{Key: "totalDataSizeSorted", Value: explainCount(r.sortBytes)},
			{Key: "usedDisk", Value: r.spills > 0},
			{Key: "spills", Value: explainCount(r.spills)},
		}
	case "SKIP":
		// Its first skipAmount results are NEED_TIME.
		skip, _ := explainInt(lookupD(stage, "skipAmount"))
		skipped := min(skip, child.advanced)
		f = stageFigures{works: child.works, advanced: child.advanced - skipped, needTime: child.needTime + skipped, eof: child.eof}
	case "LIMIT":
		// Past limitAmount results it ends without working its input.
		f = child
		if lim, _ := explainInt(lookupD(stage, "limitAmount")); f.advanced >= lim {
			// At its end (isEOF) once it returned them, asked again or not.
			f.eof = true
			if !r.stopped {
				f.works++
			}
		}
	default: // the projections, RETURN_KEY: one result per result
		f = child
	}
	if in == nil && ins == nil && f.works == 0 {
		// A leaf's works are its results, its NEED_TIMEs and its end.
		f.works = f.advanced + f.needTime
		if f.eof {
			f.works++
		}
	}
	var out bson.D
	if name == "COUNT_SCAN" {
		// statsToBSON writes a COUNT_SCAN's keysExamined before its own
		// fields.
		out = r.figured(rest[:1], f, append(specific, rest[1:]...))
	} else {
		out = r.figured(rest, f, specific)
	}
	if in != nil {
		out = append(out, bson.E{Key: "inputStage", Value: in})
	}
	if ins != nil {
		out = append(out, bson.E{Key: "inputStages", Value: ins})
	}
	return out, f
}

// figured is a stage (its fields but its input, rest) with figures f and
// its specific statistics: stage and filter, the common statistics
// (CommonStats), the stage's own fields, then the specific ones.
func (r *stageRun) figured(rest bson.D, f stageFigures, specific bson.D) bson.D {
	head := 1
	if len(rest) > 1 && rest[1].Key == "filter" {
		head = 2
	}
	eof := int32(0)
	if f.eof {
		eof = 1
	}
	out := append(make(bson.D, 0, len(rest)+len(specific)+11), rest[:head]...)
	out = append(out,
		bson.E{Key: "nReturned", Value: explainCount(f.advanced)},
		bson.E{Key: "executionTimeMillisEstimate", Value: explainCount(r.millis)},
		bson.E{Key: "works", Value: explainCount(f.works)},
		bson.E{Key: "advanced", Value: explainCount(f.advanced)},
		bson.E{Key: "needTime", Value: explainCount(f.needTime)},
		bson.E{Key: "needYield", Value: int32(0)},
		bson.E{Key: "saveState", Value: int32(0)},
		bson.E{Key: "restoreState", Value: int32(0)},
		bson.E{Key: "isEOF", Value: eof},
	)
	return append(append(out, rest[head:]...), specific...)
}

// writeStages is the executionStages of a write's explain: winning (the
// write stage over its input, under a findAndModify's projection) with
// the write's counts, and from a run whose input stages are measured
// (measured) every stage's statistics, the write stage having returned
// returned documents, with upserted the one an upsert made. MongoDB's
// UPDATE and DELETE (update_stage.cpp, delete_stage.cpp) work their input
// once per work, each document written (counted) answering NEED_TIME, or
// ADVANCED when the write returns documents (findAndModify); they end
// when their input does, or once they wrote their one document (not
// multi) or their input is at its end (an IDHACK after its lookup), the
// next work then ending without working the input (stopped); an upsert
// returning its document does so in the work its input ended
// (upsert_stage.cpp), and ends in the next. A projection returns what the
// write stage returns.
func (r *stageRun) writeStages(winning bson.D, counts []bson.E, returned int64, upserted, measured bool) bson.D {
	var proj bson.D
	if lookupD(winning, "stage") == "PROJECTION_DEFAULT" {
		proj, winning = winning, lookupD(winning, "inputStage").(bson.D)
	}
	var write bson.D
	var f stageFigures
	if !measured {
		write = append(append(bson.D{winning[0]}, counts...), winning[1:]...)
	} else {
		in, child := r.annotate(lookupD(winning, "inputStage").(bson.D))
		f = stageFigures{works: child.works, advanced: returned, eof: true}
		if r.stopped || upserted {
			f.works++
		}
		f.needTime = f.works - f.advanced - 1
		write = append(r.figured(bson.D{winning[0]}, f, counts), bson.E{Key: "inputStage", Value: in})
	}
	switch {
	case proj == nil:
		return write
	case !measured:
		return bson.D{proj[0], proj[1], {Key: "inputStage", Value: write}}
	}
	return append(r.figured(proj[:2], f, nil), bson.E{Key: "inputStage", Value: write})
}

// countStages is the executionStages of a count's explain: its plan's
// tree, winning (COUNT over its input), with every stage's statistics
// from the count's run (measured: its input's stages are measurable;
// else the COUNT alone has its counts), counted the matches the run read
// (skip included) under the count's skip and limit. MongoDB's COUNT
// (count.cpp CountStage::doWork) never returns a document; each of its
// works works its input once, a result being skipped (nSkipped) while
// skip remains, else counted (nCounted), and once nCounted reaches the
// limit its next work ends without working its input, as does its first
// over an input at its end from the start (an EOF stage).
func (r *stageRun) countStages(winning bson.D, counted, skip, limit int64, measured bool) bson.D {
	in := lookupD(winning, "inputStage").(bson.D)
	skipped := min(skip, counted)
	counts := bson.D{{Key: "nCounted", Value: explainCount(counted - skipped)}, {Key: "nSkipped", Value: explainCount(skipped)}}
	if !measured {
		return append(append(bson.D{winning[0]}, counts...), bson.E{Key: "inputStage", Value: in})
	}
	child := stageFigures{eof: true}
	if r.src == nil {
		// A missing collection's EOF stage, never worked.
		in = r.figured(in, child, nil)
	} else {
		in, child = r.annotate(in)
	}
	f := stageFigures{works: child.works, eof: true}
	if !child.eof || child.works == 0 {
		f.works++
	}
	f.needTime = f.works - 1
	return append(r.figured(bson.D{winning[0]}, f, counts), bson.E{Key: "inputStage", Value: in})
}
