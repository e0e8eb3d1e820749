package engine

import (
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// maxSortMemory is MongoDB's in-memory sort limit (100 MiB).
const maxSortMemory = 100 * 1024 * 1024

// FindOptions describe a find: all documents matching Filter, ordered by
// Sort, past Skip, at most Limit (0: no limit), shaped by Projection.
type FindOptions struct {
	Filter       bson.Raw
	Sort         bson.Raw
	Projection   bson.Raw
	Skip         int64
	Limit        int64
	AllowDiskUse bool
}

// Cursor yields the documents of a read. Next returns nil at the end; the
// document stays valid after later calls.
type Cursor interface {
	Next() (bson.Raw, error)
	Close() error
}

// Find runs a query. Filter, sort and projection errors are reported before
// any document is read.
func (e *Engine) Find(db, coll string, o FindOptions) (Cursor, error) {
	f, err := query.Compile(o.Filter)
	if err != nil {
		return nil, err
	}
	var sort *query.Sort
	if len(o.Sort) > 0 {
		if sort, err = query.CompileSort(o.Sort); err != nil {
			return nil, err
		}
	}
	var proj *query.Projection
	if len(o.Projection) > 0 {
		if proj, err = query.CompileProjection(o.Projection); err != nil {
			return nil, err
		}
	}
	c := e.cat.get(db, coll)
	if c == nil {
		return emptyCursor{}, nil
	}
	src, err := source(e.kv, c, o.Filter)
	if err != nil {
		return nil, err
	}
	m := &matchCursor{src: src, filter: f, skip: o.Skip, limit: o.Limit, proj: proj}
	if sort == nil || sort.Natural() != 0 {
		if sort != nil && sort.Natural() < 0 {
			return sortAll(m, nil, -1, o)
		}
		return m, nil
	}
	return sortAll(m, sort, 0, o)
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
		ok, pos := m.filter.MatchPositional(doc)
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

// sortedDoc is one document held by an in-memory sort.
type sortedDoc struct {
	doc  bson.Raw
	keys []bson.RawValue
	pos  int
}

// sortAll reads every match, orders it (by sort, or reversed storage order
// when reverse is -1), then serves skip, limit and projection from memory.
// Memory beyond MongoDB's 100 MiB sort limit fails with code 292 unless
// allowDiskUse was given.
func sortAll(m *matchCursor, sort *query.Sort, reverse int, o FindOptions) (Cursor, error) {
	defer m.Close()
	m.raw = true
	var docs []sortedDoc
	var mem int64
	for {
		doc, err := m.Next()
		if err != nil {
			return nil, err
		}
		if doc == nil {
			break
		}
		mem += int64(len(doc))
		if mem > maxSortMemory && !o.AllowDiskUse {
			return nil, mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
				"Executor error during find command :: caused by :: Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", maxSortMemory)
		}
		sd := sortedDoc{doc: doc, pos: m.lastPos}
		if sort != nil {
			sd.keys = sort.Keys(doc)
		}
		docs = append(docs, sd)
	}
	if reverse < 0 {
		slices.Reverse(docs)
	} else {
		slices.SortStableFunc(docs, func(a, b sortedDoc) int { return sort.CompareKeys(a.keys, b.keys) })
	}
	if o.Skip >= int64(len(docs)) {
		docs = nil
	} else {
		docs = docs[o.Skip:]
	}
	if o.Limit > 0 && o.Limit < int64(len(docs)) {
		docs = docs[:o.Limit]
	}
	return &sliceCursor{docs: docs, proj: m.proj}, nil
}

type sliceCursor struct {
	docs []sortedDoc
	proj *query.Projection
}

func (s *sliceCursor) Next() (bson.Raw, error) {
	if len(s.docs) == 0 {
		return nil, nil
	}
	d := s.docs[0]
	s.docs = s.docs[1:]
	if s.proj != nil {
		return s.proj.Apply(d.doc, d.pos)
	}
	return d.doc, nil
}

func (s *sliceCursor) Close() error { s.docs = nil; return nil }

// Count counts the documents matching filter, past skip, at most limit.
func (e *Engine) Count(db, coll string, filter bson.Raw, skip, limit int64) (int64, error) {
	cur, err := e.Find(db, coll, FindOptions{Filter: filter, Skip: skip, Limit: limit})
	if err != nil {
		return 0, err
	}
	defer cur.Close()
	var n int64
	for {
		doc, err := cur.Next()
		if err != nil {
			return 0, err
		}
		if doc == nil {
			return n, nil
		}
		n++
	}
}
