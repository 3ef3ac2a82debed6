package codec

import (
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// maxGroupingSets mirrors logical.MaxGroupingSets (this package may not
// import logical): a plan with more sets is corrupt.
const maxGroupingSets = 4096

func encodeExpand(n *physical.Expand) (*rpc.PhysicalPlan, error) {
	in, err := encodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	keys, err := encodeExprs(n.Keys)
	if err != nil {
		return nil, err
	}
	m := &rpc.PhysicalExpand{Input: in, Keys: keys, KeyNames: n.KeyNames}
	for _, s := range n.Sets {
		ks := make([]int32, len(s))
		for j, k := range s {
			ks[j] = int32(k)
		}
		m.Sets = append(m.Sets, &rpc.GroupingSet{Keys: ks})
	}
	return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_Expand{Expand: m}}, nil
}

func decodeExpand(m *rpc.PhysicalExpand) (physical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: empty expand node")
	}
	in, err := decodePlan(m.Input)
	if err != nil {
		return nil, err
	}
	keys, err := decodeExprs(m.Keys, width(in))
	if err != nil {
		return nil, err
	}
	if len(m.KeyNames) != len(keys) {
		return nil, qerr.Internalf("codec: expand has %d keys and %d key names", len(keys), len(m.KeyNames))
	}
	if len(m.Sets) == 0 || len(m.Sets) > maxGroupingSets {
		return nil, qerr.Internalf("codec: expand has %d grouping sets", len(m.Sets))
	}
	sets := make([][]int, len(m.Sets))
	for i, s := range m.Sets {
		if s == nil {
			return nil, qerr.Internalf("codec: missing grouping set")
		}
		seen := make([]bool, len(keys))
		sets[i] = make([]int, len(s.Keys))
		for j, k := range s.Keys {
			if k < 0 || int(k) >= len(keys) || seen[k] {
				return nil, qerr.Internalf("codec: bad grouping set key %d", k)
			}
			seen[k] = true
			sets[i][j] = int(k)
		}
	}
	return &physical.Expand{Input: in, Keys: keys, KeyNames: m.KeyNames, Sets: sets}, nil
}
