package engine

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// matchScan is the one scan-and-match loop: every read and every
// multi-document write (find, count, distinct, update, delete,
// findAndModify, aggregate's collection source) reads its plan's candidates
// through it. It looks at the operation's context before every candidate
// (an atomic load: a filter that costs milliseconds per document still
// stops within one), failing with the interruption's error
// (mongoerr.Interruption), and yields the candidates matching the filter
// with their positional match index. A yielded document is valid until the
// next call.
type matchScan struct {
	src docSource
	// filter is nil when every candidate matches (a covered read's).
	filter *query.Filter
	// ctx is the operation's context; a cursor kept between getMores is
	// given each getMore's context in turn (see cursors.Binding).
	ctx context.Context
	// recheck reads the documents again at the latest state after a
	// getMore (recheck.go); a find's cursor sets it, other scans leave it
	// off.
	recheck recheck
	// pre are the positional match indexes of the documents src returns
	// first, which its trial matched already (trialResult.cont): they are
	// matches, unless rechecked.
	pre []int
}

func (m *matchScan) next() (bson.Raw, int, error) {
	for {
		if err := mongoerr.Interruption(m.ctx); err != nil {
			return nil, 0, err
		}
		doc, err := m.src.Next()
		if doc == nil || err != nil {
			return nil, 0, err
		}
		if len(m.pre) > 0 {
			pos := m.pre[0]
			if m.pre = m.pre[1:]; !m.recheck.on {
				return doc, pos, nil
			}
		}
		if m.recheck.on {
			if doc, err = m.recheck.check(m.src, doc); err != nil {
				return nil, 0, err
			}
			if doc == nil {
				continue // deleted since the snapshot, or no longer keyed
			}
		}
		if m.filter == nil {
			return doc, 0, nil
		}
		ok, pos, err := m.filter.MatchErr(doc)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			return doc, pos, nil
		}
	}
}

func (m *matchScan) close() error { return m.src.Close() }

// covered reports whether the scan's source answers from index keys
// alone (see planner.Plan.Covered).
func (m *matchScan) covered() bool {
	ps, ok := m.src.(*planSource)
	return ok && ps.p.Covered() != nil
}
