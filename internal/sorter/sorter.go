// Package sorter is Folio's one external sort, used by find's sort, the
// $sort stage and the spills of $group and $bucketAuto, as MongoDB's
// sorter is. Entries are ordered by an order-preserving byte key (keyenc),
// equal keys in arrival order. Memory is accounted per entry (Account)
// against the operation's limit and the process-wide Budget; past either
// the sorter writes its entries as a sorted run to a temporary file when
// disk use is allowed, or fails with
// QueryExceededMemoryLimitNoDiskUseAllowed, and the runs are merged k ways
// on output. With a limit it is a bounded top-k sort that holds at most
// limit entries.
package sorter

import (
	"bytes"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// Entry is one sorted document: its key, the document, and a value the
// caller carries along (find's positional-match index).
type Entry struct {
	Key []byte
	Doc bson.Raw
	Aux int64
	// Meta is the document's metadata ({$meta: ...}), kept with it.
	Meta docsrc.Meta
}

// Options configure a Sorter.
type Options struct {
	// Limit keeps only the first Limit entries (a top-k sort); 0 keeps
	// all of them.
	Limit int64
	// MaxMemory is the operation's limit in bytes
	// (internalQueryMaxBlockingSortMemoryUsageBytes for sorts).
	MaxMemory int64
	// AllowDisk lets the sorter spill past MaxMemory or the budget.
	AllowDisk bool
	// TempDir holds the spill file; "" is the system's temporary directory.
	TempDir string
	// Budget is the process-wide budget; nil is Global().
	Budget *Budget
	// OverMemory builds the error of a sort past its memory without disk
	// use; nil gives MongoDB's message of a sort.
	OverMemory func(limit int64) error
}

// item is an entry with its arrival number, which breaks ties of the
// top-k heap.
type item struct {
	Entry
	seq int64
}

func compareItems(a, b item) int {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return int(a.seq - b.seq)
}

// Sorter sorts entries, spilling to disk when allowed. It is not safe for
// concurrent use; Close releases its memory and removes its file.
type Sorter struct {
	opts   Options
	acct   *Account
	buf    []item // top-k: a max-heap by (key, seq)
	seq    int64
	sorted bool
	file   spillFile
	// cutoff, set when a full top-k heap spilled, is the largest key it
	// wrote: a later entry with a key at or above it cannot be among the
	// first Limit.
	cutoff []byte
	// added is the memory (Size) of the entries Add took in: explain's
	// totalDataSizeSorted.
	added int64
}

// New returns an empty sorter.
func New(o Options) *Sorter {
	return &Sorter{opts: o, acct: NewAccount(o.MaxMemory, o.Budget), file: spillFile{dir: o.TempDir}}
}

// Account is the sorter's memory, for a stage that holds its own table
// and spills it through SpillRun.
func (s *Sorter) Account() *Account { return s.acct }

// Spilled is the number of runs written to disk, and SpilledBytes the
// size of the spill file they make.
func (s *Sorter) Spilled() int        { return len(s.file.runs) }
func (s *Sorter) SpilledBytes() int64 { return s.file.end }

// Sorted is the number of entries added (Add or Put), and DataSize the
// memory of those Add took in (a top-k sort's entries refused on arrival
// not included): MongoDB's SORT stage reports how much data it sorted
// (totalDataSizeSorted).
func (s *Sorter) Sorted() int64   { return s.seq }
func (s *Sorter) DataSize() int64 { return s.added }

func (s *Sorter) overMemory() error {
	if s.opts.OverMemory != nil {
		return s.opts.OverMemory(s.opts.MaxMemory)
	}
	return mongoerr.New(mongoerr.QueryExceededMemoryLimitNoDiskUseAllowed,
		"Sort exceeded memory limit of %d bytes, but did not opt in to external sorting.", s.opts.MaxMemory)
}

// Add adds an entry, after those added before it.
func (s *Sorter) Add(e Entry) error {
	it := item{e, s.seq}
	s.seq++
	if s.opts.Limit > 0 {
		if s.cutoff != nil && bytes.Compare(e.Key, s.cutoff) >= 0 {
			return nil
		}
		if int64(len(s.buf)) == s.opts.Limit {
			// The heap's root, its largest entry, arrived earlier: it
			// wins a tie.
			if compareItems(it, s.buf[0]) >= 0 {
				return nil
			}
			s.popRoot()
		}
	}
	n := Size(len(e.Key), len(e.Doc)+len(e.Meta.GeoNearPoint.Value)+len(e.Meta.IndexKey)+len(e.Meta.RecordID)+len(e.Meta.SortKey))
	s.added += n
	if !s.acct.Grow(n) {
		if !s.opts.AllowDisk {
			return s.overMemory()
		}
		if err := s.spill(); err != nil {
			return err
		}
		if !s.acct.Grow(n) {
			// Alone it does not fit: it is a run of its own.
			return s.file.writeRun([]Entry{e})
		}
	}
	s.buf = append(s.buf, it)
	s.sorted = false
	if s.opts.Limit > 0 {
		s.up(len(s.buf) - 1)
	}
	return nil
}

// Put adds an entry whose memory the caller already accounted for in
// Account.
func (s *Sorter) Put(e Entry) {
	s.buf = append(s.buf, item{e, s.seq})
	s.seq++
	s.sorted = false
}

// spill writes the held entries as a sorted run and frees their memory.
func (s *Sorter) spill() error {
	if len(s.buf) > 0 {
		full := s.opts.Limit > 0 && int64(len(s.buf)) == s.opts.Limit
		s.sortBuf()
		if full {
			s.cutoff = s.buf[len(s.buf)-1].Key
		}
		entries := make([]Entry, len(s.buf))
		for i := range s.buf {
			entries[i] = s.buf[i].Entry
		}
		if err := s.file.writeRun(entries); err != nil {
			return err
		}
		clear(s.buf)
		s.buf = s.buf[:0]
	}
	s.acct.Release()
	return nil
}

// SpillRun writes entries, which a stage held in its own table and
// accounted in Account, as a run sorted by key (equal keys in the order
// given), and releases the sorter's memory.
func (s *Sorter) SpillRun(entries []Entry) error {
	slices.SortStableFunc(entries, func(a, b Entry) int { return bytes.Compare(a.Key, b.Key) })
	if err := s.file.writeRun(entries); err != nil {
		return err
	}
	s.acct.Release()
	return nil
}

func (s *Sorter) sortBuf() {
	if !s.sorted {
		slices.SortFunc(s.buf, compareItems)
		s.sorted = true
	}
}

// up and down keep buf a max-heap by (key, seq).
func (s *Sorter) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if compareItems(s.buf[i], s.buf[p]) <= 0 {
			return
		}
		s.buf[i], s.buf[p] = s.buf[p], s.buf[i]
		i = p
	}
}

