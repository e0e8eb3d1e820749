package engine

import (
	"errors"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

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
	q.strict = apiStrictIn(o.Ctx)
	h, err := resolveHint(c, o.Hint, q.strict)
	if err != nil || h.natural != 0 {
		return nil, err
	}
	pq := planner.Query{Filter: q.filter, HintID: h.idOrder, IDCollation: c.DefaultCollator(), Clustered: c.Clustered(), GroupDistinct: o.GroupKey != ""}
	if h.ix != nil {
		hinted := h.ix.planned()
		pq.Hint = &hinted
	}
	return planner.DistinctScan(planCatalog{c, q.strict}, pq, key), nil
}

// distinctScan answers a distinct from an index led by key whose keys
// decide the filter, reading the first entry of each value and seeking
// past the others, as MongoDB's DISTINCT_SCAN does. ok is false when no
// index qualifies (or the index turned multikey since it was planned).
// An explain's run (run set) counts what the scan did (run.src): it
// returned one entry per value.
func (e *Engine) distinctScan(db, coll, key string, o FindOptions, stats *OpStats, run *stageRun) (vals []bson.RawValue, ok bool, err error) {
	ps, err := e.openDistinct(db, coll, key, o, stats)
	if ps == nil || err != nil {
		return nil, false, err
	}
	defer ps.Close()
	set := newDistinctSet(nil)
	if err = ps.distinctValues(strings.Split(key, "."), false, set.add); err != nil {
		return nil, false, err
	}
	if vals, err = set.sorted(); err != nil {
		return nil, false, err
	}
	if run != nil {
		run.src = &countedSource{docSource: ps, handed: int64(len(vals)), eof: true, stats: stats}
	}
	return vals, true, nil
}

// openDistinct opens the distinct scan of key (distinctPlan); nil when no
// index qualifies, or the index turned multikey since it was planned.
func (e *Engine) openDistinct(db, coll, key string, o FindOptions, stats *OpStats) (*planSource, error) {
	c := e.lookup(o.Txn, db, coll)
	if c == nil {
		return nil, nil
	}
	p, err := e.distinctPlan(c, key, o)
	if p == nil || err != nil {
		return nil, err
	}
	src, err := e.openSource(o.Ctx, c, p, o.Txn, stats)
	if err != nil {
		return nil, err
	}
	ps := src.(*planSource)
	if ps.p.Distinct() == "" {
		return nil, src.Close()
	}
	stats.ran(c, ps.p, false)
	return ps, nil
}

// groupDistinctBytes bounds the documents a $group's distinct scan
// gathers (16 MB, MongoDB's largest document): past it the find reads the
// documents instead, and the $group holds, or spills, its groups itself.
const groupDistinctBytes = 16 << 20

// errGroupDistinctFull ends a $group's distinct scan past
// groupDistinctBytes.
var errGroupDistinctFull = errors.New("group distinct scan past its bound")

// groupDistinct reads, for a $group by o.GroupKey alone, one document
// {key: value} per value of the key (FindOptions.GroupKey) from a
// distinct scan of an index holding each value whole (planner.Query's
// GroupDistinct), as MongoDB feeds such a $group from a DISTINCT_SCAN
// (its $groupByDistinctScan): the $group reads each value as it would
// read it in the documents, a missing one as null. A value may come more
// than once (under other values of the index fields before the key);
// the $group keeps one. ok is false when no such scan serves, or its
// documents pass groupDistinctBytes. An explain's run (run set) counts
// what the scan did.
func (e *Engine) groupDistinct(db, coll string, o FindOptions, stats *OpStats, run *stageRun) (docs []bson.Raw, ok bool, err error) {
	ps, err := e.openDistinct(db, coll, o.GroupKey, o, stats)
	if ps == nil || err != nil {
		return nil, false, err
	}
	defer ps.Close()
	parts := strings.Split(o.GroupKey, ".")
	size := 0
	err = ps.distinctValues(parts, true, func(_ string, v bson.RawValue) error {
		d := pathDoc(parts, v)
		if size += len(d); size > groupDistinctBytes {
			return errGroupDistinctFull
		}
		docs = append(docs, d)
		return nil
	})
	if err == errGroupDistinctFull {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if run != nil {
		run.src = &countedSource{docSource: ps, handed: int64(len(docs)), eof: true, stats: stats}
	}
	return docs, true, nil
}

// pathDoc is the document holding v at the dotted path parts alone:
// {a: {b: v}} for a.b.
func pathDoc(parts []string, v bson.RawValue) bson.Raw {
	start, doc := bsoncore.AppendDocumentStart(nil)
	if len(parts) == 1 {
		doc = bsoncore.AppendValueElement(doc, parts[0], bsoncore.Value{Type: bsoncore.Type(v.Type), Data: v.Value})
	} else {
		doc = bsoncore.AppendDocumentElement(doc, parts[0], pathDoc(parts[1:], v))
	}
	doc, _ = bsoncore.AppendDocumentEnd(doc, start)
	return doc
}

// distinctValues reads the values of the index field the plan reads
// (Plan.DistinctField), one entry per value of the fields up to it: the
// value its entry holds, or for an entry holding the _id alone, or null or
// undefined (which a missing field, or an empty array, indexes as too),
// the values at parts of its fetched document. After each value it seeks
// past the entries sharing the fields up to it, as MongoDB's DistinctScan
// does; values met again under other leading values are emitted again.
// whole (a $group's scan, on an index holding each value unsplit) takes a
// null or undefined key as the value, a missing field's null included,
// and fetches only for an entry holding the _id alone, whose value at
// parts, or null, it emits. Each value comes with its name as MongoDB's
// element for it: the path's last part, or a position in an array ending
// the path.
func (s *planSource) distinctValues(parts []string, whole bool, emit func(name string, v bson.RawValue) error) error {
	leaf := parts[len(parts)-1]
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
		if !valid || v.Type == 0 || !whole && (v.Type == bson.TypeNull || v.Type == bson.TypeUndefined) {
			var buf []byte
			doc, found, err := getDoc(s.r, docKeyFromEncodedID(s.collID, entryID(s.it.Value())), &buf)
			if err != nil {
				return err
			}
			switch {
			case found && whole:
				s.stats.DocsExamined++
				v, err := bson.Raw(doc).LookupErr(parts...)
				if err != nil {
					v = bson.RawValue{Type: bson.TypeNull}
				}
				if err := emit(leaf, v); err != nil {
					return err
				}
			case found:
				s.stats.DocsExamined++
				rawdoc.AllElementsAlongPath(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc}, parts, func(name string, v bson.RawValue) {
					if err == nil {
						err = emit(name, v)
					}
				})
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := emit(leaf, v); err != nil {
			return err
		}
		if next := keyenc.PrefixEnd(k[:len(s.prefix)+n]); next != nil {
			s.seekTo(next)
		}
	}
	return s.it.Error()
}
