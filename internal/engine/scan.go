package engine

import (
	"bytes"
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/keyenc"
	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/planner"
	"github.com/folio-db/folio/internal/storage"
)

// docSource yields the candidate documents of a read or write, in the
// order of its plan. Next returns nil at the end; the document is valid
// until the next call.
type docSource interface {
	Next() (bson.Raw, error)
	Close() error
}

// planSource walks a plan's intervals over r with one iterator. For an
// index plan it fetches each document once (a multikey index may list a
// document under several keys).
type planSource struct {
	r      storage.Reader
	p      *planner.Plan
	collID uint32
	// prefix is the storage span the plan scans (the collection's
	// documents, its insertion order, or one index); ivs are the plan's
	// intervals within it.
	prefix  []byte
	ivs     []interval
	it      storage.Iter
	next    int  // the interval to open next
	inRange bool // the iterator is inside interval next-1
	// sought is set when a failed key check repositioned the iterator,
	// which advance then checks without stepping.
	sought bool
	// seen holds the encoded _ids of the documents yielded: by an index
	// scan (a multikey index may list a document under several keys), or
	// by every scan of a union.
	seen  map[string]struct{}
	stats *OpStats
	// ctx is the operation's context, looked at for each key the scan
	// passes over (a failed key check, a duplicate) without yielding a
	// document; the documents it yields are checked by their consumer.
	ctx    context.Context
	closer func() error
	// hints, when set, are the index's seek hints, with the epoch and hint
	// clock read before the snapshot was taken.
	hints     *seekHints
	hintEpoch uint64
	hintNow   uint64
	// hinting is set while the scan looks for the first key of the
	// interval it just opened at hintStart.
	hinting   bool
	hintStart []byte
	// covBuf holds the last document a covered read built; docBuf the
	// last one decoded (see docOf).
	covBuf []byte
	docBuf []byte
	// keys is set when the documents carry their index keys
	// (giveIndexKeys), idIndex when the document store serves as the _id
	// index; last is the document Next returned last, and lastKey and
	// lastEntry the key and value of the index entry it came through (a
	// unique point's key is its interval's start).
	keys, idIndex      bool
	last               bson.Raw
	lastKey, lastEntry []byte
	// ids is set when the documents carry their record ids
	// (giveRecordIDs); lastID is then the record id (encoded _id) of the
	// document Next returned last.
	ids    bool
	lastID []byte
	// lastNatural is, on a natural scan, the insertion-order key of the
	// document Next returned last, which a capped collection's cursor
	// must find again when it resumes (scanCursor.Restore).
	lastNatural []byte
	// point is the document of a point plan (one _id, or one key of a
	// unique index), read at once, and pointID its record id.
	point     bson.Raw
	pointID   []byte
	pointDone bool
	// parkable is set for a scan outside a transaction, which its cursor
	// parks between getMores (park); parked is then set until the next
	// read, parkKey is the key the iterator was at (nil: past its
	// interval) and parkErr the error closing it returned.
	parkable, parked bool
	parkKey          []byte
	parkErr          error
	// clustered: the collection is clustered, with no _id index whose key
	// a point read of one _id examines (OpStats.idKeyRead).
	clustered bool
	// doneKey is set when the scan counted the key past its last interval
	// (passedKey), on which MongoDB's scan ends.
	doneKey bool
	// replay holds the documents a trial's winner returned during its
	// trial, which Next returns first (see trialResult.cont).
	replay []trialDoc
	// seeks and dupsDropped count, for explain's IXSCAN, the times the
	// scan positioned its iterator (each interval it opens, each failed
	// key check that seeks) and the keys it passed over as a document's
	// second: counted on those branches only, never for a document it
	// yields (and in the same allocation size class).
	seeks, dupsDropped int64
	// own is set, while an explain runs an index union, to the record ids
	// this scan found (see countedSource): a document another of the
	// union's scans yielded first is this scan's own the first time it
	// meets it (its IXSCAN advances it, the OR above drops it).
	own map[string]struct{}
}

