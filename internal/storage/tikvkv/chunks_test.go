package tikvkv

import (
	"bytes"
	"fmt"
	"testing"
)

// TestLargeValues: with a chunk size of 10 bytes, values longer than it
// are stored in chunks and read back whole through every read path (a
// store read, a snapshot, a transaction before and after its commit,
// iterators both ways), the chunks never show in scans, and the chunks of
// overwritten and deleted values are swept.
func TestLargeValues(t *testing.T) {
	defer func(n int) { chunkSize = n }(chunkSize)
	chunkSize = 10
	s, _ := openMock(t)
	big := func(c byte) []byte { return bytes.Repeat([]byte{c}, 35) }
	want := map[string][]byte{"a": big('a'), "c": []byte("small"), "e": big('e'), "g": bytes.Repeat([]byte{'g'}, 10)}
	tx, _ := s.Begin()
	for _, k := range []string{"a", "c", "e", "g"} {
		must(t, tx.Set([]byte(k), want[k]))
	}
	if v, ok, err := tx.Get([]byte("a")); err != nil || !ok || !bytes.Equal(v, want["a"]) {
		t.Fatalf("uncommitted large value read in its transaction: %q %v %v", v, ok, err)
	}
	must(t, tx.Commit())
	check := func(what string, get func([]byte) ([]byte, bool, error)) {
		t.Helper()
		for k, w := range want {
			if v, ok, err := get([]byte(k)); err != nil || !ok || !bytes.Equal(v, w) {
				t.Errorf("%s %s: %q %v %v, want %q", what, k, v, ok, err, w)
			}
		}
	}
	check("store", s.Get)
	snap := s.NewSnapshot()
	check("snapshot", snap.Get)
	tx, _ = s.Begin()
	check("transaction", tx.Get)
	tx.Rollback()
	it, err := s.NewIter(nil, nil)
	must(t, err)
	var fwd, rev []string
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, fmt.Sprintf("%s=%d", it.Key(), len(it.Value())))
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		rev = append(rev, fmt.Sprintf("%s=%d", it.Key(), len(it.Value())))
	}
	must(t, it.Error())
	it.Close()
	if got := fmt.Sprint(fwd, rev); got != "[a=35 c=5 e=35 g=10] [g=10 e=35 c=5 a=35]" {
		t.Errorf("scans: %s", got)
	}
	chunks := func() int {
		t.Helper()
		snap, err := s.freshSnapshot()
		must(t, err)
		it, err := snap.Iter([]byte{chunkSpace}, []byte{chunkSpace + 1})
		must(t, err)
		defer it.Close()
		n := 0
		for ; it.Valid(); must(t, it.Next()) {
			n++
		}
		return n
	}
	if n := chunks(); n != 8 {
		t.Fatalf("%d chunks, want 4 for each large value", n)
	}
	must(t, s.SweepGarbage())
	if n := chunks(); n != 8 {
		t.Fatalf("the sweep removed named chunks: %d left", n)
	}
	tx, _ = s.Begin()
	must(t, tx.Set([]byte("a"), []byte("now small")))
	must(t, tx.Delete([]byte("e")))
	must(t, tx.Set([]byte("g"), big('G')))
	must(t, tx.Commit())
	must(t, s.SweepGarbage())
	if n := chunks(); n != 4 {
		t.Fatalf("%d chunks after the sweep, want g's 4", n)
	}
	if v, _, err := snap.Get([]byte("e")); err != nil || !bytes.Equal(v, want["e"]) {
		t.Errorf("a snapshot from before the sweep: %q %v", v, err)
	}
}
