package tikvkv

import (
	"bytes"
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

// TestSplitsAndLeaderChanges: while regions split and leaders move, transfers
// between keys commit (retrying on conflict) and scans forward and backward
// read snapshots: every scan sees each key exactly once, in order, and the
// total never changes; at the end every committed transfer is there.
func TestSplitsAndLeaderChanges(t *testing.T) {
	s, m := openMock(t)
	const keys, each = 400, 10
	key := func(i int) []byte { return fmt.Appendf(nil, "k%05d", i) }
	tx, _ := s.Begin()
	for i := range keys {
		must(t, tx.Set(key(i), []byte(strconv.Itoa(each))))
	}
	must(t, tx.Commit())

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var committed, scans, splits atomic.Int64
	errs := make(chan error, 16)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	// Chaos: split a random key's region, move a random region's leader.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			k := key(rand.IntN(keys))
			if rand.IntN(2) == 0 {
				must(t, m.SplitAt(k))
				splits.Add(1)
			} else {
				m.MoveLeader(k)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	// Writers: move one unit from one key to another.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := transfer(s, key(rand.IntN(keys)), key(rand.IntN(keys)))
				if errors.Is(err, storage.ErrWriteConflict) {
					continue
				}
				if err != nil {
					fail(err)
					return
				}
				committed.Add(1)
			}
		}()
	}
	// Scanners: a snapshot holds every key once and the same total.
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := checkScan(s, keys, keys*each, w == 1); err != nil {
					fail(err)
					return
				}
				scans.Add(1)
			}
		}()
	}
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := checkScan(s, keys, keys*each, false); err != nil {
		t.Fatal(err)
	}
	if committed.Load() == 0 || scans.Load() == 0 || splits.Load() == 0 {
		t.Fatalf("nothing happened: %d transfers, %d scans, %d splits", committed.Load(), scans.Load(), splits.Load())
	}
	t.Logf("%d transfers, %d scans, %d regions", committed.Load(), scans.Load(), m.Regions())
}

func transfer(s *Store, from, to []byte) error {
	tx, err := s.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	a, err := readInt(tx, from)
	if err != nil {
		return err
	}
	if err := tx.Set(from, []byte(strconv.Itoa(a-1))); err != nil {
		return err
	}
	b, err := readInt(tx, to)
	if err != nil {
		return err
	}
	if err := tx.Set(to, []byte(strconv.Itoa(b+1))); err != nil {
		return err
	}
	return tx.Commit()
}

func readInt(r storage.Reader, k []byte) (int, error) {
	v, ok, err := r.Get(k)
	if err != nil || !ok {
		return 0, fmt.Errorf("read %s: %v %v", k, ok, err)
	}
	return strconv.Atoi(string(v))
}

func checkScan(s *Store, keys, total int, backward bool) error {
	snap := s.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter([]byte("k"), []byte("l"))
	if err != nil {
		return err
	}
	defer it.Close()
	n, sum := 0, 0
	var prev []byte
	ok := it.First()
	if backward {
		ok = it.Last()
	}
	for ; ok; n++ {
		k := it.Key()
		if prev != nil && (bytes.Compare(k, prev) <= 0) != backward {
			return fmt.Errorf("scan out of order: %s after %s", k, prev)
		}
		prev = append(prev[:0], k...)
		v, err := strconv.Atoi(string(it.Value()))
		if err != nil {
			return err
		}
		sum += v
		if backward {
			ok = it.Prev()
		} else {
			ok = it.Next()
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if n != keys || sum != total {
		return fmt.Errorf("scan (backward %v) saw %d keys totalling %d, want %d and %d", backward, n, sum, keys, total)
	}
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}