func newPlanSource(ctx context.Context, r storage.Reader, collID uint32, p *planner.Plan, stats *OpStats, closer func() error) (*planSource, error) {
	s := &planSource{r: r, p: p, collID: collID, stats: stats, closer: closer, ctx: ctx}
	switch {
	case p.Natural:
		s.prefix = naturalPrefix(collID)
	case p.Index != nil:
		s.prefix = indexPrefix(collID, indexOf(p).ID)
	default:
		s.prefix = docPrefix(collID)
	}
	if p.IDPoint() {
		// One _id: a point read, with no iterator to set up.
		doc, found, err := getDoc(r, append(s.prefix, p.Intervals[0].Lo...), &s.docBuf)
		s.point, s.pointID, s.pointDone = doc, p.Intervals[0].Lo, !found
		return s, err
	}
	if p.UniquePoint() && p.Covered() == nil && !p.CountScan() {
		// One key of a unique index (a sharded collection's _id): two
		// point reads, the entry then its document.
		s.pointDone = true
		s.seeks++
		entry, found, err := r.Get(append(s.prefix, p.Intervals[0].Lo...))
		if err != nil || !found {
			return s, err
		}
		stats.KeysExamined++
		s.pointID = entryID(entry)
		s.lastEntry = entry
		doc, found, err := getDoc(r, docKeyFromEncodedID(collID, s.pointID), &s.docBuf)
		s.point, s.pointDone = doc, !found
		return s, err
	}
	end := keyenc.PrefixEnd(s.prefix)
	if p.Intervals == nil {
		s.ivs = []interval{{lo: s.prefix, hi: end}}
	}
	for _, iv := range p.Intervals {
		abs := interval{lo: append(slices.Clip(s.prefix), iv.Lo...), hi: end}
		if len(iv.Hi) > 0 {
			abs.hi = append(slices.Clip(s.prefix), iv.Hi...)
		}
		if p.HasChecks() {
			if seek := p.IntervalSeek(iv.Lo, iv.Hi); seek != nil {
				abs.seek = append(slices.Clip(s.prefix), seek...)
			}
		}
		s.ivs = append(s.ivs, abs)
	}
	it, err := s.openIter()
	if err != nil {
		return nil, err
	}
	s.it = it
	if p.Index != nil {
		s.seen = map[string]struct{}{}
	}
	return s, nil
}

// openIter opens an iterator over the scan's whole key space (its
// prefix), which its intervals then seek in: at the start and on unpark.
func (s *planSource) openIter() (storage.Iter, error) {
	return s.r.NewIter(s.prefix, keyenc.PrefixEnd(s.prefix))
}

// interval is a run of whole storage keys, [lo, hi). seek, when set, is
// where a scan enters it (at or past lo, or below hi backward): at the
// start of the checked fields' bounds (planner.Plan.IntervalSeek).
type interval struct{ lo, hi, seek []byte }

// interval returns the i-th interval in scan order.
func (s *planSource) interval(i int) (interval, bool) {
	if i >= len(s.ivs) {
		return interval{}, false
	}
	if s.p.Reverse {
		return s.ivs[len(s.ivs)-1-i], true
	}
	return s.ivs[i], true
}

// advance moves to the next key inside the current interval, opening the
// following intervals as needed; it reports false at the end.
func (s *planSource) advance() bool {
	for {
		switch {
		case s.sought:
			s.sought = false
		case s.inRange:
			if s.p.Reverse {
				s.it.Prev()
			} else {
				s.it.Next()
			}
		default:
			iv, ok := s.interval(s.next)
			if !ok {
				return false
			}
			s.next++
			s.inRange = true
			s.seeks++
			switch {
			case s.p.Reverse && iv.seek != nil:
				s.it.SeekLT(iv.seek)
			case s.p.Reverse:
				s.it.SeekLT(iv.hi)
			case iv.seek != nil:
				// Past lo: the seek hints, which hold the first key at
				// or past lo, do not apply.
				s.it.SeekGE(iv.seek)
			case s.hints != nil:
				s.hinting, s.hintStart = true, iv.lo
				s.it.SeekGE(s.hints.lookup(iv.lo, s.hintNow))
			default:
				s.it.SeekGE(iv.lo)
			}
		}
		iv, _ := s.interval(s.next - 1)
		if s.it.Valid() && bytes.Compare(s.it.Key(), iv.lo) >= 0 && bytes.Compare(s.it.Key(), iv.hi) < 0 {
			if s.hinting {
				s.hinting = false
				s.hints.store(s.hintStart, s.it.Key(), s.hintEpoch)
			}
			return true
		}
		if s.it.Valid() {
			s.passedKey()
		}
		s.inRange, s.hinting = false, false
	}
}

