package aggregate

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"io"
	"os"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/query"
)

// sortStage is $sort with find's ordering rules (an array sorts by its
// smallest element ascending, its largest descending; missing sorts as
// null). Followed by a $limit it keeps only the top limit documents.
// Beyond the memory limit it fails with
// QueryExceededMemoryLimitNoDiskUseAllowed unless allowDiskUse is set, in
// which case it writes sorted runs to temporary files and merges them.
type sortStage struct {
	spec  bson.Raw
	sort  *query.Sort
	limit int64 // 0: no limit
}

func parseSort(arg bson.RawValue) (stage, error) {
	if arg.Type != bson.TypeEmbeddedDocument {
		return nil, mongoerr.New(mongoerr.SortSpecNotObject, "the $sort key specification must be an object")
	}
	s, err := query.CompileSort(arg.Document())
	if err != nil {
		return nil, err
	}
	if s.Empty() {
		if s.Natural() != 0 {
			return nil, mongoerr.New(mongoerr.SortMetaOnly, "$natural is not allowed in a $sort stage")
		}
		return nil, mongoerr.New(mongoerr.SortSpecEmpty, "$sort stage must have at least one sort key")
	}
	return &sortStage{spec: arg.Document(), sort: s}, nil
}

// sortItem is a document with its sort key and arrival number (ties keep
// arrival order).
type sortItem struct {
	keys []bson.RawValue
	seq  int64
	doc  bson.Raw
	run  *runReader // the spilled run the item was read from, if any
}

// sortItemOverhead approximates the memory of a sort entry beyond its
// document.
const sortItemOverhead = 64

func (s *sortStage) less(a, b *sortItem) bool {
	if c := s.sort.CompareKeys(a.keys, b.keys); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}

func (s *sortStage) run(in Source, rt *runtime) Source {
	out := &sortSource{in: in}
	out.compute = func() error {
		if s.limit > 0 {
			return s.topK(in, rt, out)
		}
		return s.full(in, rt, out)
	}
	return out
}

// topK keeps the limit smallest documents in a max-heap.
func (s *sortStage) topK(in Source, rt *runtime, out *sortSource) error {
	h := &itemHeap{less: func(a, b *sortItem) bool { return s.less(b, a) }}
	var seq, mem int64
	for {
		doc, err := in.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			break
		}
		keys, err := s.sort.KeysErr(doc)
		if err != nil {
			return err
		}
		it := &sortItem{keys: keys, seq: seq, doc: doc}
		seq++
		if int64(h.Len()) < s.limit {
			heap.Push(h, it)
			if mem += int64(len(doc)) + sortItemOverhead; mem > rt.sortMemoryLimit() && !rt.opts.AllowDiskUse {
				return rt.overMemory("$sort")
			}
		} else if s.less(it, h.items[0]) {
			mem += int64(len(doc)) - int64(len(h.items[0].doc))
			h.items[0] = it
			heap.Fix(h, 0)
		}
	}
	items := h.items
	slices.SortFunc(items, func(a, b *sortItem) int { return s.cmp(a, b) })
	out.mem = items
	return nil
}

func (s *sortStage) cmp(a, b *sortItem) int {
	if s.less(a, b) {
		return -1
	}
	if s.less(b, a) {
		return 1
	}
	return 0
}

// full sorts every document, spilling sorted runs to disk when allowed.
func (s *sortStage) full(in Source, rt *runtime, out *sortSource) error {
	var items []*sortItem
	var seq, mem int64
	for {
		doc, err := in.Next()
		if err != nil {
			return err
		}
		if doc == nil {
			break
		}
		keys, err := s.sort.KeysErr(doc)
		if err != nil {
			return err
		}
		items = append(items, &sortItem{keys: keys, seq: seq, doc: doc})
		seq++
		if mem += int64(len(doc)) + sortItemOverhead; mem > rt.sortMemoryLimit() {
			if !rt.opts.AllowDiskUse {
				return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
					"Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", rt.sortMemoryLimit())
			}
			if err := out.spill(s, items, rt.opts.TempDir); err != nil {
				return err
			}
			items, mem = nil, 0
		}
	}
	slices.SortFunc(items, func(a, b *sortItem) int { return s.cmp(a, b) })
	if len(out.runs) == 0 {
		out.mem = items
		return nil
	}
	return out.startMerge(s, items)
}

