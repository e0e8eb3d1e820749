package tikvkv

import (
	"math/rand/v2"

	"github.com/tikv/client-go/v2/util/codec"
)

// SplitAt splits the region holding key so that a new region starts at key,
// with a peer on every store and its leader on the first.
func (m *MockCluster) SplitAt(key []byte) error {
	enc := codec.EncodeBytes(nil, key)
	region, _, _ := m.Cluster.GetRegionByKey(enc)
	if region == nil || string(region.GetStartKey()) == string(enc) {
		return nil
	}
	peers := m.Cluster.AllocIDs(len(m.Stores))
	m.Cluster.Split(region.GetId(), m.Cluster.AllocID(), key, peers, peers[0])
	return nil
}

// MoveLeader moves the leadership of the region holding key to another of
// its peers, at random.
func (m *MockCluster) MoveLeader(key []byte) {
	region, leader, _ := m.Cluster.GetRegionByKey(codec.EncodeBytes(nil, key))
	if region == nil || len(region.GetPeers()) < 2 {
		return
	}
	for {
		p := region.GetPeers()[rand.IntN(len(region.GetPeers()))]
		if leader == nil || p.GetId() != leader.GetId() {
			m.Cluster.ChangeLeader(region.GetId(), p.GetId())
			return
		}
	}
}

// Regions is the number of regions of the cluster.
func (m *MockCluster) Regions() int { return len(m.Cluster.GetAllRegions()) }