// passedKey counts as examined the key the iterator found outside the
// interval it was in, as MongoDB's index scan does when its bounds are
// several intervals of keys (IndexBoundsBuilder::isSingleInterval false):
// such a scan has no end position, and each key its cursor returns is
// examined before the IndexBoundsChecker finds it in a gap between
// intervals (seeking on to the next) or past the last (the scan's end,
// doneKey). A key at or past the next interval's start is left to that
// interval, whose seek finds it again. A scan of one interval stops at
// its end unseen. The document store read by _id ranges counts as the
// _id index.
//
// A key in a gap that still holds the leading point values of the
// interval it left, when the next interval has others, makes the checker
// seek past those values: the key found there is examined too
// (skippedPrefix).
// A scan with key checks past its intervals (CheckKey) has bounds of
// several intervals too.
func (s *planSource) passedKey() {
	if s.p.Index == nil && (s.p.Intervals == nil || s.clustered || s.p.Natural) || len(s.ivs) < 2 && !s.p.HasChecks() {
		return
	}
	next, ok := s.interval(s.next)
	if !ok {
		s.doneKey = true
		s.stats.KeysExamined++
		return
	}
	if s.beforeInterval(s.it.Key(), next) {
		s.stats.KeysExamined++
		s.skippedPrefix(next)
	}
}

// beforeInterval reports whether key comes before iv in scan order.
func (s *planSource) beforeInterval(key []byte, iv interval) bool {
	if s.p.Reverse {
		return bytes.Compare(key, iv.hi) >= 0
	}
	return bytes.Compare(key, iv.lo) < 0
}

// skippedPrefix counts the key MongoDB's seek past the leading point
// fields of the interval the scan left finds, when the iterator's key, in
// the gap before next, holds the values of some of them and next does
// not (see passedKey). Its own seek to next follows.
func (s *planSource) skippedPrefix(next interval) {
	if s.p.Index == nil {
		return // the _id index: one field
	}
	cur, _ := s.interval(s.next - 1)
	held := s.heldPoints(cur, s.it.Key())
	if len(held) == len(s.prefix) || bytes.HasPrefix(next.lo, held) {
		return
	}
	s.seeks++
	if s.p.Reverse {
		s.it.SeekLT(held)
	} else {
		s.it.SeekGE(keyenc.PrefixEnd(held))
	}
	if s.it.Valid() && s.beforeInterval(s.it.Key(), next) {
		s.stats.KeysExamined++
	}
}

// heldPoints is the storage prefix and the leading fields iv pins to one
// value (those its two ends encode alike) that key holds too.
func (s *planSource) heldPoints(iv interval, key []byte) []byte {
	n := len(s.prefix)
	for _, f := range s.p.Index.Fields {
		l, ok := keyenc.FieldLen(iv.lo[n:], f.Desc)
		if !ok || len(iv.hi) < n+l || len(key) < n+l || !bytes.Equal(iv.lo[n:n+l], iv.hi[n:n+l]) || !bytes.Equal(iv.lo[n:n+l], key[n:n+l]) {
			break
		}
		if m, ok := keyenc.FieldLen(iv.hi[n:], f.Desc); !ok || m != l {
			break
		}
		n += l
	}
	return iv.lo[:n]
}

