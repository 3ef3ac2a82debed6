package codec

import (
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func encodeRecursiveQuery(n *logical.RecursiveQuery) (*rpc.LogicalPlan, error) {
	st, err := encodePlan(n.Static)
	if err != nil {
		return nil, err
	}
	rec, err := encodePlan(n.Recursive)
	if err != nil {
		return nil, err
	}
	return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_RecursiveQuery{RecursiveQuery: &rpc.LogicalRecursiveQuery{
		Name: n.Name, Static: st, Recursive: rec, Distinct: n.Distinct}}}, nil
}

func decodeRecursiveQuery(m *rpc.LogicalRecursiveQuery) (logical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: empty recursive query")
	}
	st, err := decodePlan(m.Static)
	if err != nil {
		return nil, err
	}
	rec, err := decodePlan(m.Recursive)
	if err != nil {
		return nil, err
	}
	return logical.NewRecursiveQuery(m.Name, st, rec, m.Distinct)
}

func encodeWorkTable(n *logical.WorkTable) (*rpc.LogicalPlan, error) {
	fs, err := encodeFields(n.Schema())
	if err != nil {
		return nil, err
	}
	return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_WorkTable{WorkTable: &rpc.LogicalWorkTable{Name: n.Name, Schema: fs}}}, nil
}

func decodeWorkTable(m *rpc.LogicalWorkTable) (logical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: empty work table")
	}
	s, err := decodeFields(m.Schema)
	if err != nil {
		return nil, err
	}
	return logical.NewWorkTable(m.Name, s), nil
}
