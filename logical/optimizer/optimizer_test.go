package optimizer

import (
	"context"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// badRule drops the top node's last column: a schema change the driver must catch.
type badRule struct{}

func (badRule) Name() string { return "bad_rule" }
func (badRule) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	s := p.Schema()
	np, err := logical.NewProjection(p, []logical.Expr{&logical.Column{Qualifier: s.Field(0).Qualifier, Name: s.Field(0).Name}})
	return np, true, err
}

// flipRule always reports a change: a batch with it never reaches a fixpoint.
type flipRule struct{}

func (flipRule) Name() string { return "flip_rule" }
func (flipRule) Rewrite(_ context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return p, true, nil
}

func TestOptimizerChecksSchema(t *testing.T) {
	o := &Optimizer{Batches: []Batch{{Name: "b", MaxPasses: 1, Rules: []Rule{badRule{}}}}}
	_, err := o.Optimize(context.Background(), scan(tblT, "t"), nil)
	if qerr.KindOf(err) != qerr.Internal || !strings.Contains(err.Error(), "bad_rule") {
		t.Fatalf("want an internal error naming bad_rule, got %v", err)
	}
}

func TestOptimizerFixpointLimit(t *testing.T) {
	o := &Optimizer{Batches: []Batch{{Name: "loop", MaxPasses: 3, Rules: []Rule{flipRule{}}}}}
	_, err := o.Optimize(context.Background(), scan(tblT, "t"), nil)
	if qerr.KindOf(err) != qerr.Internal || !strings.Contains(err.Error(), "loop") {
		t.Fatalf("want an internal error naming the batch, got %v", err)
	}
}

func TestRulesByName(t *testing.T) {
	for _, n := range []string{"simplify_expressions", "decorrelate_subqueries", "eliminate_cross_join",
		"push_down_filter", "push_down_projection", "reorder_joins", "push_down_limit", "common_subexpr_eliminate",
		"eliminate_filter", "eliminate_limit"} {
		if r, ok := Rules()[n]; !ok || r.Name() != n {
			t.Errorf("rule %s missing", n)
		}
	}
}

// TestDefaultOptimizer runs the default batches over a hand-built query with
// a comma join, a correlated EXISTS, a foldable date and a limit, recording
// which rules fired.
func TestDefaultOptimizer(t *testing.T) {
	sub := filter(scan(tblW, "w"), eq(col("w.k"), outer("u", "x", logical.Int64)))
	where := logical.And(
		eq(col("t.a"), col("u.k")),
		bin(logical.OpGt, &logical.Cast{Expr: col("t.d"), Type: logical.Timestamp}, bin(logical.OpSub, date("1998-12-01"), interval(0, 90))),
		&logical.Exists{Plan: sub})
	p := filter(cross(scan(tblT, "t"), scan(tblU, "u")), where)
	agg := aggregate(p, []logical.Expr{col("u.y")},
		agg(logical.AggSum, bin(logical.OpMul, col("t.e"), bin(logical.OpSub, dec(100, 3, 2), col("t.e")))),
		agg(logical.AggMax, bin(logical.OpMul, col("t.e"), bin(logical.OpSub, dec(100, 3, 2), col("t.e")))))
	sorted := must(logical.NewSort(agg, []logical.SortKey{{Expr: col("u.y"), Asc: true}}, -1))
	plan := &logical.Limit{Input: sorted, Fetch: 10}

	var b strings.Builder
	b.WriteString(logical.Indent(plan))
	out, err := New().Optimize(context.Background(), plan, func(rule string, p logical.Plan) {
		b.WriteString("--- plan after " + rule + "\n" + logical.Indent(p))
	})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Schema().Equal(plan.Schema()) {
		t.Fatalf("schema changed")
	}
	checkGolden(t, "default_optimizer", b.String())
}
