package engine

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"time"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/sorter"
	"github.com/folio-db/folio/internal/storage"
)

// Trial runs choose among the candidate plans of a query as MongoDB's
// multi-planner does (MultiPlanStage::pickBestPlan, workAllPlans):
//
//   - the candidates work round-robin, one work each per round (a work is
//     one index key or one document a scan examines; the work that finds
//     the scan's end is one more; an in-memory sort returns one result per
//     work once its input ended);
//   - the round in which one of them reaches its end, or returns the trial's
//     results (internalQueryPlanEvaluationMaxResults, or the query's limit
//     when smaller), ends the trial once it is complete, as does the
//     maxWorks-th round (internalQueryPlanEvaluationWorks, or
//     internalQueryPlanEvaluationCollFraction of the collection's documents
//     when more): every candidate still running has then done the same
//     works;
//   - a candidate whose in-memory sort fails (past the memory limit without
//     allowDiskUse) is dropped; the trial goes on with the others;
//   - each is scored as plan_ranker.h's PlanScorer::calculateScore: 1 +
//     results/works + a tie-breaking epsilon (min(1/(10·results), 1e-4))
//     for each of no FETCH, no blocking SORT and no index intersection
//     (Folio has none), and ranked with a bonus of 1 for having reached its
//     end (pickBestPlan), ties going to the earlier candidate; the scores
//     kept (explain's score, the plan cache's) are without that bonus.
//
// Folio steps the candidates in the order of their works rather than in
// lockstep: the candidate that has worked least reads on (one document,
// which may take several works), and each result is recorded with the work
// it came at. What each candidate had done after the trial's last round is
// read off those records, which is what the rounds would have left.
//
// A find continues with the winner where its trial left it: the results it
// returned during the trial are returned first, not read again (see
// trialResult.cont).

// trialDoc is a result a candidate returned during its trial, kept for the
// find that continues with it: the document and what its metadata is made
// of (see planSource.Meta), owned copies.
type trialDoc struct {
	doc, id, key, entry []byte
	pos                 int // the filter's positional match index
	src                 int // in a union, the scan that found it
}

// trialCand is one candidate while the trial runs.
type trialCand struct {
	p        *planner.Plan
	src      docSource
	stats    OpStats
	blocking bool  // its sort runs in memory
	skip     int64 // the query's skip
	covered  bool  // its source yields only matches
	// sort holds the matches of a blocking candidate without allowDiskUse,
	// so that it fails once the sort would.
	sort *sorter.Sorter
	keys *sorter.SortKey
	// works is what the scan has worked so far, prevDocs the documents it
	// had examined before its last step.
	works, prevDocs int64
	matches         int64
	skipped         int64   // the matches the query's skip consumed
	resultAt        []int64 // the work of each result (a non-blocking candidate)
	// inputEnd is the work at which the scan found its end (0: not yet);
	// a blocking candidate then returns sorted results, sortedN of them
	// (before the skip), one per work.
	inputEnd, sortedN int64
	eofAt, stopAt     int64 // the work it reached its end, the work it would end the trial (0: not yet)
	failAt            int64 // the work its sort failed (0: never)
	failErr           error // why it failed
	elapsed           time.Duration
	kept              []trialDoc // a find's continuation (keep)
	keep              bool
}

// trialRun is what one candidate had done when the trial ended: its
// results, whether it reached its end or failed, the works every
// candidate did, the keys and documents it examined, its score.
type trialRun struct {
	results    int64
	eof        bool
	failed     bool
	works      int64
	keys, docs int64
	score      float64
	// elapsed is the trial's duration for this candidate, measured for an
	// explain only (allPlansExecution's executionTimeMillisEstimate).
	elapsed time.Duration
}

// trialResult is a trial's outcome: the winner, the others (ranked, then
// the failed ones), and each plan's run (the winner's first).
type trialResult struct {
	winner   *planner.Plan
	rejected []*planner.Plan
	runs     []trialRun
	// cont, for a find, is the winner's source (a scan or a union of
	// scans) left where the trial left it, its results of the trial
	// queued before what it reads next (pre: their positional match
	// indexes), and skipped the matches of the query's skip it consumed;
	// nil when the find reads the winner again (see trialResult.release).
	cont    docSource
	pre     []int
	skipped int64
}

// release closes the continuation a caller does not take.
func (res *trialResult) release() {
	if res != nil && res.cont != nil {
		res.cont.Close()
		res.cont = nil
	}
}

