package sorter

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/docsrc"
	"github.com/folio-db/folio/internal/mongoerr"
)

// spillFile holds a sorter's spilled runs, one after the other in one
// temporary file, so a sort that spills often needs one descriptor. A
// record is the key's length (uvarint), the key, the entry's Aux (varint),
// a byte of flags telling which metadata follows (text score, $geoNear's
// distance and point, index key, record id, sort key) and the document,
// which carries its own length: every field of docsrc.Meta survives a spill.
type spillFile struct {
	dir  string
	f    *os.File
	w    *bufio.Writer
	end  int64   // bytes written
	runs []int64 // the offset where each run starts; a run ends where the next starts
}

func (s *spillFile) fail(verb string, err error) error {
	return mongoerr.New(mongoerr.InternalError, "cannot %s sort spill file: %v", verb, err)
}

// writeRun appends sorted entries as one run.
func (s *spillFile) writeRun(entries []Entry) error {
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "folio-sort-*")
		if err != nil {
			return s.fail("create", err)
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 256<<10)
	}
	s.runs = append(s.runs, s.end)
	var hdr [2 * binary.MaxVarintLen64]byte
	// A bufio.Writer keeps its first error; Flush reports it.
	for _, e := range entries {
		n := binary.PutUvarint(hdr[:], uint64(len(e.Key)))
		s.w.Write(hdr[:n])
		s.w.Write(e.Key)
		m := binary.PutVarint(hdr[:], e.Aux)
		s.w.Write(hdr[:m])
		// The metadata: a byte of flags, then the text score, the
		// $geoNear distance and point (its BSON type, its length, then its
		// bytes), the index key, the record id (its length, then its
		// bytes) and the sort key each has.
		var flags byte
		if e.Meta.HasTextScore {
			flags |= spillTextScore
		}
		if e.Meta.HasGeoNear {
			flags |= spillGeoNear
		}
		if e.Meta.IndexKey != nil {
			flags |= spillIndexKey
		}
		if e.Meta.RecordID != nil {
			flags |= spillRecordID
		}
		if e.Meta.SortKey != nil {
			flags |= spillSortKey
		}
		s.w.WriteByte(flags)
		m++
		if e.Meta.HasTextScore {
			binary.LittleEndian.PutUint64(hdr[m:], math.Float64bits(e.Meta.TextScore))
			s.w.Write(hdr[m : m+8])
			m += 8
		}
		if e.Meta.HasGeoNear {
			binary.LittleEndian.PutUint64(hdr[:], math.Float64bits(e.Meta.GeoNearDistance))
			hdr[8] = byte(e.Meta.GeoNearPoint.Type)
			l := 9 + binary.PutUvarint(hdr[9:], uint64(len(e.Meta.GeoNearPoint.Value)))
			s.w.Write(hdr[:l])
			s.w.Write(e.Meta.GeoNearPoint.Value)
			m += l + len(e.Meta.GeoNearPoint.Value)
		}
		if e.Meta.IndexKey != nil {
			s.w.Write(e.Meta.IndexKey)
			m += len(e.Meta.IndexKey)
		}
		if e.Meta.RecordID != nil {
			l := binary.PutUvarint(hdr[:], uint64(len(e.Meta.RecordID)))
			s.w.Write(hdr[:l])
			s.w.Write(e.Meta.RecordID)
			m += l + len(e.Meta.RecordID)
		}
		if e.Meta.SortKey != nil {
			s.w.Write(e.Meta.SortKey)
			m += len(e.Meta.SortKey)
		}
		s.w.Write(e.Doc)
		s.end += int64(n + len(e.Key) + m + len(e.Doc))
	}
	if err := s.w.Flush(); err != nil {
		return s.fail("write", err)
	}
	return nil
}

// readers opens every run for reading, each with a buffer of bufSize.
func (s *spillFile) readers(bufSize int) []*runReader {
	out := make([]*runReader, len(s.runs))
	for i, start := range s.runs {
		end := s.end
		if i+1 < len(s.runs) {
			end = s.runs[i+1]
		}
		out[i] = &runReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, start, end-start), bufSize)}
	}
	return out
}

// remove closes and deletes the file.
func (s *spillFile) remove() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f, s.w, s.runs, s.end = nil, nil, nil, 0
	}
}

// runReader reads the entries of one run: from the spill file, or from
// memory (r nil).
type runReader struct {
	r   *bufio.Reader
	mem []Entry
}

// next reads the run's next entry; ok is false at its end.
func (r *runReader) next() (e Entry, ok bool, err error) {
	if r.r == nil {
		if len(r.mem) == 0 {
			return Entry{}, false, nil
		}
		e, r.mem = r.mem[0], r.mem[1:]
		return e, true, nil
	}
	klen, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	e.Key = make([]byte, klen)
	if _, err := io.ReadFull(r.r, e.Key); err != nil {
		return Entry{}, false, err
	}
	if e.Aux, err = binary.ReadVarint(r.r); err != nil {
		return Entry{}, false, err
	}
	var n [8]byte
	if _, err := io.ReadFull(r.r, n[:1]); err != nil {
		return Entry{}, false, err
	}
	flags := n[0]
	if flags&spillTextScore != 0 {
		if _, err := io.ReadFull(r.r, n[:8]); err != nil {
			return Entry{}, false, err
		}
		e.Meta = docsrc.Meta{TextScore: math.Float64frombits(binary.LittleEndian.Uint64(n[:])), HasTextScore: true}
	}
	if flags&spillGeoNear != 0 {
		if _, err := io.ReadFull(r.r, n[:8]); err != nil {
			return Entry{}, false, err
		}
		e.Meta.GeoNearDistance, e.Meta.HasGeoNear = math.Float64frombits(binary.LittleEndian.Uint64(n[:])), true
		t, err := r.r.ReadByte()
		if err != nil {
			return Entry{}, false, err
		}
		l, err := binary.ReadUvarint(r.r)
		if err != nil {
			return Entry{}, false, err
		}
		e.Meta.GeoNearPoint = bson.RawValue{Type: bson.Type(t), Value: make([]byte, l)}
		if _, err := io.ReadFull(r.r, e.Meta.GeoNearPoint.Value); err != nil {
			return Entry{}, false, err
		}
	}
	if flags&spillIndexKey != 0 {
		if e.Meta.IndexKey, err = readDoc(r.r); err != nil {
			return Entry{}, false, err
		}
	}
	if flags&spillRecordID != 0 {
		l, err := binary.ReadUvarint(r.r)
		if err != nil {
			return Entry{}, false, err
		}
		e.Meta.RecordID = make([]byte, l)
		if _, err := io.ReadFull(r.r, e.Meta.RecordID); err != nil {
			return Entry{}, false, err
		}
	}
	if flags&spillSortKey != 0 {
		if e.Meta.SortKey, err = readDoc(r.r); err != nil {
			return Entry{}, false, err
		}
	}
	if e.Doc, err = readDoc(r.r); err != nil {
		return Entry{}, false, err
	}
	return e, true, nil
}

// The flags of an entry's metadata in a spill file.
const (
	spillTextScore = 1 << iota
	spillIndexKey
	spillRecordID
	spillSortKey
	spillGeoNear
)

// readDoc reads a BSON document.
func readDoc(r *bufio.Reader) (bson.Raw, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(n[:])
	if size < 5 {
		return nil, io.ErrUnexpectedEOF
	}
	doc := make(bson.Raw, size)
	copy(doc, n[:])
	if _, err := io.ReadFull(r, doc[4:]); err != nil {
		return nil, err
	}
	return doc, nil
}
