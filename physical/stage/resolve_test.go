package stage_test

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/physical/stage"
)

var testSchema = arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)

func scan(parts int) *physical.Scan {
	return &physical.Scan{Table: "t", Format: physical.FormatParquet, FileSchema: testSchema, Partitions: make([][]string, parts), Fetch: -1}
}

func col() physical.Expr {
	return &physical.Column{Index: 0, Name: "a", Type: arrow.PrimitiveTypes.Int64}
}

func TestSplitShapes(t *testing.T) {
	hash := &physical.Repartition{Input: scan(3), Keys: []physical.Expr{col()}, N: 4}
	cases := []struct {
		name   string
		plan   physical.Plan
		opts   stage.Options
		stages int
		final  string // the final writer's partitioning
		tasks  int    // of the final stage
	}{
		{"single scan", scan(1), stage.Options{}, 1, "single", 1},
		{"multi-partition scan", scan(3), stage.Options{}, 1, "passthrough", 3},
		{"round robin dropped", &physical.Repartition{Input: scan(1), N: 4}, stage.Options{}, 1, "single", 1},
		{"coalesce root is the final cut", &physical.Coalesce{Input: scan(3)}, stage.Options{}, 1, "single", 3},
		{"coalesce over one partition dropped", &physical.Coalesce{Input: scan(1)}, stage.Options{}, 1, "single", 1},
		{"hash root", hash, stage.Options{}, 2, "passthrough", 4},
		{"pinned", &physical.Coalesce{Input: hash}, stage.Options{PinFinal: true}, 2, "single pinned", 4},
		{"merge", &physical.SortPreservingMerge{Input: &physical.Sort{Input: scan(2), Keys: []physical.SortKey{{Expr: col(), Asc: true}}, Fetch: -1, PreservePartitioning: true}, Keys: []physical.SortKey{{Expr: col(), Asc: true}}, Fetch: -1}, stage.Options{}, 2, "single", 1},
		{"limit over coalesce", &physical.Limit{Input: &physical.Coalesce{Input: &physical.LocalLimit{Input: scan(2), Fetch: 5}}, Fetch: 5}, stage.Options{}, 2, "single", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := stage.Split("j", c.plan, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Stages) != c.stages {
				t.Fatalf("%d stages, want %d:\n%s", len(g.Stages), c.stages, g)
			}
			f := g.Final()
			if !f.Final || !strings.HasSuffix(f.Plan.String(), "partitioning="+c.final) || f.Tasks() != c.tasks {
				t.Fatalf("final stage %s with %d tasks, want %s with %d:\n%s", f.Plan, f.Tasks(), c.final, c.tasks, g)
			}
			if !f.Plan.Input.Schema().Equal(c.plan.Schema()) {
				t.Errorf("final schema %s, plan schema %s", f.Plan.Input.Schema(), c.plan.Schema())
			}
		})
	}
}

