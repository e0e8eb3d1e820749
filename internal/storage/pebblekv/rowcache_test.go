package pebblekv

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/folio-db/folio/internal/storage"
)

// TestRowCacheServesCommittedValues checks that a second read is a hit and
// that a committed write, deletion or range deletion is what the next
// read sees.
func TestRowCacheServesCommittedValues(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k := []byte("doc1")
	set := func(v string) {
		t.Helper()
		tx := begin(t, db)
		if v == "" {
			err = tx.Delete(k)
		} else {
			err = tx.Set(k, []byte(v))
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	want := func(v string) {
		t.Helper()
		got, found, err := db.Get(k)
		if err != nil || found != (v != "") || string(got) != v {
			t.Fatalf("Get = %q, %v, %v; want %q", got, found, err, v)
		}
	}
	h, _ := db.rows.stats()
	set("a") // a new key enters the cache where there is room
	want("a")
	if hits, _ := db.rows.stats(); hits != h+1 {
		t.Fatalf("read of a key just written was not a hit")
	}
	held, _, _ := db.Get(k) // the entry itself, not a copy
	set("b")                // write-through: the cached key keeps an entry
	want("b")
	if string(held) != "a" {
		t.Fatalf("a value read before a commit of its key became %q", held)
	}
	if hits, _ := db.rows.stats(); hits != h+3 {
		t.Fatalf("read after a write of a cached key was not a hit")
	}
	set("")
	want("")
	set("c")
	want("c")
	want("c")
	// A range delete forgets the keys in its range, and only those.
	k = []byte("other")
	set("o")
	k = []byte("doc1")
	if err := db.DeleteRange([]byte("doc"), []byte("doc2")); err != nil {
		t.Fatal(err)
	}
	want("")
	k = []byte("other")
	h, _ = db.rows.stats()
	want("o")
	if hits, _ := db.rows.stats(); hits != h+1 {
		t.Fatalf("a range delete dropped the entry of a key outside its range")
	}
	for i := range db.rows.shards {
		s := &db.rows.shards[i]
		if _, n := shardEntries(t, db.rows, i); n != s.bytes {
			t.Fatalf("shard %d counts %d bytes, holds %d", i, s.bytes, n)
		}
	}
}

// shardEntries checks that each entry of shard i of c sits at its key's hash and
// returns their keys and the sum of their lengths (a test's commits are
// all applied: no entry awaits one).
func shardEntries(t *testing.T, c *rowCache, i int) (keys map[string]bool, n int) {
	t.Helper()
	keys = map[string]bool{}
	for h, e := range c.shards[i].rows {
		if e == nil {
			t.Fatalf("shard %d: an entry awaits a commit after every commit was applied", i)
		}
		k := entryKey(e)
		if _, _, kh := c.shard(k); kh != h {
			t.Fatalf("shard %d: the entry of %q is not at its key's hash", i, k)
		}
		keys[string(k)] = true
		n += len(e)
	}
	return keys, n
}

// tinyRowCache opens an in-memory store whose row cache shards hold two
// entries of a key of up to 9 bytes and a 60-byte value (makeEntry's 12
// bytes of header, 81 at most: 220 bytes a shard), and returns it with
// such a value.
func tinyRowCache(t *testing.T) (*DB, []byte) {
	const limit = 220
	db, err := Open("", Options{InMemory: true, RowCacheSize: rowCacheShards * limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, bytes.Repeat([]byte{'v'}, 60)
}

// heldKeys returns the keys the cache holds, checking that each shard's
// byte count is the sum of its entries and within its limit, and that its
// key-space counts are its entries' first bytes.
func heldKeys(t *testing.T, db *DB) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for i := range db.rows.shards {
		s := &db.rows.shards[i]
		in, n := shardEntries(t, db.rows, i)
		if n != s.bytes || n > s.limit {
			t.Fatalf("shard %d holds %d bytes and counts %d, limit %d", i, n, s.bytes, s.limit)
		}
		var spaces [256]int32
		for k := range in {
			spaces[k[0]]++
		}
		if spaces != s.spaces {
			t.Fatalf("shard %d counts its entries' key spaces wrong", i)
		}
		maps.Copy(keys, in)
	}
	return keys
}

// TestRowCacheWritesDoNotEvict checks that commits writing new keys give
// them entries only where their shard has room, one key to a commit or
// many, and that only reads evict; each shard's byte count stays the sum
// of its entries and within its limit.
func TestRowCacheWritesDoNotEvict(t *testing.T) {
	db, value := tinyRowCache(t)
	commit := func(keys ...[]byte) {
		t.Helper()
		tx := begin(t, db)
		for _, k := range keys {
			if err := tx.Set(k, value); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// One key in each shard, written one to a commit, leaves room for one.
	var first [rowCacheShards][]byte
	for n, left := 0, rowCacheShards; left > 0; n++ {
		k := fmt.Appendf(nil, "old%d", n)
		if _, i, _ := db.rows.shard(k); first[i] == nil {
			first[i] = k
			commit(k)
			left--
		}
	}
	before := heldKeys(t, db)
	if len(before) != rowCacheShards {
		t.Fatalf("the cache holds %d entries after one write to each shard; want %d", len(before), rowCacheShards)
	}
	// 2000 new keys in one commit, about eight to a shard, then 2000 more
	// one to a commit.
	var batch [][]byte
	for n := range 2000 {
		batch = append(batch, fmt.Appendf(nil, "new%d", n))
	}
	commit(batch...)
	for n := range 2000 {
		commit(fmt.Appendf(nil, "newer%d", n))
	}
	after := heldKeys(t, db)
	for k := range before {
		if !after[k] {
			t.Fatalf("writing new keys evicted %q", k)
		}
	}
	if len(after) <= len(before) {
		t.Fatal("no new key was given an entry where shards had room")
	}
	// A read that misses does evict, to keep what is read.
	for n := range 2000 {
		if _, _, err := db.Get(fmt.Appendf(nil, "new%d", n)); err != nil {
			t.Fatal(err)
		}
	}
	evicted := 0
	final := heldKeys(t, db)
	for k := range before {
		if !final[k] {
			evicted++
		}
	}
	if evicted == 0 {
		t.Fatal("reads of uncached keys evicted nothing from a full cache")
	}
}

// TestRowCacheDropFreesRoom checks that the room a range deletion frees
// goes to the keys written after it: a collection created after a bigger
// one was dropped has its inserted documents cached, and reads of them
// hit, while the dropped keys' entries are still in the shards.
func TestRowCacheDropFreesRoom(t *testing.T) {
	db, value := tinyRowCache(t)
	insert := func(keys [][]byte) {
		t.Helper()
		tx := begin(t, db)
		for _, k := range keys {
			if err := tx.(storage.Inserter).Insert(k, value); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(prefix string, n int) [][]byte {
		var out [][]byte
		for i := range n {
			out = append(out, fmt.Appendf(nil, "%s%d", prefix, i))
		}
		return out
	}
	// More than the cache holds, by enough that every shard fills: the
	// shards are chosen by a hash with a random seed, and 3000 keys left
	// one of the 256 shards with fewer than its two entries in about 3%
	// of runs (20,000 keys: an expected 78 to a shard).
	insert(keys("a", 20000))
	// A range over a key space the cache holds nothing of (an oplog
	// truncation) costs no sweep: the shards keep it, and writes of new
	// keys still find no room.
	must(t, db.DeleteRange([]byte("o"), []byte("p")))
	insert(keys("b", 3000))
	swept := 0
	for i := range db.rows.shards {
		if s := &db.rows.shards[i]; len(s.ranges) == 0 || s.reclaimable {
			swept++
		}
	}
	if swept > 1 { // the one forgetRange sweeps in turn
		t.Fatalf("%d shards swept or marked reclaimable for a range covering no entry", swept)
	}
	for k := range heldKeys(t, db) {
		if k[0] == 'b' {
			t.Fatalf("the new key %q found room in shards full of covered entries", k)
		}
	}
	must(t, db.DeleteRange([]byte("a"), []byte("b")))
	// As many again, so that each shard's covered entries give way.
	fresh := keys("c", 20000)
	insert(fresh)
	h, m := db.rows.stats()
	for _, k := range fresh {
		if _, found, err := db.Get(k); err != nil || !found {
			t.Fatalf("Get %q: %v, %v", k, found, err)
		}
	}
	hits, misses := db.rows.stats()
	// The cache holds two entries to a shard: 512 of the 20,000.
	if got := hits - h; got < 500 {
		t.Fatalf("%d of %d reads of keys inserted after a drop hit the cache (%d missed)", got, len(fresh), misses-m)
	}
	for k := range heldKeys(t, db) {
		if k[0] == 'a' {
			t.Fatalf("the cache keeps %q, which the range deletion covers", k)
		}
	}
}

// TestRowCacheAgainstUncached runs one random sequence of commits (sets,
// inserts of new keys and deletions, several writes of a key in one
// batch), range deletions (enough for each shard to be swept several
// times, and for entries to be checked at lookups against many) and
// reads on a store with a tiny row cache, which evicts all the time and
// never holds the keys of one space, and on one without, and compares
// every read.
func TestRowCacheAgainstUncached(t *testing.T) {
	cached, err := Open("", Options{InMemory: true, RowCacheSize: 64 << 10, Uncached: []byte{'u'}})
	if err != nil {
		t.Fatal(err)
	}
	defer cached.Close()
	plain, err := Open("", Options{InMemory: true, RowCacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.rows != nil || cached.rows == nil {
		t.Fatal("row cache options not honoured")
	}
	r := rand.New(rand.NewPCG(1, 2))
	// Keys of the space u are never cached (Options.Uncached).
	key := func() []byte { return fmt.Appendf(nil, "%c%03d", "kkku"[r.IntN(4)], r.IntN(300)) }
	for step := range 20000 {
		switch n := r.IntN(100); {
		case n < 57:
			k := key()
			a, af, aerr := cached.Get(k)
			b, bf, berr := plain.Get(k)
			if aerr != nil || berr != nil || af != bf || !bytes.Equal(a, b) {
				t.Fatalf("step %d: Get(%s) = %q %v %v with the cache, %q %v %v without", step, k, a, af, aerr, b, bf, berr)
			}
		case n < 96:
			ta, tb := begin(t, cached), begin(t, plain)
			written := map[string]bool{}
			for range 1 + r.IntN(4) {
				k := key()
				isNew := !written[string(k)]
				written[string(k)] = true
				if r.IntN(4) == 0 {
					must(t, ta.Delete(k), tb.Delete(k))
					continue
				}
				v := bytes.Repeat([]byte{byte('a' + r.IntN(26))}, r.IntN(600))
				if _, found, err := ta.Get(k); err == nil && !found && isNew {
					must(t, storage.Insert(ta, k, v), storage.Insert(tb, k, v))
					continue
				}
				must(t, ta.Set(k, v), tb.Set(k, v))
			}
			must(t, ta.Commit(), tb.Commit())
		default:
			lo, hi := key(), key()
			must(t, cached.DeleteRange(lo, hi), plain.DeleteRange(lo, hi))
		}
	}
	if hits, _ := cached.rows.stats(); hits == 0 {
		t.Fatal("the cache was never hit")
	}
	for k := range heldKeys(t, cached) {
		if k[0] == 'u' {
			t.Fatalf("the cache holds %q, of a space it never holds", k)
		}
	}
}

func must(t *testing.T, errs ...error) {
	t.Helper()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestRowCacheConcurrentIncrements is read-modify-write under contention:
// each increment reads a counter in a transaction and writes it back plus
// one, retried on a write conflict, while readers read the counters
// outside any transaction. A stale cached value read by a transaction
// would lose an increment; one read by a reader would go backwards.
func TestRowCacheConcurrentIncrements(t *testing.T) {
	db, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const counters, writers, each = 4, 6, 400
	keyOf := func(i int) []byte { return fmt.Appendf(nil, "counter%d", i) }
	valueOf := func(v []byte, found bool) int {
		if !found {
			return 0
		}
		var n int
		fmt.Sscan(string(v), &n)
		return n
	}
	incr := func(k []byte) error {
		for {
			tx := begin(t, db)
			v, found, err := tx.Get(k)
			if err == nil {
				err = tx.Set(k, fmt.Append(nil, valueOf(v, found)+1))
			}
			if err == nil {
				err = tx.Commit()
			}
			tx.Rollback()
			if !errors.Is(err, storage.ErrWriteConflict) {
				return err
			}
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 0))
			for range each {
				if err := incr(keyOf(r.IntN(counters))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			last := make([]int, counters)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range counters {
					v, found, err := db.Get(keyOf(i))
					if err != nil {
						errs <- err
						return
					}
					if n := valueOf(v, found); n < last[i] {
						errs <- fmt.Errorf("counter %d went back from %d to %d", i, last[i], n)
						return
					} else {
						last[i] = n
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := 0
	for i := range counters {
		v, found, err := db.Get(keyOf(i))
		if err != nil {
			t.Fatal(err)
		}
		total += valueOf(v, found)
	}
	if total != writers*each {
		t.Fatalf("counters sum to %d, want %d increments", total, writers*each)
	}
}

// TestUnionCovers compares the union of random ranges, some with an open
// bound, with the ranges themselves on every key of a small space.
func TestUnionCovers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	bound := func() []byte {
		if r.IntN(10) == 0 {
			return nil
		}
		return fmt.Appendf(nil, "k%02d", r.IntN(100))
	}
	for round := range 500 {
		var rs []*deletedRange
		for range r.IntN(8) {
			rs = append(rs, &deletedRange{start: bound(), end: bound()})
		}
		u := unionOf(rs)
		for k := range 101 {
			key := fmt.Appendf(nil, "k%02d", k)
			want := slices.ContainsFunc(rs, func(r *deletedRange) bool { return r.covers(key) })
			if got := u.covers(key); got != want {
				t.Fatalf("round %d: %s covered %v by the union %v of %v, want %v", round, key, got, u, rs, want)
			}
		}
	}
}
