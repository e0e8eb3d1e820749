package aggregate

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"io"
	"os"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
)

// keyedRecord is one entry of a keyed spill: an order-preserving key
// (keyenc bytes, so equal values have equal keys) and a BSON payload.
type keyedRecord struct {
	key []byte
	doc bson.Raw
}

// recordOverhead approximates the memory of a keyed record beyond its key
// and payload.
const recordOverhead = 48

// keyedRuns are the sorted runs a blocking stage ($group, $bucketAuto)
// wrote to temporary files with allowDiskUse, as MongoDB's sorter does:
// each run holds records sorted by key, and runs are numbered in the order
// their input arrived, so merging them by (key, run) keeps equal keys in
// arrival order.
type keyedRuns struct {
	what  string // the stage, for error messages
	dir   string
	files []*os.File
}

func (k *keyedRuns) fail(verb string, err error) error {
	return mongoerr.New(mongoerr.InternalError, "cannot %s %s spill file: %v", verb, k.what, err)
}

// write stores recs, which the caller has sorted by key, as a new run.
// A record is its key length (4 bytes, little-endian), the key, and the
// BSON payload.
func (k *keyedRuns) write(recs []keyedRecord) error {
	f, err := os.CreateTemp(k.dir, "folio-spill-*")
	if err != nil {
		return k.fail("create", err)
	}
	k.files = append(k.files, f)
	w := bufio.NewWriterSize(f, 1<<20)
	var n [4]byte
	// A bufio.Writer keeps its first error; Flush reports it.
	for _, r := range recs {
		binary.LittleEndian.PutUint32(n[:], uint32(len(r.key)))
		w.Write(n[:])
		w.Write(r.key)
		w.Write(r.doc)
	}
	if err := w.Flush(); err != nil {
		return k.fail("write", err)
	}
	return nil
}

// remove closes and deletes every run.
func (k *keyedRuns) remove() {
	for _, f := range k.files {
		f.Close()
		os.Remove(f.Name())
	}
	k.files = nil
}

// merge returns the records of every run and of rest (sorted by key, the
// input that arrived after the last run) in key order; equal keys come in
// run order, rest last. It may be called again to read everything anew.
func (k *keyedRuns) merge(rest []keyedRecord) (*keyedMerge, error) {
	m := &keyedMerge{runs: k}
	for i, f := range k.files {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, k.fail("read", err)
		}
		c := &runCursor{run: i, r: bufio.NewReaderSize(f, 256<<10)}
		if err := m.advance(c); err != nil {
			return nil, err
		}
	}
	if err := m.advance(&runCursor{run: len(k.files), mem: rest}); err != nil {
		return nil, err
	}
	return m, nil
}

// runCursor reads one run (from a file, or from memory) and holds its
// current record.
type runCursor struct {
	run int
	r   *bufio.Reader
	mem []keyedRecord
	cur keyedRecord
}

// next reads the cursor's next record; ok is false at the end of the run.
func (c *runCursor) next() (ok bool, err error) {
	if c.r == nil {
		if len(c.mem) == 0 {
			return false, nil
		}
		c.cur, c.mem = c.mem[0], c.mem[1:]
		return true, nil
	}
	var n [4]byte
	if _, err := io.ReadFull(c.r, n[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, err
	}
	key := make([]byte, binary.LittleEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c.r, key); err != nil {
		return false, err
	}
	if _, err := io.ReadFull(c.r, n[:]); err != nil {
		return false, err
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size < 5 {
		return false, io.ErrUnexpectedEOF
	}
	doc := make([]byte, size)
	copy(doc, n[:])
	if _, err := io.ReadFull(c.r, doc[4:]); err != nil {
		return false, err
	}
	c.cur = keyedRecord{key: key, doc: doc}
	return true, nil
}

// keyedMerge is a k-way merge of runs by (key, run).
type keyedMerge struct {
	runs    *keyedRuns
	cursors []*runCursor
}

// advance moves c to its next record and back into the heap, or drops it
// at the end of its run.
func (m *keyedMerge) advance(c *runCursor) error {
	ok, err := c.next()
	if err != nil {
		return m.runs.fail("read", err)
	}
	if ok {
		heap.Push(m, c)
	}
	return nil
}

// peek is the next record without consuming it; ok is false at the end.
func (m *keyedMerge) peek() (keyedRecord, bool) {
	if len(m.cursors) == 0 {
		return keyedRecord{}, false
	}
	return m.cursors[0].cur, true
}

// next consumes the next record; ok is false at the end.
func (m *keyedMerge) next() (keyedRecord, bool, error) {
	if len(m.cursors) == 0 {
		return keyedRecord{}, false, nil
	}
	c := heap.Pop(m).(*runCursor)
	r := c.cur
	return r, true, m.advance(c)
}

func (m *keyedMerge) Len() int { return len(m.cursors) }
func (m *keyedMerge) Less(i, j int) bool {
	a, b := m.cursors[i], m.cursors[j]
	if c := bytes.Compare(a.cur.key, b.cur.key); c != 0 {
		return c < 0
	}
	return a.run < b.run
}
func (m *keyedMerge) Swap(i, j int) { m.cursors[i], m.cursors[j] = m.cursors[j], m.cursors[i] }
func (m *keyedMerge) Push(x any)    { m.cursors = append(m.cursors, x.(*runCursor)) }
func (m *keyedMerge) Pop() any {
	c := m.cursors[len(m.cursors)-1]
	m.cursors = m.cursors[:len(m.cursors)-1]
	return c
}
