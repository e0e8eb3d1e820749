package engine

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/query"
	"github.com/folio-db/folio/internal/sorter"
)

// FindExecutorContext is what MongoDB's find command writes before an
// error its plan executor raised while producing the first batch
// (mongoerr.AddContext). The find command adds it to the errors of filling
// that batch; sortAll, whose sort runs while Engine.Find opens the cursor
// where MongoDB's runs for the first batch, adds it to the errors of
// sorting.
const FindExecutorContext = "Executor error during find command"

// sortAll reads every match into a sorter and serves them in sort order,
// then applies skip, limit and projection. With a limit only the first
// skip+limit documents are kept (a top-k sort). Past the sort memory limit
// (or the process-wide budget) the sort spills to tempDir when allowDiskUse
// is on, and otherwise fails with QueryExceededMemoryLimitNoDiskUseAllowed.
// Its errors of sorting are the find's executor's (FindExecutorContext, or
// the one o names).
func sortAll(m *matchCursor, sort *query.Sort, o FindOptions, memLimit int64, tempDir string) (Cursor, error) {
	defer m.Close()
	m.raw = true
	s := sorter.New(sorter.Options{Limit: o.wanted(), MaxMemory: memLimit, AllowDisk: o.AllowDiskUse, TempDir: tempDir})
	keys := sorter.NewSortKey(sort)
	for {
		doc, err := m.Next()
		if err == nil && doc == nil {
			break
		}
		var key []byte
		if err == nil {
			key, err = keys.OfMeta(doc, m.meta)
			if err == nil {
				err = s.Add(sorter.Entry{Key: key, Doc: doc, Aux: int64(m.lastPos), Meta: m.meta})
			}
			err = o.inExecutorContext(err)
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	it, err := s.Iterate()
	if err != nil {
		s.Close()
		return nil, o.inExecutorContext(err)
	}
	return &sortedCursor{s: s, it: it, proj: m.proj, skip: o.Skip}, nil
}

// sortedCursor serves a sorter's output past skip, projected.
type sortedCursor struct {
	s    *sorter.Sorter
	it   *sorter.Iterator
	proj *query.Projection
	skip int64
	meta docsrc.Meta
}

// Meta is the metadata (text score) of the document served last.
func (c *sortedCursor) Meta() docsrc.Meta { return c.meta }

func (c *sortedCursor) Next() (bson.Raw, error) {
	for {
		e, ok, err := c.it.Next()
		if !ok || err != nil {
			return nil, err
		}
		if c.skip > 0 {
			c.skip--
			continue
		}
		c.meta = e.Meta
		if c.proj != nil {
			return c.proj.ApplyMeta(e.Doc, int(e.Aux), e.Meta)
		}
		return e.Doc, nil
	}
}

func (c *sortedCursor) Close() error {
	c.s.Close()
	return nil
}
