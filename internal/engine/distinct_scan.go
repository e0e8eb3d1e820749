package engine

import (
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/rawdoc"
)

// distinctPlan is the DISTINCT_SCAN plan of a distinct on key (see
// planner.DistinctScan), or nil.
func (e *Engine) distinctPlan(c *Collection, key string, o FindOptions) (*planner.Plan, error) {
	q, err := compileFind(FindOptions{Filter: o.Filter, Let: o.Let, Collation: o.Collation}, c)
	if err != nil {
		return nil, err
	}
	h, err := resolveHint(c, o.Hint)
	if err != nil || h.natural != 0 {
		return nil, err
	}
	pq := planner.Query{Filter: q.filter, HintID: h.idOrder, IDCollation: c.DefaultCollator(), Clustered: c.Clustered()}
	if h.ix != nil {
		hinted := h.ix.planned()
		pq.Hint = &hinted
	}
	return planner.DistinctScan(planCatalog{c}, pq, key), nil
}

// distinctScan answers a distinct from an index led by key whose keys
// decide the filter, reading the first entry of each value and seeking
// past the others, as MongoDB's DISTINCT_SCAN does. ok is false when no
// index qualifies (or the index turned multikey since it was planned).
// An explain's run (run set) counts what the scan did (run.src): it
// returned one entry per value.
func (e *Engine) distinctScan(db, coll, key string, o FindOptions, stats *OpStats, run *stageRun) (vals []bson.RawValue, ok bool, err error) {
	c := e.lookup(o.Txn, db, coll)
	if c == nil {
		return nil, false, nil
	}
	p, err := e.distinctPlan(c, key, o)
	if p == nil || err != nil {
		return nil, false, err
	}
	src, err := e.openSource(o.Ctx, c, p, o.Txn, stats)
	if err != nil {
		return nil, false, err
	}
	defer src.Close()
	ps := src.(*planSource)
	if ps.p.Distinct() == "" {
		return nil, false, nil
	}
	stats.ran(c, ps.p, false)
	set := newDistinctSet(nil)
	if err = ps.distinctValues(strings.Split(key, "."), set); err != nil {
		return nil, false, err
	}
	vals = set.sorted()
	if run != nil {
		run.src = &countedSource{docSource: ps, handed: int64(len(vals)), eof: true, stats: stats}
	}
	return vals, true, nil
}

// distinctValues reads the values of the index field the plan reads
// (Plan.DistinctField), one entry per value of the fields up to it: the
// value its entry holds, or for an entry holding the _id alone, or null or
// undefined (which a missing field, or an empty array, indexes as too),
// the values at parts of its fetched document. After each value it seeks
// past the entries sharing the fields up to it, as MongoDB's DistinctScan
// does; values met again under other leading values are one in set.
func (s *planSource) distinctValues(parts []string, set *distinctSet) error {
	pos := s.p.DistinctField()
	fields := s.p.Index.Fields[:pos+1]
	field := strconv.Itoa(pos)
	for s.advance() {
		if err := mongoerr.Interruption(s.ctx); err != nil {
			return err
		}
		s.stats.KeysExamined++
		k := s.it.Key()
		if s.p.HasChecks() {
			if ok, seek, done := s.p.CheckKey(k, len(s.prefix)); !ok {
				switch {
				case done:
					s.end()
				case seek != nil:
					s.seekTo(seek)
				}
				continue
			}
		}
		n, valid := 0, true
		for _, f := range fields {
			l, ok := keyenc.FieldLen(k[len(s.prefix)+n:], f.Desc)
			if !ok || len(k) < len(s.prefix)+n+l {
				valid = false
				break
			}
			n += l
		}
		var v bson.RawValue
		if vals := entryValues(s.it.Value()); vals != nil {
			v = vals.Lookup(field)
		}
		if !valid || v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
			var buf []byte
			doc, found, err := getDoc(s.r, docKeyFromEncodedID(s.collID, entryID(s.it.Value())), &buf)
			if err != nil {
				return err
			}
			if found {
				s.stats.DocsExamined++
				rawdoc.AllAlongPath(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, parts, func(v bson.RawValue) {
					if err == nil {
						err = set.add(v)
					}
				})
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := set.add(v); err != nil {
			return err
		}
		if next := keyenc.PrefixEnd(k[:len(s.prefix)+n]); next != nil {
			s.seekTo(next)
		}
	}
	return s.it.Error()
}
