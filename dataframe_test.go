package quiver_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
	"go.uber.org/goleak"
)

func date(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func table(t *testing.T, s *quiver.Session, name string) *quiver.DataFrame {
	t.Helper()
	df, err := s.Table(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return df
}

var (
	col = quiver.Col
	dec = quiver.Decimal
)

// revenue is l_extendedprice * (1 - l_discount).
func revenue() quiver.Expr { return col("l_extendedprice").Mul(quiver.Lit(1).Sub(col("l_discount"))) }

// tpchFrames writes TPC-H queries as DataFrame chains.
var tpchFrames = map[int]func(t *testing.T, s *quiver.Session) *quiver.DataFrame{
	1: func(t *testing.T, s *quiver.Session) *quiver.DataFrame {
		return table(t, s, "lineitem").
			Filter(col("l_shipdate").Lte(date("1998-09-02"))).
			Aggregate(
				[]quiver.Expr{col("l_returnflag"), col("l_linestatus")},
				[]quiver.Expr{
					quiver.Sum(col("l_quantity")).As("sum_qty"),
					quiver.Sum(col("l_extendedprice")).As("sum_base_price"),
					quiver.Sum(revenue()).As("sum_disc_price"),
					quiver.Sum(revenue().Mul(quiver.Lit(1).Add(col("l_tax")))).As("sum_charge"),
					quiver.Avg(col("l_quantity")).As("avg_qty"),
					quiver.Avg(col("l_extendedprice")).As("avg_price"),
					quiver.Avg(col("l_discount")).As("avg_disc"),
					quiver.Count(col("*")).As("count_order"),
				}).
			Sort(col("l_returnflag").Asc(), col("l_linestatus").Asc())
	},
	3: func(t *testing.T, s *quiver.Session) *quiver.DataFrame {
		c := table(t, s, "customer").Filter(col("c_mktsegment").Eq("BUILDING"))
		o := table(t, s, "orders").Filter(col("o_orderdate").Lt(date("1995-03-15")))
		l := table(t, s, "lineitem").Filter(col("l_shipdate").Gt(date("1995-03-15")))
		return c.Join(o, quiver.InnerJoin, col("c_custkey").Eq(col("o_custkey"))).
			Join(l, quiver.InnerJoin, col("l_orderkey").Eq(col("o_orderkey"))).
			Aggregate(
				[]quiver.Expr{col("l_orderkey"), col("o_orderdate"), col("o_shippriority")},
				[]quiver.Expr{quiver.Sum(revenue()).As("revenue")}).
			Select(col("l_orderkey"), col("revenue"), col("o_orderdate"), col("o_shippriority")).
			Sort(col("revenue").Desc(), col("o_orderdate").Asc()).
			Limit(0, 10)
	},
	5: func(t *testing.T, s *quiver.Session) *quiver.DataFrame {
		o := table(t, s, "orders").Filter(col("o_orderdate").Gte(date("1994-01-01")).And(col("o_orderdate").Lt(date("1995-01-01"))))
		r := table(t, s, "region").Filter(col("r_name").Eq("ASIA"))
		return table(t, s, "customer").
			Join(o, quiver.InnerJoin, col("c_custkey").Eq(col("o_custkey"))).
			Join(table(t, s, "lineitem"), quiver.InnerJoin, col("l_orderkey").Eq(col("o_orderkey"))).
			Join(table(t, s, "supplier"), quiver.InnerJoin, col("l_suppkey").Eq(col("s_suppkey")).And(col("c_nationkey").Eq(col("s_nationkey")))).
			Join(table(t, s, "nation"), quiver.InnerJoin, col("s_nationkey").Eq(col("n_nationkey"))).
			Join(r, quiver.InnerJoin, col("n_regionkey").Eq(col("r_regionkey"))).
			Aggregate([]quiver.Expr{col("n_name")}, []quiver.Expr{quiver.Sum(revenue()).As("revenue")}).
			Sort(col("revenue").Desc())
	},
	6: func(t *testing.T, s *quiver.Session) *quiver.DataFrame {
		return table(t, s, "lineitem").
			Filter(col("l_shipdate").Gte(date("1994-01-01")).
				And(col("l_shipdate").Lt(date("1995-01-01"))).
				And(col("l_discount").Between(dec("0.05"), dec("0.07"))).
				And(col("l_quantity").Lt(24))).
			Aggregate(nil, []quiver.Expr{quiver.Sum(col("l_extendedprice").Mul(col("l_discount"))).As("revenue")})
	},
	10: func(t *testing.T, s *quiver.Session) *quiver.DataFrame {
		o := table(t, s, "orders").Filter(col("o_orderdate").Gte(date("1993-10-01")).And(col("o_orderdate").Lt(date("1994-01-01"))))
		l := table(t, s, "lineitem").Filter(col("l_returnflag").Eq("R"))
		return table(t, s, "customer").
			Join(o, quiver.InnerJoin, col("c_custkey").Eq(col("o_custkey"))).
			Join(l, quiver.InnerJoin, col("l_orderkey").Eq(col("o_orderkey"))).
			Join(table(t, s, "nation"), quiver.InnerJoin, col("c_nationkey").Eq(col("n_nationkey"))).
			Aggregate(
				[]quiver.Expr{col("c_custkey"), col("c_name"), col("c_acctbal"), col("c_phone"), col("n_name"), col("c_address"), col("c_comment")},
				[]quiver.Expr{quiver.Sum(revenue()).As("revenue")}).
			Select(col("c_custkey"), col("c_name"), col("revenue"), col("c_acctbal"), col("n_name"), col("c_address"), col("c_phone"), col("c_comment")).
			Sort(col("revenue").Desc()).
			Limit(0, 20)
	},
}

// TestDataFrameTPCH checks that DataFrame chains give the answers of the
// SQL TPC-H queries they transcribe.
func TestDataFrameTPCH(t *testing.T) {
	s := newTPCHSession(t)
	ctx := context.Background()
	for _, q := range slices.Sorted(func(yield func(int) bool) {
		for q := range tpchFrames {
			if !yield(q) {
				return
			}
		}
	}) {
		t.Run("q"+itoa(q), func(t *testing.T) {
			df := tpchFrames[q](t, s)
			if err := df.Err(); err != nil {
				t.Fatal(err)
			}
			batches, err := df.Collect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer release(batches)
			want := readAnswer(t, filepath.Join("tpch", "answers", "q"+pad2(q)+".csv"))
			compareAnswer(t, df.Schema(), render(df.Schema(), batches), want)
		})
	}
}

func itoa(n int) string { return strings.TrimLeft(pad2(n), "0") }
func pad2(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

func release(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

// TestStreamEarlyStop breaks out of a Stream after the first batch: the
// query's goroutines must exit and its memory must be returned.
func TestStreamEarlyStop(t *testing.T) {
	for _, mode := range []struct {
		name string
		opt  quiver.Option
	}{{"local", quiver.WithLocalExecution()}, {"standalone-cluster", quiver.WithStandaloneCluster(2)}} {
		t.Run(mode.name, func(t *testing.T) {
			// Goroutines of earlier tests' sessions may still be winding down; this
			// test is about what this session starts.
			before := goleak.IgnoreCurrent()
			s := newTPCHSession(t, mode.opt, quiver.WithBatchSize(100), quiver.WithTargetPartitions(4))
			streamEarlyStop(t, s)
			// Closing the session stops everything it started: the query's
			// goroutines and, in cluster mode, the scheduler and executors.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			goleak.VerifyNone(t, before)
		})
	}
}

func streamEarlyStop(t *testing.T, s *quiver.Session) {
	ctx := context.Background()
	df := table(t, s, "lineitem").Filter(col("l_quantity").Gt(1))
	n := 0
	for b, err := range df.Stream(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if b.NumRows() == 0 {
			t.Fatal("empty batch")
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("got %d batches before break", n)
	}
	// A canceled context stops a stream with an error, not a hang.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for _, err := range df.Stream(cctx) {
		if err == nil {
			t.Fatal("stream on a canceled context yielded a batch")
		}
		break
	}
}

// TestBuilderErrors checks every builder reports bad input through Err and
// every action, naming the operation and the column, without panicking.
func TestBuilderErrors(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	s, err := quiver.NewSession(ctx, quiver.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RegisterParquet(ctx, "nation", "tpch/sf0.01/nation.parquet"); err != nil {
		t.Fatal(err)
	}
	other, _ := quiver.NewSession(ctx)
	defer other.Close()
	other.RegisterParquet(ctx, "nation", "tpch/sf0.01/nation.parquet")
	n := table(t, s, "nation")
	on := table(t, other, "nation")
	cases := []struct {
		name string
		df   *quiver.DataFrame
		want []string // substrings of the error
	}{
		{"filter unknown column", n.Filter(col("nope").Eq(1)), []string{"Filter", `"nope"`}},
		{"filter not boolean", n.Filter(col("n_name")), []string{"Filter", "boolean"}},
		{"filter type mismatch", n.Filter(col("n_name").Add(1)), []string{"Filter", "Utf8"}},
		{"select unknown column", n.Select(col("n_name"), col("missing")), []string{"Select", `"missing"`}},
		{"select nothing", n.Select(), []string{"Select", "no columns"}},
		{"select aggregate", n.Select(quiver.Sum(col("n_nationkey"))), []string{"Select", "aggregate"}},
		{"aggregate not an aggregate", n.Aggregate(nil, []quiver.Expr{col("n_name")}), []string{"Aggregate", "not an aggregate"}},
		{"aggregate unknown group", n.Aggregate([]quiver.Expr{col("x")}, nil), []string{"Aggregate", `"x"`}},
		{"aggregate sum of string", n.Aggregate(nil, []quiver.Expr{quiver.Sum(col("n_name"))}), []string{"Aggregate", "sum"}},
		{"aggregate empty", n.Aggregate(nil, nil), []string{"Aggregate"}},
		{"join nil", n.Join(nil, quiver.InnerJoin, col("a").Eq(col("b"))), []string{"Join", "nil"}},
		{"join other session", n.Join(on, quiver.InnerJoin, col("n_nationkey").Eq(1)), []string{"Join", "different sessions"}},
		{"join unknown column", n.Join(table(t, s, "nation").Alias("m"), quiver.InnerJoin, col("n.zz").Eq(col("m.n_nationkey"))), []string{"Join", "zz"}},
		{"join bad type", n.Join(table(t, s, "nation").Alias("m"), quiver.JoinType(99), col("n_nationkey").Eq(1)), []string{"Join", "join type"}},
		{"sort unknown", n.Sort(col("zz").Asc()), []string{"Sort", `"zz"`}},
		{"sort nothing", n.Sort(), []string{"Sort"}},
		{"limit negative", n.Limit(-1, 5), []string{"Limit", "negative"}},
		{"lit bad type", n.Filter(col("n_nationkey").Eq(quiver.Lit(struct{}{}))), []string{"Filter", "unsupported Go type"}},
		{"decimal bad", n.Filter(col("n_nationkey").Eq(quiver.Decimal("1.2.3"))), []string{"Filter", "decimal"}},
		{"cast nil", n.Select(col("n_name").Cast(nil)), []string{"Select", "nil type"}},
		{"in empty", n.Filter(col("n_name").In()), []string{"Filter", "IN"}},
		{"as empty", n.Select(col("n_name").As("")), []string{"Select", "empty name"}},
		{"alias empty", n.Alias(""), []string{"Alias"}},
		{"error propagates", n.Filter(col("nope").Eq(1)).Select(col("n_name")).Sort(col("n_name").Asc()).Limit(0, 1).Cache(), []string{"Filter", `"nope"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.df.Err()
			if err == nil {
				t.Fatal("no error")
			}
			if !qerr.Is(err, qerr.Plan) {
				t.Errorf("error kind %v, want plan: %v", qerr.KindOf(err), err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			// Every action reports the same error.
			if _, err2 := c.df.Collect(ctx); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Collect: %v", err2)
			}
			if _, err2 := c.df.Count(ctx); err2 == nil {
				t.Error("Count: no error")
			}
			if err2 := c.df.Show(ctx, &strings.Builder{}); err2 == nil {
				t.Error("Show: no error")
			}
			if _, err2 := c.df.Explain(ctx, false); err2 == nil {
				t.Error("Explain: no error")
			}
			for _, err2 := range c.df.Stream(ctx) {
				if err2 == nil {
					t.Error("Stream: no error")
				}
				break
			}
			path := filepath.Join(t.TempDir(), "out.parquet")
			if err2 := c.df.WriteParquet(ctx, path); err2 == nil {
				t.Error("WriteParquet: no error")
			}
			if err2 := c.df.WriteCSV(ctx, path+".csv"); err2 == nil {
				t.Error("WriteCSV: no error")
			}
			if _, err2 := os.Stat(path); err2 == nil {
				t.Error("WriteParquet left a file")
			}
		})
	}
}

// TestDataFrameImmutable checks that building on a DataFrame does not change it.
func TestDataFrameImmutable(t *testing.T) {
	s := newTPCHSession(t)
	ctx := context.Background()
	base := table(t, s, "nation")
	before := base.Schema().String()
	_ = base.Filter(col("n_nationkey").Lt(5)).Select(col("n_name"))
	if base.Schema().String() != before {
		t.Fatal("schema of the base DataFrame changed")
	}
	n, err := base.Count(ctx)
	if err != nil || n != 25 {
		t.Fatalf("Count = %d, %v; want 25", n, err)
	}
}
