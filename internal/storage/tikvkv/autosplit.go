package tikvkv

import (
	"bytes"
	"time"

	"github.com/tikv/client-go/v2/util/codec"
)

// AutoSplit splits, every period until stop is called, each region that
// holds more than maxKeys keys, as TiKV splits a region that outgrows its
// size limit (the mock cluster never splits by itself). It reads through
// s, a Store on the cluster.
func (m *MockCluster) AutoSplit(s *Store, period time.Duration, maxKeys int) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = m.SplitFull(s, maxKeys)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// SplitFull makes one pass over the keys and splits each region at its
// maxKeys-th key (counting from the region's start), so no region holds
// more than maxKeys keys of the pass's snapshot.
func (m *MockCluster) SplitFull(s *Store, maxKeys int) error {
	snap, err := s.freshSnapshot()
	if err != nil {
		return err
	}
	snap.SetKeyOnly(true)
	it, err := snap.Iter([]byte{}, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	var regionEnd []byte // decoded; nil: the last region
	inRegion := 0
	first := true
	for ; it.Valid(); err = it.Next() {
		if err != nil {
			return err
		}
		k := it.Key()
		if first || (regionEnd != nil && bytes.Compare(k, regionEnd) >= 0) {
			first = false
			region, _, _ := m.Cluster.GetRegionByKey(codec.EncodeBytes(nil, k))
			regionEnd = nil
			if region != nil && len(region.GetEndKey()) > 0 {
				if _, end, err := codec.DecodeBytes(region.GetEndKey(), nil); err == nil {
					regionEnd = end
				}
			}
			inRegion = 0
		}
		if inRegion++; inRegion > maxKeys {
			if err := m.SplitAt(k); err != nil {
				return err
			}
			inRegion = 1
		}
	}
	return err
}
