package codec

import (
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func encodeExpand(n *logical.Expand) (*rpc.LogicalPlan, error) {
	in, err := encodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	keys, err := encodeExprs(n.Keys)
	if err != nil {
		return nil, err
	}
	return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Expand{Expand: &rpc.LogicalExpand{Input: in, Keys: keys, Sets: encodeSets(n.Sets)}}}, nil
}

func decodeExpand(m *rpc.LogicalExpand) (logical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: missing expand node")
	}
	in, err := decodePlan(m.Input)
	if err != nil {
		return nil, err
	}
	keys, err := decodeExprs(m.Keys)
	if err != nil {
		return nil, err
	}
	sets, err := decodeSets(m.Sets, len(keys))
	if err != nil {
		return nil, err
	}
	return logical.NewExpand(in, keys, sets)
}

func encodeSets(sets [][]int) []*rpc.GroupingSet {
	out := make([]*rpc.GroupingSet, len(sets))
	for i, s := range sets {
		ks := make([]int32, len(s))
		for j, k := range s {
			ks[j] = int32(k)
		}
		out[i] = &rpc.GroupingSet{Keys: ks}
	}
	return out
}

// decodeSets checks the bounds before logical.NewExpand sees them, so a
// corrupt plan is an error and never an index past the keys.
func decodeSets(ms []*rpc.GroupingSet, keys int) ([][]int, error) {
	if len(ms) == 0 || len(ms) > logical.MaxGroupingSets {
		return nil, qerr.Internalf("codec: expand has %d grouping sets", len(ms))
	}
	out := make([][]int, len(ms))
	for i, m := range ms {
		if m == nil {
			return nil, qerr.Internalf("codec: missing grouping set")
		}
		if len(m.Keys) > keys {
			return nil, qerr.Internalf("codec: grouping set with %d keys of %d", len(m.Keys), keys)
		}
		out[i] = make([]int, len(m.Keys))
		for j, k := range m.Keys {
			if k < 0 || int(k) >= keys {
				return nil, qerr.Internalf("codec: grouping set key %d out of range", k)
			}
			out[i][j] = int(k)
		}
	}
	return out, nil
}