// trialSpec is what bounds a trial of q: its skip and limit (the trial's
// results are counted after the skip, up to the limit), and whether the
// winner's source is kept for the find (keep).
type trialSpec struct {
	skip, limit int64
	keep        bool
}

// specOf is the trial spec of q, planned with limit (skip plus limit, or
// a count's limit).
func specOf(q compiledFind, limit int64) trialSpec {
	if q.skip > 0 || q.limit > 0 {
		return trialSpec{skip: q.skip, limit: q.limit, keep: q.keepTrial}
	}
	return trialSpec{limit: limit, keep: q.keepTrial}
}

// trialPlans runs the trial of cands (best static score first) on c and
// returns the winner and the others. Errors other than a candidate's
// failing sort (a filter's, an interruption) end it.
func (e *Engine) trialPlans(ctx context.Context, c *Collection, q compiledFind, cands []*planner.Plan, txn *Txn, limit int64) (*trialResult, error) {
	spec := specOf(q, limit)
	want := e.TrialMaxResults()
	if spec.limit > 0 {
		want = min(want, spec.limit)
	}
	tc, err := e.openTrial(ctx, c, q, cands, txn, spec)
	defer closeTrial(ctx, tc)
	if err != nil {
		return nil, err
	}
	works, frac := e.TrialWorks(), e.TrialCollFraction()
	r, err := e.runTrial(ctx, q, tc, spec, want, works)
	if err != nil {
		return nil, err
	}
	if r == works && frac > 0 {
		// No candidate ended within the works: on a large collection the
		// trial lasts for a fraction of its documents. They are counted
		// only as far as the trial goes on (at most twice as far), so
		// the count costs a few times the trial's own reads.
		n := e.newDocCounter(c, txn)
		defer n.close()
		for r == works {
			target := max(2*n.n, int64(float64(works+1)/frac)+1)
			if err := n.countTo(ctx, target); err != nil {
				return nil, err
			}
			more := int64(frac * float64(n.n))
			if more <= works {
				break
			}
			works = more
			if r, err = e.runTrial(ctx, q, tc, spec, want, works); err != nil {
				return nil, err
			}
		}
	}
	res := rankTrial(tc, r, q.sort != nil, c.Clustered())
	if w := tc[slices.Index(cands, res.winner)]; spec.keep && w.keep {
		st := opStatsOf(ctx)
		switch src := w.src.(type) {
		case *planSource:
			src.replay, src.stats = w.kept, st
		case *unionSource:
			src.replay, src.resume = w.kept, src.i
			for _, s := range src.srcs {
				s.stats = st
			}
		}
		for _, k := range w.kept {
			res.pre = append(res.pre, k.pos)
		}
		res.cont, res.skipped = w.src, w.skipped
		st.Add(OpStats{KeysExamined: w.stats.KeysExamined, DocsExamined: w.stats.DocsExamined})
		w.src, w.stats = nil, OpStats{}
	}
	return res, nil
}

// openTrial opens the sources of the candidates.
func (e *Engine) openTrial(ctx context.Context, c *Collection, q compiledFind, cands []*planner.Plan, txn *Txn, spec trialSpec) ([]*trialCand, error) {
	tc := make([]*trialCand, 0, len(cands))
	for _, p := range cands {
		cd := &trialCand{p: p, blocking: q.sort != nil && !p.Sorted, skip: spec.skip}
		tc = append(tc, cd)
		if cd.blocking && !q.allowDiskUse {
			limit := int64(0)
			if spec.limit > 0 {
				limit = spec.skip + spec.limit
			}
			cd.sort = sorter.New(sorter.Options{Limit: limit, MaxMemory: e.SortMemoryLimit()})
			cd.keys = sorter.NewSortKey(q.sort)
		}
		src, err := e.openSource(ctx, c, p, txn, &cd.stats)
		if err != nil {
			return tc, err
		}
		cd.src = src
		_, isPlan := src.(*planSource)
		_, isUnion := src.(*unionSource)
		cd.covered = isPlan && p.Covered() != nil
		// A find continues with a winner that does not sort in memory;
		// its documents carry what the find asks for.
		if cd.keep = spec.keep && (isPlan || isUnion) && !cd.blocking; cd.keep {
			if k, ok := src.(keyed); ok && q.indexKeys {
				k.giveIndexKeys(!c.Clustered())
			}
			if r, ok := src.(recorded); ok && q.recordIDs {
				r.giveRecordIDs()
			}
		}
	}
	return tc, nil
}