func (s *Sorter) down(i int) {
	n := len(s.buf)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && compareItems(s.buf[c+1], s.buf[c]) > 0 {
			c++
		}
		if compareItems(s.buf[c], s.buf[i]) <= 0 {
			return
		}
		s.buf[i], s.buf[c] = s.buf[c], s.buf[i]
		i = c
	}
}

// popRoot drops the largest entry of the top-k heap.
func (s *Sorter) popRoot() {
	last := len(s.buf) - 1
	s.acct.Shrink(Size(len(s.buf[0].Key), len(s.buf[0].Doc)))
	s.buf[0] = s.buf[last]
	s.buf[last] = item{}
	s.buf = s.buf[:last]
	s.down(0)
}

// Iterate returns the entries in order: the spilled runs merged with the
// held entries, at most Limit of them. It may be called again to read
// them anew; the entries stay valid until Close.
func (s *Sorter) Iterate() (*Iterator, error) {
	s.sortBuf()
	mem := make([]Entry, len(s.buf))
	for i := range s.buf {
		mem[i] = s.buf[i].Entry
	}
	bufSize := min(max(4<<20/(len(s.file.runs)+1), 4<<10), 256<<10)
	readers := append(s.file.readers(bufSize), &runReader{mem: mem})
	it := &Iterator{left: s.opts.Limit, fail: s.file.fail}
	if it.left == 0 {
		it.left = -1
	}
	for i, r := range readers {
		if err := it.advance(&cursor{r: r, run: i}); err != nil {
			return nil, err
		}
	}
	return it, nil
}

// Close frees the sorter's memory and removes its spill file.
func (s *Sorter) Close() {
	s.file.remove()
	s.acct.Release()
	s.buf = nil
}
