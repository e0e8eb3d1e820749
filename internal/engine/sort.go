package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// sortedDoc is one document held by a sort, with its sort keys and its
// positional match index.
type sortedDoc struct {
	doc  bson.Raw
	keys []bson.RawValue
	pos  int
}

// sortAll reads every match and serves it in sort order, then applies skip,
// limit and projection. With a limit only the first skip+limit documents
// are kept (a top-k sort). Otherwise documents beyond MongoDB's 100 MiB
// sort memory fail with code 292, unless allowDiskUse was given: then
// sorted runs spill to files in tempDir and are merged.
func sortAll(m *matchCursor, sort *query.Sort, o FindOptions, memLimit int64, tempDir string) (Cursor, error) {
	defer m.Close()
	m.raw = true
	cmp := func(a, b sortedDoc) int { return sort.CompareKeys(a.keys, b.keys) }
	keep := int64(0)
	if o.Limit > 0 {
		keep = o.Skip + o.Limit
	}
	var buf []sortedDoc
	var mem int64
	var runs []*os.File
	closeRuns := func() {
		for _, f := range runs {
			f.Close()
			os.Remove(f.Name())
		}
	}
	for {
		doc, err := m.Next()
		if err != nil {
			closeRuns()
			return nil, err
		}
		if doc == nil {
			break
		}
		keys, err := sort.KeysErr(doc)
		if err != nil {
			closeRuns()
			return nil, mongoerr.New(mongoerr.As(err).Code, "Executor error during find command :: caused by :: %s", mongoerr.As(err).Msg)
		}
		buf = append(buf, sortedDoc{doc: doc, pos: m.lastPos, keys: keys})
		mem += int64(len(doc))
		switch {
		case keep > 0 && int64(len(buf)) >= 2*keep+64:
			slices.SortStableFunc(buf, cmp)
			clear(buf[keep:])
			buf = buf[:keep]
		case keep == 0 && mem > memLimit:
			if !o.AllowDiskUse {
				closeRuns()
				return nil, mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
					"Executor error during find command :: caused by :: Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", memLimit)
			}
			slices.SortStableFunc(buf, cmp)
			f, err := writeRun(tempDir, buf)
			if err != nil {
				closeRuns()
				return nil, err
			}
			runs = append(runs, f)
			buf, mem = nil, 0
		}
	}
	slices.SortStableFunc(buf, cmp)
	if keep > 0 && int64(len(buf)) > keep {
		buf = buf[:keep]
	}
	mc := &mergeCursor{sort: sort, proj: m.proj, skip: o.Skip, cleanup: closeRuns}
	for _, f := range runs {
		r := &runReader{r: bufio.NewReaderSize(f, 256<<10)}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			closeRuns()
			return nil, err
		}
		mc.runs = append(mc.runs, r)
	}
	mc.runs = append(mc.runs, &runReader{mem: buf})
	for _, r := range mc.runs {
		if err := r.advance(sort); err != nil {
			closeRuns()
			return nil, err
		}
	}
	return mc, nil
}

// writeRun writes sorted documents to a new temporary file: each record is
// the document's length, its positional index, then the document.
func writeRun(dir string, docs []sortedDoc) (*os.File, error) {
	f, err := os.CreateTemp(dir, "folio-sort-*")
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	var hdr [2 * binary.MaxVarintLen64]byte
	for _, d := range docs {
		n := binary.PutUvarint(hdr[:], uint64(len(d.doc)))
		n += binary.PutVarint(hdr[n:], int64(d.pos))
		w.Write(hdr[:n])
		w.Write(d.doc)
	}
	err = w.Flush() // a bufio.Writer keeps its first error and reports it here
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// runReader yields one sorted run, from a file or from memory; cur is its
// current head, or nil when it is exhausted.
type runReader struct {
	r   *bufio.Reader
	mem []sortedDoc
	cur *sortedDoc
}

func (r *runReader) advance(sort *query.Sort) error {
	if r.r == nil {
		if len(r.mem) == 0 {
			r.cur = nil
			return nil
		}
		r.cur = &r.mem[0]
		r.mem = r.mem[1:]
		return nil
	}
	size, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
		r.cur = nil
		return nil
	}
	if err != nil {
		return err
	}
	pos, err := binary.ReadVarint(r.r)
	if err != nil {
		return err
	}
	doc := make([]byte, size)
	if _, err := io.ReadFull(r.r, doc); err != nil {
		return err
	}
	r.cur = &sortedDoc{doc: doc, pos: int(pos), keys: sort.Keys(doc)}
	return nil
}

// mergeCursor merges sorted runs; among equal keys the earlier run (the
// earlier documents) comes first, keeping the sort stable.
type mergeCursor struct {
	sort    *query.Sort
	proj    *query.Projection
	runs    []*runReader
	skip    int64
	cleanup func()
}

func (m *mergeCursor) Next() (bson.Raw, error) {
	for {
		var best *runReader
		for _, r := range m.runs {
			if r.cur != nil && (best == nil || m.sort.CompareKeys(r.cur.keys, best.cur.keys) < 0) {
				best = r
			}
		}
		if best == nil {
			return nil, nil
		}
		d := *best.cur
		if err := best.advance(m.sort); err != nil {
			return nil, err
		}
		if m.skip > 0 {
			m.skip--
			continue
		}
		if m.proj != nil {
			return m.proj.Apply(d.doc, d.pos)
		}
		return d.doc, nil
	}
}

func (m *mergeCursor) Close() error {
	m.runs = nil
	m.cleanup()
	return nil
}