// closeTrial closes the candidates' sources and sorts (but the source a
// find continues with) and counts what they examined into the operation's
// statistics.
func closeTrial(ctx context.Context, tc []*trialCand) {
	for _, cd := range tc {
		if cd.sort != nil {
			cd.sort.Close()
		}
		if cd.src != nil {
			cd.src.Close()
		}
		opStatsOf(ctx).Add(OpStats{KeysExamined: cd.stats.KeysExamined, DocsExamined: cd.stats.DocsExamined})
	}
}

// runTrial works the candidates until the trial's end, at most maxWorks
// works each, and returns the round it ended at.
func (e *Engine) runTrial(ctx context.Context, q compiledFind, tc []*trialCand, spec trialSpec, want, maxWorks int64) (int64, error) {
	for {
		end := trialEnd(tc, maxWorks)
		var next *trialCand
		for _, cd := range tc {
			if cd.failAt != 0 || cd.inputEnd != 0 || cd.stopAt != 0 || cd.works >= end {
				continue
			}
			if next == nil || cd.works < next.works {
				next = cd
			}
		}
		if next == nil {
			return end, nil
		}
		if err := mongoerr.Interruption(ctx); err != nil {
			return 0, err
		}
		if err := next.step(q, spec, want); err != nil {
			return 0, err
		}
	}
}

// trialEnd is the round the trial ends at as far as known: the first a
// candidate would end it at, or maxWorks.
func trialEnd(tc []*trialCand, maxWorks int64) int64 {
	end := maxWorks
	for _, cd := range tc {
		if cd.stopAt != 0 && cd.failAt == 0 {
			end = min(end, cd.stopAt)
		}
	}
	return end
}

