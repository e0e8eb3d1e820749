package tikvkv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/folio-db/folio/internal/storage"
)

// seqValue is a stamped value for tests: the stamp's 8 bytes, then the
// sequence numbers joined into it.
type seqValue struct{ seqs []uint64 }

func (v seqValue) AppendValue(dst []byte) ([]byte, int) {
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	for _, s := range v.seqs {
		dst = binary.BigEndian.AppendUint64(dst, s)
	}
	return dst, 0
}

func (v seqValue) Join(next storage.StampedValue) storage.StampedValue {
	return seqValue{seqs: append(append([]uint64(nil), v.seqs...), next.(seqValue).seqs...)}
}

var testPrefix = []byte("o")

// readStamped reads the stamped keys up to h: their stamps, checked
// against the stamp written in their values, and their sequence numbers
// in stamp order.
func readStamped(s *Store, h uint64) ([]uint64, error) {
	it, err := s.NewIter(testPrefix, []byte("p"))
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for ok := it.First(); ok; ok = it.Next() {
		stamp := binary.BigEndian.Uint64(it.Key()[1:])
		if stamp > h {
			break
		}
		v := it.Value()
		if got := binary.LittleEndian.Uint64(v); got != stamp {
			return nil, fmt.Errorf("key stamped %d holds stamp %d", stamp, got)
		}
		for b := v[8:]; len(b) >= 8; b = b[8:] {
			seqs = append(seqs, binary.BigEndian.Uint64(b))
		}
	}
	return seqs, it.Close()
}

// TestStampsFollowCommitOrder: writers on three stores of one cluster
// (frontends) each increment one counter and stage the new value as a
// stamped write, retrying on conflict, so the counter's values are the
// commit order. Readers on each store take a horizon and read the stamped
// keys up to it: they must find exactly 1..n in order, with nothing
// missing below the horizon, while regions split and leaders move. No
// writer ever calls LastStamp: the readers place the writers' values, as
// they would a dead writer's.
func TestStampsFollowCommitOrder(t *testing.T) {
	s0, m := openMock(t)
	stores := []*Store{s0}
	for range 2 {
		s, err := m.Open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	const writers, each = 6, 25
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for r := range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			s := stores[r]
			for {
				select {
				case <-stop:
					return
				default:
				}
				h, _ := s.LastStamp()
				seqs, err := readStamped(s, h)
				if err != nil {
					fail(err)
					return
				}
				for i, q := range seqs {
					if q != uint64(i+1) {
						fail(fmt.Errorf("below horizon %d: %v", h, seqs))
						return
					}
				}
				reads.Add(1)
			}
		}()
	}
	readers.Add(1)
	go func() { // chaos
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			k := []byte{stagedSpace, byte(rand.IntN(256))}
			if rand.IntN(2) == 0 {
				k = append(append([]byte(nil), testPrefix...), byte(rand.IntN(256)))
			}
			if err := m.SplitAt(k); err != nil {
				fail(err)
				return
			}
			m.MoveLeader(k)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%len(stores)]
			for range each {
				for {
					err := increment(s)
					if err == nil {
						break
					}
					if !errors.Is(err, storage.ErrWriteConflict) {
						fail(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	h, _ := stores[1].LastStamp()
	seqs, err := readStamped(stores[2], h)
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != writers*each {
		t.Fatalf("%d stamped values after %d commits", len(seqs), writers*each)
	}
	for i, q := range seqs {
		if q != uint64(i+1) {
			t.Fatalf("value %d is %d", i, q)
		}
	}
	if reads.Load() == 0 {
		t.Fatal("no reader ran")
	}
	t.Logf("%d reads while %d commits", reads.Load(), writers*each)
	snap, err := stores[0].freshSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	it, err := snap.Iter([]byte{stagedSpace}, []byte{stagedSpace + 1})
	if err != nil {
		t.Fatal(err)
	}
	if it.Valid() {
		t.Fatalf("staged key %x left after the last horizon", it.Key())
	}
	it.Close()
}

// increment adds one to the counter and stages its new value, as two
// stamped writes joined into one (the second stages nothing new).
func increment(s *Store) error {
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	v, _, err := tx.Get([]byte("counter"))
	if err != nil {
		return err
	}
	n, _ := strconv.ParseUint(string(v), 10, 64)
	n++
	if err := tx.Set([]byte("counter"), strconv.AppendUint(nil, n, 10)); err != nil {
		return err
	}
	st := tx.(storage.StampedTxn)
	if err := st.SetStamped(testPrefix, seqValue{seqs: []uint64{n}}); err != nil {
		return err
	}
	if err := st.SetStamped(testPrefix, seqValue{}); err != nil {
		return err
	}
	return tx.Commit()
}

// TestStampOfOrders: stamps order as the oracle's timestamps, their
// seconds are the timestamps' and distinct timestamps have distinct stamps.
func TestStampOfOrders(t *testing.T) {
	const logicalBits = 18
	prev := uint64(0)
	for _, ms := range []uint64{1_700_000_000_000, 1_700_000_000_999, 1_700_000_001_000} {
		for _, logical := range []uint64{0, 1, 1<<logicalBits - 1} {
			st := stampOf(ms<<logicalBits | logical)
			if st <= prev {
				t.Fatalf("stamp of %d.%d is %x, not above %x", ms, logical, st, prev)
			}
			if secs := st >> 32; secs != ms/1000 {
				t.Fatalf("stamp of %d ms has %d seconds", ms, secs)
			}
			prev = st
		}
	}
}

// TestCommitStamp: a commit's CommitStamp is the stamp its stamped value
// is read back under; a commit without one has none.
func TestCommitStamp(t *testing.T) {
	s, _ := openMock(t)
	for i := range uint64(3) {
		tx, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		st := tx.(storage.StampedTxn)
		if err := st.SetStamped(testPrefix, seqValue{seqs: []uint64{i}}); err != nil {
			t.Fatal(err)
		}
		if err := st.SetStamped(testPrefix, seqValue{seqs: []uint64{i + 10}}); err != nil {
			t.Fatal(err)
		}
		if st.CommitStamp() != 0 {
			t.Fatal("a stamp before the commit")
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		h, _ := s.LastStamp()
		for h < st.CommitStamp() {
			time.Sleep(time.Millisecond)
			h, _ = s.LastStamp()
		}
		it, err := s.NewIter(testPrefix, []byte("p"))
		if err != nil {
			t.Fatal(err)
		}
		var last uint64
		for ok := it.First(); ok; ok = it.Next() {
			last = binary.BigEndian.Uint64(it.Key()[1:])
		}
		it.Close()
		if got := st.CommitStamp(); got == 0 || got != last {
			t.Fatalf("commit %d: CommitStamp %d, the latest stamped key %d", i, got, last)
		}
	}
	tx, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := tx.(storage.StampedTxn).CommitStamp(); got != 0 {
		t.Fatalf("an unstamped commit's CommitStamp %d", got)
	}
}
