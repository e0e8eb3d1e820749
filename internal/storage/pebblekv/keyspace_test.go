package pebblekv

import (
	"bytes"
	"testing"
)

// TestTablesHoldOneKeySpace checks that a flush of keys of several spaces
// (first bytes) writes a table per space, none straddling two, and that
// spaces written in key order get tables that do not overlap.
func TestTablesHoldOneKeySpace(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	val := bytes.Repeat([]byte("v"), 100)
	for flush := range 3 {
		tx := begin(t, db)
		for i := range 100 {
			n := flush*100 + i
			for _, space := range []byte{'d', 'o', 's', 0xff} {
				if err := tx.Set([]byte{space, byte(n >> 8), byte(n)}, val); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := commit(db, tx, false); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	levels, err := db.db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	perSpace := map[byte][][2][]byte{}
	for _, level := range levels {
		for _, table := range level {
			lo, hi := table.Smallest.UserKey, table.Largest.UserKey
			if lo[0] != hi[0] {
				t.Errorf("table %s holds keys from %q to %q", table.FileNum, lo, hi)
			}
			perSpace[lo[0]] = append(perSpace[lo[0]], [2][]byte{lo, hi})
		}
	}
	for _, space := range []byte{'d', 'o', 's', 0xff} {
		tables := perSpace[space]
		if len(tables) == 0 {
			t.Errorf("space %q: no table", space)
		}
		for i, a := range tables {
			for _, b := range tables[i+1:] {
				if bytes.Compare(a[0], b[1]) <= 0 && bytes.Compare(b[0], a[1]) <= 0 {
					t.Errorf("space %q: tables [%q, %q] and [%q, %q] overlap", space, a[0], a[1], b[0], b[1])
				}
			}
		}
	}
}

// TestKeySpaceEnd checks where a table starting at a key must end.
func TestKeySpaceEnd(t *testing.T) {
	for _, c := range []struct{ start, end []byte }{
		{[]byte("d\x00\x00\x00\x01abc"), []byte("e")},
		{[]byte("o"), []byte("p")},
		{[]byte{0xfe, 0xff}, []byte{0xff}},
		{[]byte{0xff, 1}, nil},
		{nil, nil},
	} {
		if _, end, err := keySpaceEnd(c.start); err != nil || !bytes.Equal(end, c.end) {
			t.Errorf("keySpaceEnd(%q) = %q, %v; want %q", c.start, end, err, c.end)
		}
	}
}
