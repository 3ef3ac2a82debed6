package optimizer

import (
	"context"
	"errors"
	"testing"

	"github.com/quiverdb/quiver/logical"
)

// TestRulesCheckContext: rules that walk the plan stop at the first node
// once the context has ended, so a statement timeout holds inside one long
// rewrite and not only between rules.
func TestRulesCheckContext(t *testing.T) {
	one := logical.NewEmptyRelation(true, logical.NewSchema())
	p, err := logical.NewProjection(one, []logical.Expr{&logical.Alias{Expr: &logical.Binary{Op: logical.OpAdd, Left: logical.Lit(int64(1)), Right: logical.Lit(int64(2))}, Name: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, r := range []Rule{SimplifyExpressions{}, CommonSubexprEliminate{}, EliminateFilter{}, EliminateLimit{},
		PushDownLimit{}, SemiJoinReduction{}, SemiToInnerJoin{}, SingleDistinctToGroupBy{}} {
		if _, _, err := r.Rewrite(ctx, p); !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a cancelled context: got %v, want context.Canceled", r.Name(), err)
		}
	}
}