func (s *planSource) Next() (bson.Raw, error) {
	if len(s.replay) > 0 {
		return s.replayNext(), nil
	}
	if s.parked {
		if err := s.unpark(); err != nil {
			return nil, err
		}
	}
	if s.it == nil {
		if s.pointDone {
			return nil, nil
		}
		s.pointDone = true
		s.stats.DocsExamined++
		if s.p.IDPoint() {
			s.stats.idKeyRead(s.clustered)
		}
		if s.seen != nil && s.dup(s.pointID) {
			s.dropped(s.pointID)
			return nil, nil
		}
		s.setLast(s.point, s.pointID)
		return s.point, nil
	}
	for s.advance() {
		if !s.p.Fetches() {
			s.stats.DocsExamined++
			if s.p.Intervals != nil {
				// A scan by _id ranges, MongoDB's IXSCAN of the _id index.
				s.stats.idKeyRead(s.clustered)
			}
			if s.seen != nil && s.dup(s.it.Key()[len(s.prefix):]) {
				s.dropped(s.it.Key()[len(s.prefix):])
				if err := mongoerr.Interruption(s.ctx); err != nil {
					return nil, err
				}
				continue
			}
			doc, err := docOf(s.it.Value(), &s.docBuf)
			s.setLast(doc, s.it.Key()[len(s.prefix):])
			return doc, err
		}
		encID := entryID(s.it.Value())
		if s.seen != nil {
			s.stats.KeysExamined++
			if s.p.HasChecks() {
				if ok, seek, done := s.p.CheckKey(s.it.Key(), len(s.prefix)); !ok {
					if err := mongoerr.Interruption(s.ctx); err != nil {
						return nil, err
					}
					switch {
					case done:
						s.end()
					case seek != nil:
						s.seekTo(seek)
					}
					continue
				}
			}
			if s.rejected() {
				if err := mongoerr.Interruption(s.ctx); err != nil {
					return nil, err
				}
				continue
			}
			if s.dup(encID) {
				s.dropped(encID)
				if err := mongoerr.Interruption(s.ctx); err != nil {
					return nil, err
				}
				continue
			}
		}
		if s.seen == nil && s.rejected() {
			if err := mongoerr.Interruption(s.ctx); err != nil {
				return nil, err
			}
			continue
		}
		s.lastKey, s.lastEntry = s.it.Key(), s.it.Value()
		if cov := s.p.Covered(); cov != nil {
			doc, err := s.coveredDoc(cov, encID)
			if doc != nil || err != nil {
				s.setLast(doc, encID)
				return doc, err
			}
			continue
		}
		doc, found, err := getDoc(s.r, docKeyFromEncodedID(s.collID, encID), &s.docBuf)
		if err != nil {
			return nil, err
		}
		if found {
			s.stats.DocsExamined++
			s.setLast(doc, encID)
			if s.p.Natural {
				s.lastNatural = append(s.lastNatural[:0], s.it.Key()...)
			}
			return doc, nil
		}
	}
	return nil, s.it.Error()
}

// replayNext returns the next document of the replay, with its metadata.
func (s *planSource) replayNext() bson.Raw {
	k := s.replay[0]
	s.replay[0] = trialDoc{}
	s.replay = s.replay[1:]
	s.last, s.lastKey, s.lastEntry = k.doc, k.key, k.entry
	if s.ids {
		s.lastID = append(s.lastID[:0], k.id...)
	}
	return k.doc
}

// setLast notes doc, of record id id, as the document Next returns.
func (s *planSource) setLast(doc bson.Raw, id []byte) {
	s.last = doc
	if s.ids {
		s.lastID = append(s.lastID[:0], id...)
	}
}

// rejected reports that the key at the iterator fails the plan's key
// filters, so its document is not fetched: tested before dup records the
// document, which another key, or another scan of a union, may yield.
func (s *planSource) rejected() bool {
	if !s.p.HasKeyFilters() || s.p.Covered() != nil {
		return false
	}
	vals := entryValues(s.it.Value())
	return vals != nil && !s.p.KeyPasses(vals)
}

// dup reports whether the document of encID was yielded before, and
// records it otherwise.
func (s *planSource) dup(encID []byte) bool {
	if _, ok := s.seen[string(encID)]; ok {
		return true
	}
	s.seen[string(encID)] = struct{}{}
	return false
}

// dropped counts a key of the document of encID passed over because the
// document was yielded before (explain's dupsDropped): by this scan, or,
// while an explain runs an index union, by another of its scans, which
// the OR above drops instead (the first time this scan meets it: own).
func (s *planSource) dropped(encID []byte) {
	if s.own != nil {
		if _, mine := s.own[string(encID)]; !mine {
			s.own[string(encID)] = struct{}{}
			return
		}
	}
	s.dupsDropped++
}