// sortSource yields the sorted documents: from memory, or merged from the
// spilled runs and the in-memory rest.
type sortSource struct {
	in      Source
	compute func() error
	done    bool
	mem     []*sortItem
	runs    []*os.File
	merge   *itemHeap
	stage   *sortStage
}

func (o *sortSource) Next() (bson.Raw, error) {
	if !o.done {
		o.done = true
		if err := o.compute(); err != nil {
			return nil, err
		}
	}
	if o.merge != nil {
		return o.nextMerged()
	}
	if len(o.mem) == 0 {
		return nil, nil
	}
	d := o.mem[0].doc
	o.mem[0] = nil
	o.mem = o.mem[1:]
	return d, nil
}

func (o *sortSource) Close() error {
	for _, f := range o.runs {
		f.Close()
		os.Remove(f.Name())
	}
	o.runs, o.mem, o.merge = nil, nil, nil
	return o.in.Close()
}

// spill writes items, sorted, to a new temporary file.
func (o *sortSource) spill(s *sortStage, items []*sortItem, dir string) error {
	slices.SortFunc(items, func(a, b *sortItem) int { return s.cmp(a, b) })
	f, err := os.CreateTemp(dir, "folio-sort-*")
	if err != nil {
		return mongoerr.New(mongoerr.InternalError, "cannot spill $sort to disk: %v", err)
	}
	o.runs = append(o.runs, f)
	w := bufio.NewWriterSize(f, 1<<20)
	for _, it := range items {
		if _, err := w.Write(it.doc); err != nil {
			return mongoerr.New(mongoerr.InternalError, "cannot spill $sort to disk: %v", err)
		}
	}
	if err := w.Flush(); err != nil {
		return mongoerr.New(mongoerr.InternalError, "cannot spill $sort to disk: %v", err)
	}
	return nil
}

// runReader reads the documents of one spilled run in order.
type runReader struct {
	r   *bufio.Reader
	run int64
}

func (r *runReader) next() (bson.Raw, error) {
	var n [4]byte
	if _, err := io.ReadFull(r.r, n[:]); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, err
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size < 5 {
		return nil, mongoerr.New(mongoerr.InternalError, "corrupt $sort spill file")
	}
	doc := make([]byte, size)
	copy(doc, n[:])
	if _, err := io.ReadFull(r.r, doc[4:]); err != nil {
		return nil, err
	}
	return doc, nil
}

// startMerge opens every run and the in-memory rest for a k-way merge.
// A merged item's arrival number is the index of its run (the in-memory
// rest last), so documents that arrived earlier win ties.
func (o *sortSource) startMerge(s *sortStage, rest []*sortItem) error {
	o.stage = s
	o.merge = &itemHeap{less: s.less}
	for i, f := range o.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return mongoerr.New(mongoerr.InternalError, "cannot read $sort spill: %v", err)
		}
		r := &runReader{r: bufio.NewReaderSize(f, 256<<10), run: int64(i)}
		if err := o.pushRun(r); err != nil {
			return err
		}
	}
	o.mem = rest
	o.pushMem()
	return nil
}

// pushRun moves the next document of run r into the merge heap.
func (o *sortSource) pushRun(r *runReader) error {
	doc, err := r.next()
	if err != nil {
		return mongoerr.New(mongoerr.InternalError, "cannot read $sort spill: %v", err)
	}
	if doc != nil {
		heap.Push(o.merge, &sortItem{keys: o.stage.sort.Keys(doc), seq: r.run, doc: doc, run: r})
	}
	return nil
}

// pushMem moves the next in-memory document into the merge heap.
func (o *sortSource) pushMem() {
	if len(o.mem) > 0 {
		it := o.mem[0]
		o.mem = o.mem[1:]
		it.seq = int64(len(o.runs))
		heap.Push(o.merge, it)
	}
}

func (o *sortSource) nextMerged() (bson.Raw, error) {
	if o.merge.Len() == 0 {
		return nil, nil
	}
	it := heap.Pop(o.merge).(*sortItem)
	if it.run == nil {
		o.pushMem()
		return it.doc, nil
	}
	return it.doc, o.pushRun(it.run)
}

// itemHeap is a heap of sort items under less.
type itemHeap struct {
	items []*sortItem
	less  func(a, b *sortItem) bool
}

func (h *itemHeap) Len() int           { return len(h.items) }
func (h *itemHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *itemHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *itemHeap) Push(x any)         { h.items = append(h.items, x.(*sortItem)) }
func (h *itemHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return it
}
