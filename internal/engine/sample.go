package engine

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"math/big"
	"math/rand/v2"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/folio-db/folio/internal/mongoerr"
	"github.com/folio-db/folio/internal/storage"
)

// randomSampleMinDocs and randomSampleMaxShare are MongoDB's conditions
// for a leading $sample to read a pseudo-random cursor instead of sampling
// a whole collection scan: more than 100 documents, and a sample under 5%
// of them.
const (
	randomSampleMinDocs  = 100
	randomSampleMaxShare = 20 // the collection holds more than 20× the sample
	randomSampleAttempts = 100
)

// RandomSample serves n distinct documents of db.coll read at
// pseudo-random positions, when MongoDB would use a random cursor for a
// leading {$sample: {size: n}}; ok is false otherwise (no collection, a
// transaction or a held view, or too few documents: the keys are counted
// up to what the conditions need), and the caller samples a full scan
// instead.
//
// A position is a key drawn uniformly between the collection's first and
// last document keys; the document at or after it is taken. Documents after
// large gaps of the key space come up more often, as a storage engine's
// random cursor also favours some documents. A document already taken is
// drawn again; after 100 failed draws the rest of the sample is taken by
// reservoir sampling of a scan of the documents not yet taken, so that the
// answer never fails (MongoDB would fail with 28799).
func (e *Engine) RandomSample(ctx context.Context, db, coll string, n int64, txn *Txn) (Cursor, bool, error) {
	c := e.lookup(txn, db, coll)
	if c == nil || txn != nil || readViewOf(ctx) != nil || n <= 0 {
		return nil, false, nil
	}
	lo, hi := docSpan(c.ID)
	snap := e.kv.NewSnapshot()
	it, err := snap.NewIter(lo, hi)
	if err != nil {
		snap.Close()
		return nil, false, err
	}
	s := &randomSample{ctx: ctx, snap: snap, it: it, want: n, taken: map[string]bool{}}
	need := max(randomSampleMinDocs, randomSampleMaxShare*n) + 1
	var count int64
	for ok := it.First(); ok && count < need; ok = it.Next() {
		if count%1024 == 0 {
			if err := mongoerr.Interruption(ctx); err != nil {
				s.Close()
				return nil, false, err
			}
		}
		count++
	}
	if err := it.Error(); err != nil || count < need {
		s.Close()
		return nil, false, err
	}
	it.First()
	first := bytes.Clone(it.Key())
	it.Last()
	last := bytes.Clone(it.Key())
	s.width = max(len(first), len(last))
	s.first, s.span = keyNumber(first, s.width), new(big.Int).Sub(keyNumber(last, s.width), keyNumber(first, s.width))
	return s, true, nil
}

// keyNumber reads key, padded with zeros to width bytes, as a big-endian
// number: keys compare as their numbers do.
func keyNumber(key []byte, width int) *big.Int {
	b := make([]byte, width)
	copy(b, key)
	return new(big.Int).SetBytes(b)
}

// randomSample is RandomSample's cursor.
type randomSample struct {
	ctx   context.Context
	snap  storage.Snapshot
	it    storage.Iter
	want  int64
	taken map[string]bool // keys of the documents served
	width int
	first *big.Int
	span  *big.Int
	rest  []bson.Raw // the reservoir sample, once the draws gave up
	stuck bool
}

func (s *randomSample) Next() (bson.Raw, error) {
	if int64(len(s.taken)) >= s.want && !s.stuck {
		return nil, nil
	}
	if err := mongoerr.Interruption(s.ctx); err != nil {
		return nil, err
	}
	if !s.stuck {
		for range randomSampleAttempts {
			off, err := crand.Int(crand.Reader, new(big.Int).Add(s.span, big.NewInt(1)))
			if err != nil {
				return nil, mongoerr.New(mongoerr.InternalError, "random position: %v", err)
			}
			pos := off.Add(off, s.first).FillBytes(make([]byte, s.width))
			if !s.it.SeekGE(pos) {
				if err := s.it.Error(); err != nil {
					return nil, err
				}
				continue
			}
			if k := string(s.it.Key()); !s.taken[k] {
				s.taken[k] = true
				return ownDoc(s.it.Value())
			}
		}
		if err := s.reservoir(); err != nil {
			return nil, err
		}
		s.stuck = true
	}
	if len(s.rest) == 0 {
		return nil, nil
	}
	doc := s.rest[0]
	s.rest = s.rest[1:]
	var buf []byte
	return docOf(doc, &buf)
}

// reservoir samples the documents not taken yet, uniformly, for the rest
// of the sample.
func (s *randomSample) reservoir() error {
	k := int(s.want) - len(s.taken)
	var seen int
	for ok := s.it.First(); ok; ok = s.it.Next() {
		if seen%1024 == 0 {
			if err := mongoerr.Interruption(s.ctx); err != nil {
				return err
			}
		}
		if s.taken[string(s.it.Key())] {
			continue
		}
		seen++
		switch {
		case len(s.rest) < k:
			s.rest = append(s.rest, bytes.Clone(s.it.Value()))
		default:
			if j := rand.IntN(seen); j < k {
				s.rest[j] = bytes.Clone(s.it.Value())
			}
		}
	}
	rand.Shuffle(len(s.rest), func(i, j int) { s.rest[i], s.rest[j] = s.rest[j], s.rest[i] })
	return s.it.Error()
}

func (s *randomSample) Close() error {
	return firstErr(s.it.Close(), s.snap.Close())
}
