package codec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func encodeRecursiveQuery(n *physical.RecursiveQuery) (*rpc.PhysicalPlan, error) {
	st, err := encodePlan(n.Static)
	if err != nil {
		return nil, err
	}
	rec, err := encodePlan(n.Recursive)
	if err != nil {
		return nil, err
	}
	s, err := arrowpb.EncodeSchema(n.OutSchema)
	if err != nil {
		return nil, err
	}
	return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_RecursiveQuery{RecursiveQuery: &rpc.PhysicalRecursiveQuery{
		Name: n.Name, Static: st, Recursive: rec, Distinct: n.Distinct, MaxDepth: n.MaxDepth, Schema: s}}}, nil
}

// decodeRecursiveQuery checks what the operator relies on: each term has
// one partition and the query's column types.
func decodeRecursiveQuery(m *rpc.PhysicalRecursiveQuery) (physical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: empty recursive query")
	}
	s, err := arrowpb.DecodeSchema(m.Schema)
	if err != nil {
		return nil, err
	}
	st, err := decodePlan(m.Static)
	if err != nil {
		return nil, err
	}
	rec, err := decodePlan(m.Recursive)
	if err != nil {
		return nil, err
	}
	for _, term := range []physical.Plan{st, rec} {
		if term.OutputPartitions() != 1 {
			return nil, qerr.Internalf("codec: a term of recursive query %q has %d partitions, want 1", m.Name, term.OutputPartitions())
		}
		ts := term.Schema()
		if ts.NumFields() != s.NumFields() {
			return nil, qerr.Internalf("codec: a term of recursive query %q has %d columns, want %d", m.Name, ts.NumFields(), s.NumFields())
		}
		for i := range ts.NumFields() {
			if !arrow.TypeEqual(ts.Field(i).Type, s.Field(i).Type) {
				return nil, qerr.Internalf("codec: column %d of a term of recursive query %q has type %s, want %s", i+1, m.Name, ts.Field(i).Type, s.Field(i).Type)
			}
		}
	}
	return &physical.RecursiveQuery{Name: m.Name, Static: st, Recursive: rec, Distinct: m.Distinct, MaxDepth: m.MaxDepth, OutSchema: s}, nil
}

func encodeWorkTable(n *physical.WorkTable) (*rpc.PhysicalPlan, error) {
	s, err := arrowpb.EncodeSchema(n.OutSchema)
	if err != nil {
		return nil, err
	}
	return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_WorkTable{WorkTable: &rpc.PhysicalWorkTable{Name: n.Name, Schema: s}}}, nil
}

func decodeWorkTable(m *rpc.PhysicalWorkTable) (physical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: empty work table")
	}
	s, err := arrowpb.DecodeSchema(m.Schema)
	if err != nil {
		return nil, err
	}
	return &physical.WorkTable{Name: m.Name, OutSchema: s}, nil
}
