package tikvkv

import (
	"bytes"
	"time"

	"github.com/tikv/client-go/v2/tikv"
)

// SplitKeys returns the start keys of the regions that begin strictly
// inside (lower, upper), as PD knows them now (the region cache may lag
// behind splits).
func (s *Store) SplitKeys(lower, upper []byte) ([][]byte, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	bo := tikv.NewBackoffer(ctx, int(s.timeout/time.Millisecond))
	regions, err := s.kv.GetRegionCache().LoadRegionsInKeyRange(bo, lower, upper)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, r := range regions {
		if k := r.StartKey(); bytes.Compare(k, lower) > 0 && bytes.Compare(k, upper) < 0 {
			out = append(out, bytes.Clone(k))
		}
	}
	return out, nil
}
