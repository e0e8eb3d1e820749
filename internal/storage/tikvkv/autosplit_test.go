package tikvkv

import (
	"fmt"
	"testing"
)

// TestSplitFull: after a pass no region holds more than maxKeys keys, and
// every key is still read once.
func TestSplitFull(t *testing.T) {
	m, err := NewMockCluster(3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer s.Close()
	tx, _ := s.Begin()
	for i := range 1000 {
		must(t, tx.Set(fmt.Appendf(nil, "k%04d", i), []byte("1")))
	}
	must(t, tx.Commit())
	must(t, m.SplitFull(s, 50))
	if n := m.Regions(); n < 20 {
		t.Fatalf("%d regions for 1000 keys at 50 a region", n)
	}
	if err := checkScan(s, 1000, 1000, false); err != nil {
		t.Fatal(err)
	}
	if err := checkScan(s, 1000, 1000, true); err != nil {
		t.Fatal(err)
	}
}
