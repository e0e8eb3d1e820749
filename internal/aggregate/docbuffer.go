package aggregate

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/sorter"
)

// docBuffer holds documents a stage produces or must revisit (a
// $setWindowFields partition, the output of $densify), for access by
// position. They stay in memory while they fit the stage's memory limit;
// past it, with allowDiskUse, they move to a temporary file read back by
// offset (MongoDB's spillable document cache), and only their offsets stay
// in memory. Without allowDiskUse passing the limit fails with over's
// error (QueryExceededMemoryLimitNoDiskUseAllowed unless the stage sets
// its own). A document held in memory
// keeps its metadata ({$meta: ...}); a spilled one loses it, as MongoDB's
// SpillableCache writes a document's fields alone (Document::toBson).
type docBuffer struct {
	rt    *runtime
	acct  *sorter.Account
	stage string // for errors
	limit int64  // what mem may hold
	// over is the error of a stage past limit (without allowDiskUse) or
	// refused by its account, need bytes more wanted.
	over  func(need int64) error
	mem   []bson.Raw
	metas []docsrc.Meta // mem's metadata; nil until a document has some
	held  int64         // accounted bytes of mem

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

func newDocBuffer(rt *runtime, acct *sorter.Account, stage string) *docBuffer {
	d := &docBuffer{rt: rt, acct: acct, stage: stage, limit: rt.memoryLimit()}
	d.over = func(int64) error { return rt.refused(stage) }
	return d
}

// spilled reports whether the documents are on disk: values taken from
// them must then be copied to be kept (see partition.own).
func (d *docBuffer) spilled() bool { return d.f != nil }

func (d *docBuffer) len() int {
	if d.f != nil {
		return len(d.offsets)
	}
	return len(d.mem)
}

// add appends doc with its metadata, spilling the partition when it
// outgrows the limit.
func (d *docBuffer) add(doc bson.Raw, meta docsrc.Meta) error {
	if d.f == nil {
		has := hasMeta(meta)
		size := heldDocSize(doc)
		if has || d.metas != nil {
			size += heldMetaSize(meta)
		}
		if d.held+size <= d.limit && d.acct.Grow(size) {
			if has && d.metas == nil {
				d.metas = make([]docsrc.Meta, len(d.mem), cap(d.mem))
			}
			if d.metas != nil {
				d.metas = append(d.metas, meta)
			}
			d.mem = append(d.mem, doc)
			d.held += size
			return nil
		}
		if !d.rt.opts.AllowDiskUse {
			return d.over(size)
		}
		if err := d.spill(); err != nil {
			return err
		}
	}
	return d.write(doc)
}

// spill moves the documents held in memory to a new temporary file.
func (d *docBuffer) spill() error {
	f, err := os.CreateTemp(d.rt.opts.TempDir, "folio-stage-*")
	if err != nil {
		return d.fileError("create", err)
	}
	d.f, d.w = f, bufio.NewWriterSize(f, 256<<10)
	mem := d.mem
	d.mem, d.metas = nil, nil
	d.acct.Shrink(d.held)
	d.held = 0
	for _, doc := range mem {
		if err := d.write(doc); err != nil {
			return err
		}
	}
	return nil
}

func (d *docBuffer) write(doc bson.Raw) error {
	if !d.acct.Grow(8) { // the offset
		return d.over(8)
	}
	d.offsets = append(d.offsets, d.end)
	if _, err := d.w.Write(doc); err != nil {
		return d.fileError("write", err)
	}
	d.end += int64(len(doc))
	return nil
}

// at is the document at position i. A spilled document is read into a
// buffer of its own, so values sliced from it stay valid.
func (d *docBuffer) at(i int) (bson.Raw, error) {
	if d.f == nil {
		return d.mem[i], nil
	}
	if d.w.Buffered() > 0 {
		if err := d.w.Flush(); err != nil {
			return nil, d.fileError("write", err)
		}
	}
	slot := &d.cache[i%len(d.cache)]
	if slot.doc != nil && slot.i == i {
		return slot.doc, nil
	}
	var hdr [4]byte
	if _, err := d.f.ReadAt(hdr[:], d.offsets[i]); err != nil {
		return nil, d.fileError("read", err)
	}
	doc := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
	if _, err := d.f.ReadAt(doc, d.offsets[i]); err != nil && err != io.EOF {
		return nil, d.fileError("read", err)
	}
	slot.i, slot.doc = i, doc
	return doc, nil
}

// meta is the metadata of the document at position i: none once spilled.
func (d *docBuffer) meta(i int) docsrc.Meta {
	if d.metas == nil || d.f != nil {
		return docsrc.Meta{}
	}
	return d.metas[i]
}

// heldMetaSize is what holding m costs: the struct and the bytes it
// points to.
func heldMetaSize(m docsrc.Meta) int64 {
	return 96 + int64(len(m.GeoNearPoint.Value)+len(m.IndexKey)+len(m.RecordID)+len(m.SortKey))
}

// hasMeta reports whether m carries any metadata.
func hasMeta(m docsrc.Meta) bool {
	return m.HasTextScore || m.HasGeoNear || m.IndexKey != nil || m.RecordID != nil || m.SortKey != nil
}

// close deletes the spill file; the memory goes with the account.
func (d *docBuffer) close() {
	if d.f != nil {
		d.f.Close()
		os.Remove(d.f.Name())
		d.f = nil
	}
}

func (d *docBuffer) fileError(verb string, err error) error {
	return mongoerr.New(mongoerr.InternalError, "cannot %s %s spill file: %v", verb, d.stage, err)
}

// bufferSource serves the documents fill puts in a docBuffer, filling it on
// the first Next.
type bufferSource struct {
	in    Source
	rt    *runtime
	stage string
	fill  func(*docBuffer) error
	acct  *sorter.Account
	buf   *docBuffer
	pos   int
}

func (b *bufferSource) Next() (bson.Raw, error) {
	if b.buf == nil {
		b.acct = b.rt.holdAccount()
		b.buf = newDocBuffer(b.rt, b.acct, b.stage)
		if err := b.fill(b.buf); err != nil {
			return nil, err
		}
	}
	if b.pos >= b.buf.len() {
		return nil, nil
	}
	b.pos++
	return b.buf.at(b.pos - 1)
}

// Meta is the metadata of the document returned last.
func (b *bufferSource) Meta() docsrc.Meta {
	if b.buf == nil || b.pos == 0 {
		return docsrc.Meta{}
	}
	return b.buf.meta(b.pos - 1)
}

func (b *bufferSource) Close() error {
	if b.buf != nil {
		b.buf.close()
		b.acct.Release()
	}
	return b.in.Close()
}
