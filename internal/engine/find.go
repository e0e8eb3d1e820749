package engine

import (
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// DefaultSortMemoryLimit is MongoDB's in-memory sort limit (100 MiB,
// internalQueryMaxBlockingSortMemoryUsageBytes).
const DefaultSortMemoryLimit = 100 * 1024 * 1024

// SortMemoryLimit is the memory one in-memory sort of a find may use
// (internalQueryMaxBlockingSortMemoryUsageBytes).
func (e *Engine) SortMemoryLimit() int64 { return e.sortLimit.Load() }

// SetSortMemoryLimit changes the memory one in-memory sort of a find may
// use; sorts that start afterwards obey it.
func (e *Engine) SetSortMemoryLimit(n int64) { e.sortLimit.Store(n) }

// FindOptions describe a find: all documents matching Filter, ordered by
// Sort, past Skip, at most Limit (0: no limit), shaped by Projection. Hint
// names an index (by name or key pattern) to use.
type FindOptions struct {
	Filter       bson.Raw
	Sort         bson.Raw
	Projection   bson.Raw
	Hint         bson.RawValue
	Skip         int64
	Limit        int64
	AllowDiskUse bool
	// Txn, when set, reads the transaction's view.
	Txn *Txn
	// Deadline, when set, fails the read with MaxTimeMSExpired (50) once
	// passed (the command's maxTimeMS).
	Deadline time.Time
}

// deadlineCheckEvery is how many documents a scan examines between looks
// at the clock.
const deadlineCheckEvery = 256

// checkDeadline fails with MaxTimeMSExpired once deadline has passed; it
// looks at the clock every deadlineCheckEvery calls (counted by n).
func checkDeadline(deadline time.Time, n *int) error {
	if deadline.IsZero() {
		return nil
	}
	if *n++; *n%deadlineCheckEvery == 0 && time.Now().After(deadline) {
		return mongoerr.New(mongoerr.MaxTimeMSExpired, "operation exceeded time limit")
	}
	return nil
}

// Cursor yields the documents of a read. Next returns nil at the end; the
// document stays valid after later calls.
type Cursor interface {
	Next() (bson.Raw, error)
	Close() error
}

// compiledFind is a find whose filter, sort and projection compiled.
type compiledFind struct {
	filter *query.Filter
	sort   *query.Sort
	proj   *query.Projection
}

func compileFind(o FindOptions) (compiledFind, error) {
	var q compiledFind
	var err error
	if q.filter, err = query.Compile(o.Filter); err != nil {
		return q, err
	}
	if len(o.Sort) > 0 {
		if q.sort, err = query.CompileSort(o.Sort); err != nil {
			return q, err
		}
	}
	if len(o.Projection) > 0 {
		if q.proj, err = query.CompileProjection(o.Projection); err != nil {
			return q, err
		}
	}
	return q, nil
}

// planFind chooses the plan of a find on c.
func planFind(c *Collection, q compiledFind, hint bson.RawValue) (*plan, error) {
	h, err := resolveHint(c, hint)
	if err != nil {
		return nil, err
	}
	natural := h.natural
	if q.sort != nil && q.sort.Natural() != 0 {
		natural = q.sort.Natural()
	}
	if natural != 0 {
		p := buildPlan(c, nil, nil, nil, nil)
		p.reverse = natural < 0
		p.sorted = q.sort != nil && q.sort.Natural() != 0
		p.useNatural(c)
		return p, nil
	}
	p := choosePlan(c, q.filter, q.sort, h.ix, h.idOrder)
	if !p.sorted && !h.idOrder {
		p.useNatural(c)
	}
	return p, nil
}

// Find runs a query. Filter, sort and projection errors are reported before
// any document is read. The cursor reads a snapshot taken when Find runs.
func (e *Engine) Find(db, coll string, o FindOptions) (Cursor, error) {
	q, err := compileFind(o)
	if err != nil {
		return nil, err
	}
	c := e.cat.get(db, coll)
	if c == nil {
		_, err := resolveHint(nil, o.Hint)
		return emptyCursor{}, err
	}
	p, err := planFind(c, q, o.Hint)
	if err != nil {
		return nil, err
	}
	return e.execute(c, q, p, o, &scanStats{})
}

// execute opens the plan's scan and the stages above it.
func (e *Engine) execute(c *Collection, q compiledFind, p *plan, o FindOptions, stats *scanStats) (Cursor, error) {
	src, err := e.openSource(c, p, o.Txn, stats)
	if err != nil {
		return nil, err
	}
	m := &matchCursor{src: src, filter: q.filter, skip: o.Skip, limit: o.Limit, proj: q.proj, deadline: o.Deadline}
	if q.sort == nil || p.sorted {
		return m, nil
	}
	return sortAll(m, q.sort, o, e.SortMemoryLimit(), e.opts.TempDir)
}

// openSource opens the scan of a plan on a new snapshot, or on the view of
// txn.
// Forward index scans outside transactions use the index's seek hints.
func (e *Engine) openSource(c *Collection, p *plan, txn *Txn, stats *scanStats) (*planSource, error) {
	if txn != nil {
		return newPlanSource(txn.view, c.ID, p, stats, nil)
	}
	useHints := p.ix != nil && !p.reverse
	var epoch, now uint64
	if useHints {
		epoch, now = p.ix.hints.readEpoch(), hintClock.Load()
	}
	snap := e.kv.NewSnapshot()
	src, err := newPlanSource(snap, c.ID, p, stats, snap.Close)
	if err != nil {
		snap.Close()
		return nil, err
	}
	if useHints {
		src.hints, src.hintEpoch, src.hintNow = p.ix.hints, epoch, now
	}
	return src, nil
}

type emptyCursor struct{}

func (emptyCursor) Next() (bson.Raw, error) { return nil, nil }
func (emptyCursor) Close() error            { return nil }

// matchCursor filters a docSource, then applies skip, limit and projection.
type matchCursor struct {
	src    docSource
	filter *query.Filter
	skip   int64
	limit  int64 // 0: none
	proj   *query.Projection
	served int64
	// deadline bounds the scan (maxTimeMS); examined counts its documents.
	deadline time.Time
	examined int
	// raw makes Next return matching documents unprojected, with their
	// positional match index in lastPos, and ignores skip and limit (the
	// sorter applies them after ordering).
	raw     bool
	lastPos int
}

func (m *matchCursor) Next() (bson.Raw, error) {
	for {
		if !m.raw && m.limit > 0 && m.served >= m.limit {
			return nil, nil
		}
		doc, err := m.src.Next()
		if doc == nil || err != nil {
			return nil, err
		}
		if err := checkDeadline(m.deadline, &m.examined); err != nil {
			return nil, err
		}
		ok, pos, err := m.filter.MatchErr(doc)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if m.raw {
			m.lastPos = pos
			return slices.Clone(doc), nil
		}
		if m.skip > 0 {
			m.skip--
			continue
		}
		m.served++
		if m.proj != nil {
			return m.proj.Apply(doc, pos)
		}
		return slices.Clone(doc), nil
	}
}

func (m *matchCursor) Close() error { return m.src.Close() }

// Count counts the documents a find (filter, skip, limit, hint) returns,
// matching them in place without copying any.
func (e *Engine) Count(db, coll string, o FindOptions) (int64, error) {
	q, err := compileFind(FindOptions{Filter: o.Filter})
	if err != nil {
		return 0, err
	}
	c := e.cat.get(db, coll)
	if c == nil {
		_, err := resolveHint(nil, o.Hint)
		return 0, err
	}
	p, err := planFind(c, q, o.Hint)
	if err != nil {
		return 0, err
	}
	src, err := e.openSource(c, p, o.Txn, &scanStats{})
	if err != nil {
		return 0, err
	}
	defer src.Close()
	var n int64
	examined := 0
	for o.Limit == 0 || n < o.Skip+o.Limit {
		doc, err := src.Next()
		if err != nil {
			return 0, err
		}
		if doc == nil {
			break
		}
		if err := checkDeadline(o.Deadline, &examined); err != nil {
			return 0, err
		}
		ok, _, err := q.filter.MatchErr(doc)
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return max(n-o.Skip, 0), nil
}
