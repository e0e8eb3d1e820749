package engine

import (
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/query"
)

// Count counts the documents a find (filter, skip, limit, hint) returns,
// matching them in place without copying any, or, when the plan's keys
// alone decide the filter, counting keys without fetching a document
// (MongoDB's COUNT_SCAN).
func (e *Engine) Count(db, coll string, o FindOptions) (int64, error) {
	c := e.lookup(o.Txn, db, coll)
	q, err := compileFind(FindOptions{Filter: o.Filter, Collation: o.Collation, Let: o.Let}, c)
	if err != nil {
		return 0, err
	}
	if c == nil {
		return 0, nil // a hint is not checked against a missing collection
	}
	if matchesAll(q.filter) && !hinted(o.Hint) {
		// MongoDB reads the record store's count, planning no query
		// (getExecutorCount)
		opStatsIn(o.Ctx).noteUnplanned()
	}
	p, _, err := e.planFind(o.Ctx, c, q, o.Hint, o.Txn, o.wanted())
	if err != nil {
		return 0, err
	}
	st := opStatsOf(o.Ctx)
	st.ran(c, p, true)
	return e.count(c, p, q.filter, o, st, nil)
}

// count runs the count of a plan. An explain's run (run set) counts what
// the plan's source did (run.src) and the matches it read, skip
// included (run.matched).
func (e *Engine) count(c *Collection, p *planner.Plan, f *query.Filter, o FindOptions, stats *OpStats, run *stageRun) (int64, error) {
	src, err := e.openSource(o.Ctx, c, p, o.Txn, stats)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	var n int64
	if ps, ok := src.(*planSource); ok && ps.p.CountScan() {
		var ended bool
		n, ended, err = ps.countKeys(o.wanted())
		if run != nil {
			run.src = &countedSource{docSource: ps, handed: n, eof: ended, stats: stats}
		}
	} else {
		if run != nil {
			run.src = countSource(src, stats)
			src = run.src
		}
		n, err = countMatches(&matchScan{src: src, filter: f, ctx: o.Ctx}, o.wanted())
	}
	if run != nil {
		// what a failed run counted is what its explain reports
		run.matched = n
	}
	if err != nil {
		return 0, err
	}
	return max(n-o.Skip, 0), nil
}

// countMatches counts the matches of scan, up to want (0: all); on an
// error, those counted before it.
func countMatches(scan *matchScan, want int64) (int64, error) {
	var n int64
	for want == 0 || n < want {
		doc, _, err := scan.next()
		if err != nil {
			return n, err
		}
		if doc == nil {
			break
		}
		n++
	}
	return n, nil
}

// countKeys counts, up to want (0: all), the keys of a plan whose keys
// decide the filter (see planner.Plan.CountScan): each key in its
// intervals that passes the key checks is one matching document, or, on
// a multikey index (Plan.CountDedups), the first key of one, the scan's
// set of seen _ids dropping the others; ended
// reports that it read to the end of its intervals. A COUNT_SCAN's read
// that finds no further key counts as a key examined, as MongoDB's
// CountScan::doWork counts it (profile_count.js: a count of 5 keys
// examines 6). The operation's context is looked at for every key.
func (s *planSource) countKeys(want int64) (n int64, ended bool, err error) {
	dedup := s.p.CountDedups()
	for {
		if want > 0 && n >= want {
			return n, false, nil
		}
		if !s.advance() {
			break
		}
		if err := mongoerr.Interruption(s.ctx); err != nil {
			return 0, false, err
		}
		s.stats.KeysExamined++
		if s.p.HasChecks() {
			if ok, seek, done := s.p.CheckKey(s.it.Key(), len(s.prefix)); !ok {
				switch {
				case done:
					s.end()
				case seek != nil:
					s.seekTo(seek)
				}
				continue
			}
		}
		if dedup && s.dup(entryID(s.it.Value())) {
			continue
		}
		n++
	}
	if s.p.CountScanShown() {
		s.stats.KeysExamined++
	}
	return n, true, s.it.Error()
}
