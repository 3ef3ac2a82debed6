package quiver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/logical"
	lcodec "github.com/quiverdb/quiver/logical/codec"
)

// TestSealedCacheInputsOptimizeAsInPlace: a query over a cached view is
// optimized with the view's plan optimized on its own (from the session's
// memo) and sealed. For the dashboard queries over a cached join view, and
// queries that join, filter and aggregate around a cached table, the
// sealed optimization must encode exactly as optimizing the whole plan in
// place does (the scheduler keys cache entries by that plan); the memo
// must serve the second query without optimizing the input again; and a
// table registered again (another object, the same encoding) must not be
// served the plan made over the old one.
func TestSealedCacheInputsOptimizeAsInPlace(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	s, err := NewSession(ctx, WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Close()
		mem.AssertSize(t, 0)
	}()
	dir := filepath.Join("tpch", "sf0.01")
	for _, name := range []string{"lineitem", "orders", "customer", "nation", "region", "supplier"} {
		if err := s.RegisterParquet(ctx, name, filepath.Join(dir, name+".parquet")); err != nil {
			t.Fatal(err)
		}
	}
	run := func(q string) {
		t.Helper()
		df, err := s.SQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := df.Count(ctx); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	view, err := os.ReadFile(filepath.Join("tpch", "dashboard", "view.sql"))
	if err != nil {
		t.Fatal(err)
	}
	run(string(view))
	run("CACHE TABLE sales")
	run("CACHE TABLE big_orders AS SELECT o_orderkey, o_custkey, o_totalprice FROM orders WHERE o_totalprice > 100000")

	queries := []string{
		"SELECT nation, sum(revenue) FROM sales JOIN nation ON nation = n_name JOIN region ON n_regionkey = r_regionkey WHERE r_name = 'ASIA' GROUP BY nation",
		"SELECT c_name, count(*) FROM big_orders JOIN customer ON o_custkey = c_custkey WHERE c_acctbal > 0 GROUP BY c_name ORDER BY 2 DESC LIMIT 5",
		"SELECT count(*) FROM big_orders b JOIN lineitem ON b.o_orderkey = l_orderkey JOIN supplier ON l_suppkey = s_suppkey WHERE s_nationkey = 3",
		"SELECT * FROM (SELECT o_custkey, sum(o_totalprice) AS t FROM big_orders GROUP BY o_custkey) x WHERE t > 300000",
	}
	entries, err := filepath.Glob(filepath.Join("tpch", "dashboard", "d*.sql"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("dashboard queries: %v", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		queries = append(queries, string(b))
	}
	for _, q := range queries {
		df, err := s.SQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !hasCache(df.plan) {
			t.Fatalf("%s: the plan reads no cache", q)
		}
		inPlace, err := s.opt.Optimize(ctx, df.plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := s.optimize(ctx, df.plan, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := lcodec.Encode(inPlace)
		if err != nil {
			t.Fatal(err)
		}
		got, err := lcodec.Encode(sealed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\nsealed:\n%s\nin place:\n%s", strings.TrimSpace(q), logical.Indent(sealed), logical.Indent(inPlace))
		}
		logical.Inspect(sealed, func(n logical.Plan) bool {
			if c, ok := n.(*logical.Cache); ok && c.Sealed {
				t.Errorf("%s: a sealed Cache left the optimizer", q)
			}
			return true
		})
	}

	// The memo: one entry per cached input, served again for a new query.
	if n := len(s.inputs.m); n != 2 {
		t.Errorf("the memo holds %d inputs, want 2 (sales, big_orders)", n)
	}
	memoPlan := func() logical.Plan {
		for _, e := range s.inputs.m {
			for _, tb := range e.tables {
				if tb.Name == "orders" && len(e.tables) == 1 {
					return e.plan
				}
			}
		}
		return nil
	}
	before := memoPlan()
	if before == nil {
		t.Fatal("no memo entry for big_orders")
	}
	df, err := s.SQL(ctx, "SELECT count(*) FROM big_orders")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.optimize(ctx, df.plan, nil); err != nil {
		t.Fatal(err)
	}
	if memoPlan() != before {
		t.Error("a second query over big_orders optimized its input again")
	}

	// orders registered again: the same encoding, another table object.
	old, _ := s.cat.Table("orders")
	run("CREATE OR REPLACE EXTERNAL TABLE orders STORED AS PARQUET LOCATION '" + filepath.Join(dir, "orders.parquet") + "'")
	cur, _ := s.cat.Table("orders")
	if cur == old {
		t.Fatal("CREATE OR REPLACE kept the table object")
	}
	df, err = s.SQL(ctx, "SELECT count(*) FROM big_orders")
	if err != nil {
		t.Fatal(err)
	}
	lp, err := s.optimize(ctx, df.plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	logical.Inspect(lp, func(n logical.Plan) bool {
		if sc, ok := n.(*logical.Scan); ok && sc.Table.Name == "orders" && sc.Table != cur {
			t.Error("the optimized plan reads the replaced orders table")
		}
		return true
	})
}

func hasCache(p logical.Plan) bool {
	found := false
	logical.Inspect(p, func(n logical.Plan) bool {
		if _, ok := n.(*logical.Cache); ok {
			found = true
		}
		return !found
	})
	return found
}
