package aggregate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sorter"
)

// partitionDocs holds the documents of one $setWindowFields partition, in
// sortBy order, for random access by position. They stay in memory while
// they fit the stage's memory limit; past it, with allowDiskUse, they move
// to a temporary file read back by offset (MongoDB's spillable document
// cache), and only their offsets stay in memory. Without allowDiskUse the
// limit is QueryExceededMemoryLimitNoDiskUseAllowed.
type partitionDocs struct {
	rt   *runtime
	acct *sorter.Account
	mem  []bson.Raw
	held int64 // accounted bytes of mem

	f       *os.File
	w       *bufio.Writer
	offsets []int64 // where each spilled document starts
	end     int64
	cache   [64]cachedDoc // recently read spilled documents, by position
}

type cachedDoc struct {
	i   int
	doc bson.Raw
}

func newPartitionDocs(rt *runtime, acct *sorter.Account) *partitionDocs {
	return &partitionDocs{rt: rt, acct: acct}
}

// spilled reports whether the documents are on disk: values taken from
// them must then be copied to be kept (see partition.own).
func (d *partitionDocs) spilled() bool { return d.f != nil }

func (d *partitionDocs) len() int {
	if d.f != nil {
		return len(d.offsets)
	}
	return len(d.mem)
}

// add appends doc, spilling the partition when it outgrows the limit.
func (d *partitionDocs) add(doc bson.Raw) error {
	if d.f == nil {
		size := heldDocSize(doc)
		if d.held+size <= d.rt.memoryLimit() && d.acct.Grow(size) {
			d.mem = append(d.mem, doc)
			d.held += size
			return nil
		}
		if !d.rt.opts.AllowDiskUse {
			return d.rt.refused("$setWindowFields")
		}
		if err := d.spill(); err != nil {
			return err
		}
	}
	return d.write(doc)
}

// spill moves the documents held in memory to a new temporary file.
func (d *partitionDocs) spill() error {
	f, err := os.CreateTemp(d.rt.opts.TempDir, "folio-window-*")
	if err != nil {
		return fileError("create", err)
	}
	d.f, d.w = f, bufio.NewWriterSize(f, 256<<10)
	mem := d.mem
	d.mem = nil
	d.acct.Shrink(d.held)
	d.held = 0
	for _, doc := range mem {
		if err := d.write(doc); err != nil {
			return err
		}
	}
	return nil
}

func (d *partitionDocs) write(doc bson.Raw) error {
	if !d.acct.Grow(8) { // the offset
		return d.rt.refused("$setWindowFields")
	}
	d.offsets = append(d.offsets, d.end)
	if _, err := d.w.Write(doc); err != nil {
		return fileError("write", err)
	}
	d.end += int64(len(doc))
	return nil
}

// at is the document at position i. A spilled document is read into a
// buffer of its own, so values sliced from it stay valid.
func (d *partitionDocs) at(i int) (bson.Raw, error) {
	if d.f == nil {
		return d.mem[i], nil
	}
	if d.w.Buffered() > 0 {
		if err := d.w.Flush(); err != nil {
			return nil, fileError("write", err)
		}
	}
	slot := &d.cache[i%len(d.cache)]
	if slot.doc != nil && slot.i == i {
		return slot.doc, nil
	}
	var hdr [4]byte
	if _, err := d.f.ReadAt(hdr[:], d.offsets[i]); err != nil {
		return nil, fileError("read", err)
	}
	doc := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
	if _, err := d.f.ReadAt(doc, d.offsets[i]); err != nil && err != io.EOF {
		return nil, fileError("read", err)
	}
	slot.i, slot.doc = i, doc
	return doc, nil
}

// close deletes the spill file; the memory goes with the account.
func (d *partitionDocs) close() {
	if d.f != nil {
		d.f.Close()
		os.Remove(d.f.Name())
		d.f = nil
	}
}

func fileError(verb string, err error) error {
	return mongoerr.New(mongoerr.InternalError, "cannot %s $setWindowFields spill file: %v", verb, err)
}

// own returns v, copied out of its document when the partition is
// spilled, so that keeping it does not keep a whole document read back
// from disk.
func (p *partition) own(v bson.RawValue) bson.RawValue {
	if p.docs.spilled() {
		v.Value = bytes.Clone(v.Value)
	}
	return v
}
