package optimizer

// pull_up_left_join moves a left join that is an input of a tree of inner
// joins above the tree when the inner joins' conditions read nothing of its
// right (NULL-supplying) side, and the inner joins are estimated to cut its
// left side's rows (TPC-DS q5, q49, q77, q80: sales LEFT JOIN returns, then
// a selective date, item or promotion join):
//
//	Inner Join: a.d = d.k                 Projection: a.*, b.*, d.* (the old order)
//	  Left Join: a.x = b.x          →       Left Join: a.x = b.x
//	    TableScan: a                          Inner Join: a.d = d.k
//	    TableScan: b                            TableScan: a
//	  Filter: d.y = 1                           Filter: d.y = 1
//	    TableScan: d                              TableScan: d
//	                                          TableScan: b
//
// (A ⟕p B) ⋈q R = (A ⋈q R) ⟕p B holds whenever q reads no column of B, so the
// left join probes only the rows the inner joins keep. It must NOT fire when
// a condition of the tree reads the right side, on semi, anti, mark or
// null-aware joins, or when the inner joins do not cut the rows. Filters
// right above the left join move up with it (a filter commutes with an inner
// join that reads none of the columns it adds).

import (
	"context"
	"strings"

	"github.com/quiverdb/quiver/logical"
)

// PullUpLeftJoin is the rule moving a left join above the inner joins of
// its left side.
type PullUpLeftJoin struct{}

// Name implements Rule.
func (PullUpLeftJoin) Name() string { return "pull_up_left_join" }

// pullUpCut is how much smaller the inner joins must make the left join's
// left side (by estimate) for the move to pay.
const pullUpCut = 0.5

// Rewrite implements Rule.
func (PullUpLeftJoin) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	changed := false
	var walk func(p logical.Plan) (logical.Plan, error)
	walk = func(p logical.Plan) (logical.Plan, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		j, ok := p.(*logical.Join)
		if !ok || j.Type != logical.InnerJoin {
			return mapChildren(p, walk)
		}
		leaves, conds := flattenInner(j)
		for i, l := range leaves {
			n, err := walk(l)
			if err != nil {
				return nil, err
			}
			leaves[i] = n
		}
		for i, l := range leaves {
			// Filters right above the left join (WHERE sr_ticket_number IS
			// NULL) go up with it.
			var filters []*logical.Filter
			for {
				f, ok := l.(*logical.Filter)
				if !ok {
					break
				}
				filters = append(filters, f)
				l = f.Input
			}
			lj, ok := l.(*logical.Join)
			if !ok || lj.Type != logical.LeftJoin || lj.NullAware || lj.MarkName != "" || readsAny(conds, lj.Right.Schema()) {
				continue
			}
			moved := append([]logical.Plan(nil), leaves...)
			moved[i] = lj.Left
			tree, err := rebuildInner(j, moved)
			if err != nil {
				return nil, err
			}
			if logical.Estimate(tree).Rows >= pullUpCut*logical.Estimate(lj.Left).Rows {
				continue
			}
			var top logical.Plan
			if top, err = logical.NewJoin(tree, lj.Right, logical.LeftJoin, lj.On, lj.Filter, false, ""); err != nil {
				return nil, err
			}
			for k := len(filters) - 1; k >= 0; k-- {
				if top, err = logical.NewFilter(top, filters[k].Predicate); err != nil {
					return nil, err
				}
			}
			restored, err := restoreSchema(top, j.Schema())
			if err != nil {
				// Columns the old order cannot name apart: keep the tree.
				continue
			}
			changed = true
			return restored, nil
		}
		return rebuildInner(j, leaves)
	}
	out, err := walk(p)
	if err != nil {
		return nil, false, err
	}
	if !changed {
		return p, false, nil
	}
	return out, true, nil
}

// readsAny reports whether any of es reads a column of s.
func readsAny(es []logical.Expr, s *logical.Schema) bool {
	for _, e := range es {
		for _, c := range logical.ColumnsOf(e) {
			if mayName(s, c) {
				return true
			}
		}
		if hasSubquery(e) || hasOuterRef(e) {
			return true
		}
	}
	return false
}

// mayName reports whether c could name a field of s: by name, and by
// qualifier when it has one (ignoring case, so as to err towards yes).
func mayName(s *logical.Schema, c *logical.Column) bool {
	for _, f := range s.Fields {
		if strings.EqualFold(f.Name, c.Name) && (c.Qualifier == "" || strings.EqualFold(f.Qualifier, c.Qualifier)) {
			return true
		}
	}
	return false
}