// seekTo repositions the iterator within the current interval after a
// failed key check: at key or after it forward, before it backward.
func (s *planSource) seekTo(key []byte) {
	s.seeks++
	if s.p.Reverse {
		s.it.SeekLT(key)
	} else {
		s.it.SeekGE(key)
	}
	s.sought = true
}

// end ends the scan on the key the bounds checker found it done at (see
// planner.Plan.CheckKey): no interval is left to read, and that key was
// its last work (doneKey).
func (s *planSource) end() {
	s.next, s.inRange, s.sought, s.doneKey = len(s.ivs), false, false, true
}

// park closes the scan's iterator while its cursor waits for a getMore.
// An open iterator holds on to the memory of the writes made before it
// was opened (Pebble's memtables and large batches), however long the
// cursor stays idle; idle cursors opened at different times would hold a
// memtable each. The next read opens another iterator on the same reader
// (the scan's snapshot, or the store itself for a scan of the documents,
// whose recheck reads the latest state anyway) and seeks back to the key
// the scan was at (unpark).
func (s *planSource) park() bool {
	if !s.parkable || s.parked || s.it == nil {
		return false
	}
	s.parkKey = nil
	if (s.inRange || s.sought) && s.it.Valid() {
		s.parkKey = bytes.Clone(s.it.Key())
	}
	s.parkErr = s.it.Close()
	// What the iterator lent goes with it.
	s.it, s.parked = nil, true
	s.last, s.lastKey, s.lastEntry = nil, nil, nil
	return true
}

// unpark opens a parked scan's iterator again where park left it. A key
// the scan was at that is gone since (a scan of the store itself) leaves
// the iterator at the next key, which advance then looks at without
// stepping (sought).
func (s *planSource) unpark() error {
	s.parked = false
	if s.parkErr != nil {
		return s.parkErr
	}
	it, err := s.openIter()
	if err != nil {
		return err
	}
	s.it = it
	if !s.inRange && !s.sought {
		return nil // the next interval's seek positions it
	}
	switch {
	case s.parkKey == nil:
		// The scan was past its interval's keys; so is the iterator.
		if s.p.Reverse {
			it.SeekLT(s.prefix)
		} else {
			it.SeekGE(keyenc.PrefixEnd(s.prefix))
		}
	case s.p.Reverse:
		// the last key up to parkKey: before parkKey's successor
		it.SeekLT(append(bytes.Clone(s.parkKey), 0))
	default:
		it.SeekGE(s.parkKey)
	}
	if !s.sought && !(it.Valid() && bytes.Equal(it.Key(), s.parkKey)) {
		s.sought = true
	}
	return nil
}

func (s *planSource) Close() error {
	var err error
	if s.it != nil {
		err = s.it.Close()
	}
	if s.closer != nil {
		err = firstErr(err, s.closer())
	}
	return err
}

// scanEntries calls fn with the key and value of every index entry in the
// intervals (relative to prefix, an index's storage prefix) over r, in
// key order, counting each as examined and looking at the operation's
// context every 256 entries. It serves the reads that gather an index's
// entries before yielding documents: a $text search's terms, a $near's
// rounds. An interval whose Hi is nil runs to the index's last entry.
func scanEntries(ctx context.Context, r storage.Reader, prefix []byte, ivs []planner.Interval, stats *OpStats, fn func(key, value []byte)) error {
	it, err := r.NewIter(prefix, keyenc.PrefixEnd(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	n := 0
	for _, iv := range ivs {
		lo, hi := append(bytes.Clone(prefix), iv.Lo...), append(bytes.Clone(prefix), iv.Hi...)
		if iv.Hi == nil {
			hi = keyenc.PrefixEnd(prefix)
		}
		for it.SeekGE(lo); it.Valid() && (hi == nil || bytes.Compare(it.Key(), hi) < 0); it.Next() {
			if n++; n%256 == 0 {
				if err := mongoerr.Interruption(ctx); err != nil {
					return err
				}
			}
			stats.KeysExamined++
			fn(it.Key(), it.Value())
		}
	}
	return it.Error()
}