// step reads cd's next document.
func (cd *trialCand) step(q compiledFind, spec trialSpec, want int64) error {
	var start time.Time
	if q.explain {
		start = time.Now()
		defer func() { cd.elapsed += time.Since(start) }()
	}
	cd.prevDocs = cd.stats.DocsExamined
	doc, err := cd.src.Next()
	if err != nil {
		return err
	}
	w := max(cd.stats.KeysExamined, cd.stats.DocsExamined)
	cd.works = w
	want = max(want, 1) // a plan's first result ends a trial of 0 results
	if doc == nil {
		cd.inputEnd = w + 1
		cd.works = w + 1
		if !cd.blocking {
			cd.end(cd.inputEnd)
			return nil
		}
		// The sort returns its results (its limit is skip + limit), one
		// per work, then its end.
		cd.sortedN = cd.matches
		if spec.limit > 0 {
			cd.sortedN = min(cd.sortedN, spec.skip+spec.limit)
		}
		cd.eofAt = cd.inputEnd + cd.sortedN + 1
		cd.stopAt = cd.eofAt
		if cd.sortedN-spec.skip >= want {
			cd.stopAt = cd.inputEnd + spec.skip + want
		}
		return nil
	}
	ok, pos := true, 0
	if !cd.covered {
		if ok, pos, err = q.filter.MatchErr(doc); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	cd.matches++
	if cd.blocking {
		if cd.sort != nil {
			key, err := cd.keys.OfMeta(doc, docsrc.MetaOf(cd.src))
			if err == nil {
				err = cd.sort.Add(sorter.Entry{Key: key, Doc: doc})
			}
			if err != nil {
				cd.failAt, cd.failErr = w, err
			}
		}
		return nil
	}
	if cd.skipped < spec.skip {
		cd.skipped++
		return nil
	}
	cd.resultAt = append(cd.resultAt, w)
	if cd.keep {
		cd.kept = append(cd.kept, keptDoc(cd.src, doc, pos))
	}
	n := int64(len(cd.resultAt))
	if n == want && cd.stopAt == 0 {
		cd.stopAt = w
	}
	if spec.limit > 0 && n == spec.limit {
		// A LIMIT stage is at its end once it returned its limit.
		cd.end(w)
	}
	return nil
}

// end records that cd reached its end at work w.
func (cd *trialCand) end(w int64) {
	if cd.eofAt == 0 {
		cd.eofAt = w
	}
	if cd.stopAt == 0 {
		cd.stopAt = w
	}
}

// keptDoc copies the document src returned last, with its metadata.
func keptDoc(src docSource, doc []byte, pos int) trialDoc {
	k := trialDoc{doc: bytes.Clone(doc), pos: pos}
	s, ok := src.(*planSource)
	if u, isUnion := src.(*unionSource); isUnion {
		k.src, s, ok = u.i, u.srcs[u.i], true
	}
	if !ok {
		return k
	}
	if s.ids {
		k.id = bytes.Clone(s.lastID)
	}
	if s.keys {
		k.key, k.entry = bytes.Clone(s.lastKey), bytes.Clone(s.lastEntry)
	}
	return k
}

// at is what cd had done after r works.
func (cd *trialCand) at(r int64) trialRun {
	run := trialRun{works: r, elapsed: cd.elapsed}
	run.failed = cd.failAt != 0 && cd.failAt <= r
	run.eof = cd.eofAt != 0 && cd.eofAt <= r
	if cd.blocking {
		if cd.inputEnd != 0 && r > cd.inputEnd {
			run.results = max(min(r-cd.inputEnd, cd.sortedN)-cd.skip, 0)
		}
	} else {
		run.results = int64(sort.Search(len(cd.resultAt), func(i int) bool { return cd.resultAt[i] > r }))
	}
	run.keys, run.docs = cd.stats.KeysExamined, cd.stats.DocsExamined
	if cd.works > r && cd.inputEnd == 0 {
		// Its last read went past the trial's end: it had not fetched
		// that read's document yet.
		run.docs = cd.prevDocs
	}
	run.keys, run.docs = min(run.keys, r), min(run.docs, r)
	return run
}

// trialScore is plan_ranker.h's score of a run of p (without the EOF
// bonus), summed in its order: base score and productivity, then the
// tie-breakers' sum.
func trialScore(run trialRun, p *planner.Plan, sorted, clustered bool) float64 {
	eps := min(1/(10*float64(max(run.results, 1))), 1e-4)
	var noFetch, noSort float64
	if !p.ShowsFetch(clustered) {
		noFetch = eps
	}
	if !sorted || p.Sorted {
		noSort = eps // no blocking SORT
	}
	noIxisect := eps // Folio intersects no indexes
	return 1 + float64(run.results)/float64(max(run.works, 1)) + (noFetch + noSort + noIxisect)
}

// rankTrial ranks the candidates after r works (see pickBestPlan): the
// best score (with the EOF bonus) first, ties in candidate order, the
// failed ones last; when all failed, the first candidate wins (its
// execution then fails as its trial did).
func rankTrial(tc []*trialCand, r int64, sorted, clustered bool) *trialResult {
	runs := make([]trialRun, len(tc))
	order := make([]int, 0, len(tc))
	var failed []int
	for i, cd := range tc {
		runs[i] = cd.at(r)
		if runs[i].failed {
			failed = append(failed, i)
			continue
		}
		runs[i].score = trialScore(runs[i], cd.p, sorted, clustered)
		order = append(order, i)
	}
	rank := func(i int) float64 {
		if runs[i].eof {
			return runs[i].score + 1
		}
		return runs[i].score
	}
	sort.SliceStable(order, func(a, b int) bool { return rank(order[a]) > rank(order[b]) })
	order = append(order, failed...)
	res := &trialResult{winner: tc[order[0]].p}
	for _, i := range order {
		if i != order[0] {
			res.rejected = append(res.rejected, tc[i].p)
		}
		res.runs = append(res.runs, runs[i])
	}
	return res
}

// docCounter counts a collection's documents in a view of it (txn's, or
// a snapshot), as far as asked.
type docCounter struct {
	snap storage.Snapshot
	it   storage.Iter
	err  error
	n    int64
	done bool
}

func (e *Engine) newDocCounter(c *Collection, txn *Txn) *docCounter {
	d := &docCounter{}
	lo, hi := docSpan(c.ID)
	var r storage.Reader
	if txn != nil {
		r = txn.tx
	} else {
		d.snap = e.kv.NewSnapshot()
		r = d.snap
	}
	if d.it, d.err = r.NewIter(lo, hi); d.err == nil {
		d.done = !d.it.First()
		if !d.done {
			d.n = 1
		}
	}
	return d
}

// countTo counts on until n documents are counted or none is left.
func (d *docCounter) countTo(ctx context.Context, n int64) error {
	if d.err != nil {
		return d.err
	}
	for !d.done && d.n < n {
		if d.n%256 == 0 {
			if err := mongoerr.Interruption(ctx); err != nil {
				return err
			}
		}
		if d.done = !d.it.Next(); !d.done {
			d.n++
		}
	}
	return d.it.Error()
}

func (d *docCounter) close() {
	if d.it != nil {
		d.it.Close()
	}
	if d.snap != nil {
		d.snap.Close()
	}
}