func TestSplitCollectLeft(t *testing.T) {
	// A collect-left join over a hash-partitioned probe side: the build side
	// gets its own stage and the probe side is cut to one partition.
	probe := &physical.HashAggregate{Input: &physical.Repartition{Input: scan(2), Keys: []physical.Expr{col()}, N: 2}, Mode: physical.AggSingle,
		GroupBy: []physical.Expr{col()}, GroupNames: []string{"a"}}
	j := &physical.HashJoin{Left: scan(1), Right: probe, Mode: physical.CollectLeft, Type: physical.AntiJoin, On: []physical.JoinOn{{Left: col(), Right: col()}}}
	g, err := stage.Split("j", j, stage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	final := g.Final()
	hj, ok := final.Plan.Input.(*physical.HashJoin)
	if !ok {
		t.Fatalf("final stage is not the join:\n%s", g)
	}
	l, lok := hj.Left.(*physical.UnresolvedShuffle)
	r, rok := hj.Right.(*physical.UnresolvedShuffle)
	if !lok || !rok || r.Partitions != 1 || g.Stage(l.StageID).Plan.OutputN() != 1 || final.Tasks() != 1 {
		t.Fatalf("join sides not cut as expected:\n%s", g)
	}
	// A build side that only reads shuffle output stays in the stage.
	j2 := &physical.HashJoin{Left: &physical.Filter{Input: &physical.Coalesce{Input: scan(2)}, Predicate: &physical.Literal{Type: arrow.FixedWidthTypes.Boolean, Value: true}},
		Right: scan(1), Mode: physical.CollectLeft, Type: physical.InnerJoin, On: []physical.JoinOn{{Left: col(), Right: col()}}}
	g, err = stage.Split("j", j2, stage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Stages) != 2 {
		t.Fatalf("want 2 stages (the coalesce and the join):\n%s", g)
	}
}

func TestSplitRejects(t *testing.T) {
	for name, c := range map[string]struct {
		job  string
		plan physical.Plan
		opts stage.Options
	}{
		"bad job id":         {"a/b", scan(1), stage.Options{}},
		"empty job id":       {"", scan(1), stage.Options{}},
		"nil plan":           {"j", nil, stage.Options{}},
		"bad compression":    {"j", scan(1), stage.Options{Compression: "gzip"}},
		"nested writer":      {"j", &physical.ShuffleWriter{Input: scan(1), JobID: "j", StageID: 1}, stage.Options{}},
		"foreign unresolved": {"j", &physical.UnresolvedShuffle{StageID: 3, OutSchema: testSchema, Partitions: 1}, stage.Options{}},
	} {
		if g, err := stage.Split(c.job, c.plan, c.opts); err == nil {
			t.Errorf("%s: split into\n%s", name, g)
		}
	}
}

func TestResolveUnresolve(t *testing.T) {
	p := &physical.Repartition{Input: scan(2), Keys: []physical.Expr{col()}, N: 3}
	cache := &physical.CacheReader{Key: physical.CacheKey{SessionID: "s", CacheID: "c"}, OutSchema: testSchema,
		Locations: [][]physical.PartitionLocation{{{JobID: "old", StageID: 1}}}}
	union := &physical.Union{Inputs: []physical.Plan{p, cache}}
	g, err := stage.Split("j", union, stage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	final := g.Final()
	if len(final.Inputs) != 1 || final.Inputs[0] != 1 {
		t.Fatalf("final stage inputs %v:\n%s", final.Inputs, g)
	}
	locs := [][]physical.PartitionLocation{
		{{JobID: "j", StageID: 1, OutputPartition: 0, MapPartition: 0}, {JobID: "j", StageID: 1, OutputPartition: 0, MapPartition: 1}},
		{{JobID: "j", StageID: 1, OutputPartition: 1, MapPartition: 0}},
	} // partition 2 missing: it reads no files
	before := physical.Indent(final.Plan)
	res := stage.Resolve(final.Plan, 1, locs)
	if physical.Indent(final.Plan) != before {
		t.Fatal("Resolve modified its input")
	}
	w, ok := res.(*physical.ShuffleWriter)
	if !ok {
		t.Fatalf("Resolve returned %T", res)
	}
	if len(stage.Inputs(w)) != 0 {
		t.Fatalf("still unresolved:\n%s", physical.Indent(w))
	}
	rd := w.Input.(*physical.Union).Inputs[0].(*physical.ShuffleReader)
	if rd.OutputPartitions() != 3 || len(rd.Locations[0]) != 2 || len(rd.Locations[2]) != 0 || !rd.OutSchema.Equal(testSchema) {
		t.Fatalf("reader %s: %v", rd, rd.Locations)
	}
	if w.Input.(*physical.Union).Inputs[1] != physical.Plan(cache) {
		t.Error("Resolve touched the cache reader")
	}
	if same := stage.Resolve(final.Plan, 7, locs); physical.Indent(same) != before {
		t.Error("Resolve of another stage changed the plan")
	}
	back := stage.Unresolve(w, 1)
	if physical.Indent(back) != before {
		t.Fatalf("Unresolve:\n%s\nwant\n%s", physical.Indent(back), before)
	}
	if back.(*physical.ShuffleWriter).Input.(*physical.Union).Inputs[1] != physical.Plan(cache) {
		t.Error("Unresolve touched the cache reader")
	}
	if g.Consumers(1)[0] != final.ID || g.Stage(99) != nil {
		t.Error("Consumers / Stage lookups wrong")
	}
}
