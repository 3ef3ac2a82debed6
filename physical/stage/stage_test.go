package stage_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/planner"
	"github.com/quiverdb/quiver/physical/stage"
	"github.com/quiverdb/quiver/sql"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

const tpchDir = "../../tpch"

var tpchTables = []string{"region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"}

func tpchCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat := catalog.New()
	for _, name := range tpchTables {
		tab, err := catalog.OpenTable(name, catalog.Parquet, filepath.Join(tpchDir, "sf0.01", name+".parquet"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cat.RegisterTable(tab, false); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

// tpchPlan returns the physical plan of TPC-H query q at 2 partitions, as
// the scheduler plans it (shared CTEs too).
func tpchPlan(t testing.TB, cat *catalog.Catalog, q int) physical.Plan {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(tpchDir, "queries", fmt.Sprintf("q%02d.sql", q)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lp, err := sql.NewPlanner(cat).PlanQuery(string(text))
	if err != nil {
		t.Fatalf("q%02d: plan: %v", q, err)
	}
	if lp, err = optimizer.New().Optimize(ctx, lp, nil); err != nil {
		t.Fatalf("q%02d: optimize: %v", q, err)
	}
	pp, err := planner.New(planner.Config{TargetPartitions: 2, ShareCTEs: true}).Plan(ctx, lp)
	if err != nil {
		t.Fatalf("q%02d: physical plan: %v", q, err)
	}
	return pp
}

// TestTPCHStages compares the stage graphs of the 22 TPC-H queries with
// testdata/qNN.golden (rewrite with -rewrite) and checks the graph
// invariants on each.
func TestTPCHStages(t *testing.T) {
	cat := tpchCatalog(t)
	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			pp := tpchPlan(t, cat, q)
			g, err := stage.Split("job1", pp, stage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, g, pp)
			got := g.String()
			path := filepath.Join("testdata", fmt.Sprintf("q%02d.golden", q))
			if *rewrite {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got != string(want) {
				t.Errorf("stage graph differs from %s (run with -rewrite to update):\n%s", path, got)
			}
		})
	}
}

// checkGraph checks what every graph must satisfy: ids 1..n in dependency
// order, inputs matching the UnresolvedShuffles, no in-memory exchange left
// inside a stage, independent tasks, the final stage last and keyless, and
// the result schema unchanged.
func checkGraph(t *testing.T, g *stage.Graph, p physical.Plan) {
	t.Helper()
	if len(g.Stages) == 0 {
		t.Fatal("no stages")
	}
	for i, s := range g.Stages {
		if s.ID != i+1 || s.Plan.StageID != s.ID || s.Plan.JobID != g.JobID {
			t.Errorf("stage %d: id %d, writer stage %d job %q", i+1, s.ID, s.Plan.StageID, s.Plan.JobID)
		}
		if s.Final != (i == len(g.Stages)-1) {
			t.Errorf("stage %d: final=%v", s.ID, s.Final)
		}
		for _, in := range s.Inputs {
			if in >= s.ID {
				t.Errorf("stage %d reads stage %d, which does not come before it", s.ID, in)
			}
		}
		if got := stage.Inputs(s.Plan); fmt.Sprint(got) != fmt.Sprint(s.Inputs) {
			t.Errorf("stage %d: Inputs=%v, plan reads %v", s.ID, s.Inputs, got)
		}
		if s.Plan.Compression != physical.CompressLZ4 {
			t.Errorf("stage %d: compression %q", s.ID, s.Plan.Compression)
		}
		var check func(physical.Plan)
		check = func(n physical.Plan) {
			switch n := n.(type) {
			case *physical.Repartition, *physical.Coalesce:
				t.Errorf("stage %d keeps an in-memory exchange: %s", s.ID, n)
			case *physical.UnresolvedShuffle:
				src := g.Stage(n.StageID)
				if src == nil || n.Partitions != src.Plan.OutputN() {
					t.Errorf("stage %d reads %s, which stage %v does not produce", s.ID, n, src)
				}
			case *physical.HashJoin:
				// Joins that emit unmatched build rows need every probe row in one task.
				if n.Mode == physical.CollectLeft && n.Type != physical.InnerJoin && n.Type != physical.RightJoin && n.Right.OutputPartitions() != 1 {
					t.Errorf("stage %d: collect-left %s join probes %d partitions in one task", s.ID, n.Type, n.Right.OutputPartitions())
				}
			case *physical.NestedLoopJoin:
				if n.Type != physical.InnerJoin && n.Type != physical.RightJoin && n.Right.OutputPartitions() != 1 {
					t.Errorf("stage %d: nested loop join probes %d partitions in one task", s.ID, n.Right.OutputPartitions())
				}
			}
			for _, c := range n.Children() {
				check(c)
			}
		}
		check(s.Plan.Input)
	}
	final := g.Final()
	if len(final.Plan.Keys) != 0 || final.Plan.OutputN() != p.OutputPartitions() {
		t.Errorf("final stage writes %d partitions (keys %v); the plan has %d", final.Plan.OutputN(), final.Plan.Keys, p.OutputPartitions())
	}
	if !final.Plan.Input.Schema().Equal(p.Schema()) {
		t.Errorf("final schema %s, plan schema %s", final.Plan.Input.Schema(), p.Schema())
	}
	if len(g.Consumers(final.ID)) != 0 {
		t.Errorf("final stage has consumers %v", g.Consumers(final.ID))
	}
	for _, s := range g.Stages[:len(g.Stages)-1] {
		if len(g.Consumers(s.ID)) == 0 {
			t.Errorf("stage %d is read by no stage", s.ID)
		}
	}
	if !strings.Contains(g.String(), "final") {
		t.Error("String does not mark the final stage")
	}
}

// TestTPCHWholeStages compares the in-memory (Options.InMemory) graphs of
// the 22 TPC-H queries with testdata/memory/qNN.golden: one whole final
// stage over the unchanged plan, after one whole stage per shared CTE (q15).
func TestTPCHWholeStages(t *testing.T) {
	cat := tpchCatalog(t)
	for q := 1; q <= 22; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			pp := tpchPlan(t, cat, q)
			g, err := stage.Split("job1", pp, stage.Options{InMemory: true, PinFinal: q == 1})
			if err != nil {
				t.Fatal(err)
			}
			shared := sharedCTEs(pp)
			if len(g.Stages) != 1+shared {
				t.Fatalf("%d stages, want 1 and one per shared CTE (%d)", len(g.Stages), shared)
			}
			for _, s := range g.Stages {
				if !s.Whole || s.Tasks() != 1 || s.Final != (s == g.Final()) || s.Plan.Pinned != (s.Final && q == 1) {
					t.Errorf("stage %+v", s)
				}
				if !s.Final && s.Plan.Compression != physical.CompressNone {
					t.Errorf("shared CTE stage %d writes %s files, want none: its readers are on its executor", s.ID, s.Plan.Compression)
				}
			}
			s := g.Final()
			if shared == 0 && (s.ID != 1 || len(s.Inputs) != 0 || s.Plan.Input != pp) {
				t.Errorf("stage %+v: want the plan itself", s)
			}
			if len(s.Plan.Keys) != 0 || s.Plan.OutputN() != pp.OutputPartitions() || s.Plan.Compression != physical.CompressLZ4 {
				t.Errorf("writer %s over %d partitions, outputs %d; want passthrough or single", s.Plan, pp.OutputPartitions(), s.Plan.OutputN())
			}
			got := g.String()
			path := filepath.Join("testdata", "memory", fmt.Sprintf("q%02d.golden", q))
			if *rewrite {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if got != string(want) {
				t.Errorf("stage graph differs from %s (run with -rewrite to update):\n%s", path, got)
			}
		})
	}
}

func TestWholeRejectsStagedPlans(t *testing.T) {
	cat := tpchCatalog(t)
	g, err := stage.Split("job1", tpchPlan(t, cat, 3), stage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stage.Split("job2", g.Final().Plan, stage.Options{InMemory: true}); err == nil || !strings.Contains(err.Error(), "already contains") {
		t.Fatalf("in-memory split of a staged plan: %v", err)
	}
	if _, err := stage.Split("bad/id", tpchPlan(t, cat, 1), stage.Options{InMemory: true}); err == nil {
		t.Fatal("in-memory split accepted a bad job id")
	}
	if _, err := stage.Split("job3", tpchPlan(t, cat, 1), stage.Options{InMemory: true, Compression: "gzip"}); err == nil {
		t.Fatal("in-memory split accepted a bad compression")
	}
}

// sharedCTEs counts the distinct SharedCTE nodes of p.
func sharedCTEs(p physical.Plan) int {
	ids := map[int]bool{}
	var walk func(physical.Plan)
	walk = func(p physical.Plan) {
		if c, ok := p.(*physical.SharedCTE); ok {
			ids[c.ID] = true
		}
		for _, ch := range p.Children() {
			walk(ch)
		}
	}
	walk(p)
	return len(ids)
}
