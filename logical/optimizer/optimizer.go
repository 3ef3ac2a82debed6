package optimizer

import (
	"context"
	"sort"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// Rule is one named, single-purpose rewrite.
type Rule interface {
	Name() string
	// Rewrite returns the rewritten plan and whether it changed. It must keep p's output schema
	// (names, qualifiers, types).
	Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error)
}

// Batch is an ordered list of rules run together. MaxPasses 1 runs the rules
// once; more runs them until a pass changes nothing, at most MaxPasses times.
type Batch struct {
	Name      string
	Rules     []Rule
	MaxPasses int
}

// Optimizer runs its batches in order.
type Optimizer struct {
	Batches []Batch
}

// New returns the optimizer with the default batches:
//
//	(simplify, merge_scalar_aggregates)* → decorrelate → (simplify, eliminate_cross_join, push_down_filter, push_down_cte_filter, propagate_empty, pull_up_left_join, eliminate_outer_join)*
//	→ (left_join_to_anti, push_down_filter)
//	→ reorder_joins → (semi_join_reduction, semi_to_inner_join) → (common_subexpr, push_down_limit, eliminate_limit, propagate_empty)*
//	→ eager_aggregate → push_down_projection → window_topk
//
// single_distinct_to_groupby is not in the default batches: on this engine
// it measured slower (see single_distinct.go); WithSingleDistinct adds it.
func New() *Optimizer {
	return &Optimizer{Batches: []Batch{
		{Name: "simplify", MaxPasses: 8, Rules: []Rule{SimplifyExpressions{}, EliminateFilter{}, MergeScalarAggregates{}}},
		{Name: "decorrelate", MaxPasses: 1, Rules: []Rule{DecorrelateSubqueries{}}},
		{Name: "rewrite", MaxPasses: 8, Rules: []Rule{
			SimplifyExpressions{}, EliminateFilter{}, EliminateCrossJoin{}, PushDownFilter{}, PushDownCTEFilter{}, PropagateEmpty{},
			PullUpLeftJoin{}, EliminateOuterJoin{},
		}},
		// After the rewrite batch, so pull_up_left_join has moved each left
		// join above the inner joins that cut its rows (it does not move
		// anti joins).
		{Name: "anti_join", MaxPasses: 1, Rules: []Rule{LeftJoinToAnti{}, PushDownFilter{}}},
		{Name: "join_order", MaxPasses: 1, Rules: []Rule{ReorderJoins{}, PushDownFilter{}}},
		{Name: "semi_joins", MaxPasses: 1, Rules: []Rule{SemiJoinReduction{}, SemiToInnerJoin{}}},
		{Name: "finish", MaxPasses: 8, Rules: []Rule{
			CommonSubexprEliminate{}, PushDownLimit{}, EliminateLimit{}, PropagateEmpty{},
		}},
		{Name: "eager_aggregate", MaxPasses: 1, Rules: []Rule{EagerAggregate{}}},
		{Name: "projection", MaxPasses: 1, Rules: []Rule{PushDownProjection{}}},
		{Name: "window_topk", MaxPasses: 1, Rules: []Rule{WindowTopK{}}},
	}}
}

// Without returns a copy of o without the rule named name (a session whose
// engine cannot use a rule's rewrite leaves it out).
func (o *Optimizer) Without(name string) *Optimizer {
	n := &Optimizer{}
	for _, b := range o.Batches {
		nb := b
		nb.Rules = nil
		for _, r := range b.Rules {
			if r.Name() != name {
				nb.Rules = append(nb.Rules, r)
			}
		}
		n.Batches = append(n.Batches, nb)
	}
	return n
}

// Rules returns every rule by name (for tests and EXPLAIN VERBOSE).
func Rules() map[string]Rule {
	out := map[string]Rule{}
	for _, r := range []Rule{
		SimplifyExpressions{}, EliminateFilter{}, EliminateLimit{}, DecorrelateSubqueries{},
		EliminateCrossJoin{}, PushDownFilter{}, ReorderJoins{}, CommonSubexprEliminate{},
		PushDownLimit{}, PushDownProjection{}, SingleDistinctToGroupBy{}, SemiJoinReduction{},
		SemiToInnerJoin{}, PropagateEmpty{}, PushDownCTEFilter{}, EliminateOuterJoin{}, EagerAggregate{},
		MergeScalarAggregates{}, PullUpLeftJoin{}, LeftJoinToAnti{}, WindowTopK{},
	} {
		out[r.Name()] = r
	}
	return out
}

// RuleNames returns the names of Rules, sorted.
func RuleNames() []string {
	var out []string
	for n := range Rules() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Optimize runs the batches; after every rule that reports a change it checks
// the schema is unchanged (logical.Schema.Equal) and returns qerr.Internalf
// naming the rule if not. observe (may be nil) is called after every rule that
// changed the plan. A fixpoint batch that has not stabilised after MaxPasses is
// an error (qerr.Internalf).
func (o *Optimizer) Optimize(ctx context.Context, p logical.Plan, observe func(rule string, p logical.Plan)) (logical.Plan, error) {
	for _, b := range o.Batches {
		passes := max(1, b.MaxPasses)
		stable := false
		for pass := 0; pass < passes; pass++ {
			changedPass := false
			for _, r := range b.Rules {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				np, changed, err := r.Rewrite(ctx, p)
				if err != nil {
					return nil, err
				}
				if !changed {
					continue
				}
				if !np.Schema().Equal(p.Schema()) {
					return nil, qerr.Internalf("optimizer rule %s changed the plan schema from %s to %s", r.Name(), p.Schema(), np.Schema())
				}
				p, changedPass = np, true
				if observe != nil {
					observe(r.Name(), p)
				}
			}
			if !changedPass {
				stable = true
				break
			}
		}
		if !stable && passes > 1 {
			return nil, qerr.Internalf("optimizer batch %s did not reach a fixpoint after %d passes", b.Name, passes)
		}
	}
	return p, nil
}
