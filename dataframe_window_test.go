package quiver_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
)

// TestDataFrameWindows checks each window function and frame of the
// DataFrame API against the SQL that means the same, standalone and on two
// executors with small batches.
func TestDataFrameWindows(t *testing.T) {
	for _, opts := range [][]quiver.Option{nil, {quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3), quiver.WithBatchSize(7)}} {
		s := newTPCHSession(t, opts...)
		ctx := context.Background()
		nation, err := s.Table(ctx, "nation")
		if err != nil {
			t.Fatal(err)
		}
		col := quiver.Col
		byRegion := quiver.Window().PartitionBy(col("n_regionkey")).OrderBy(col("n_nationkey").Asc())
		keys := nation.Select(col("n_nationkey"), col("n_regionkey"), col("n_name"))
		sel := func(x quiver.Expr) *quiver.DataFrame {
			return keys.Select(col("n_nationkey"), x.As("w")).Sort(col("n_nationkey").Asc())
		}
		const from = " FROM nation ORDER BY n_nationkey"
		const over = " OVER (PARTITION BY n_regionkey ORDER BY n_nationkey)"
		cases := []struct {
			name string
			df   *quiver.DataFrame
			sql  string
		}{
			{"RowNumber", sel(quiver.RowNumber().Over(byRegion)), "SELECT n_nationkey, row_number()" + over + from},
			{"Rank", sel(quiver.Rank().Over(quiver.Window().OrderBy(col("n_regionkey").Asc()))), "SELECT n_nationkey, rank() OVER (ORDER BY n_regionkey)" + from},
			{"DenseRank", sel(quiver.DenseRank().Over(quiver.Window().OrderBy(col("n_regionkey").Desc()))), "SELECT n_nationkey, dense_rank() OVER (ORDER BY n_regionkey DESC)" + from},
			{"PercentRank", sel(quiver.PercentRank().Over(quiver.Window().OrderBy(col("n_regionkey").Asc()))), "SELECT n_nationkey, percent_rank() OVER (ORDER BY n_regionkey)" + from},
			{"CumeDist", sel(quiver.CumeDist().Over(byRegion)), "SELECT n_nationkey, cume_dist()" + over + from},
			{"Ntile", sel(quiver.Ntile(3).Over(byRegion)), "SELECT n_nationkey, ntile(3)" + over + from},
			{"Lag", sel(quiver.Lag(col("n_name"), 1, quiver.Lit("none")).Over(byRegion)), "SELECT n_nationkey, lag(n_name, 1, 'none')" + over + from},
			{"Lead", sel(quiver.Lead(col("n_nationkey"), 2, quiver.Lit(nil)).Over(byRegion)), "SELECT n_nationkey, lead(n_nationkey, 2)" + over + from},
			{"FirstValue", sel(quiver.FirstValue(col("n_name")).Over(byRegion)), "SELECT n_nationkey, first_value(n_name)" + over + from},
			{"LastValue whole partition", sel(quiver.LastValue(col("n_name")).Over(byRegion.Rows(quiver.UnboundedPreceding, quiver.UnboundedFollowing))),
				"SELECT n_nationkey, last_value(n_name) OVER (PARTITION BY n_regionkey ORDER BY n_nationkey ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)" + from},
			{"NthValue", sel(quiver.NthValue(col("n_name"), 2).Over(byRegion)), "SELECT n_nationkey, nth_value(n_name, 2)" + over + from},
			{"Sum running", sel(quiver.Sum(col("n_nationkey")).Over(byRegion)), "SELECT n_nationkey, sum(n_nationkey)" + over + from},
			{"Sum Rows(-2, 0)", sel(quiver.Sum(col("n_nationkey")).Over(byRegion.Rows(-2, 0))),
				"SELECT n_nationkey, sum(n_nationkey) OVER (PARTITION BY n_regionkey ORDER BY n_nationkey ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)" + from},
			{"Avg Range(-3, 3)", sel(quiver.Avg(col("n_nationkey")).Over(quiver.Window().OrderBy(col("n_nationkey").Asc()).Range(-3, 3))),
				"SELECT n_nationkey, avg(n_nationkey) OVER (ORDER BY n_nationkey RANGE BETWEEN 3 PRECEDING AND 3 FOLLOWING)" + from},
			{"Count Groups(0, 1)", sel(quiver.Count(col("*")).Over(quiver.Window().OrderBy(col("n_regionkey").Asc()).Groups(0, 1))),
				"SELECT n_nationkey, count(*) OVER (ORDER BY n_regionkey GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING)" + from},
			{"Max whole table", sel(quiver.Max(col("n_name")).Over(quiver.Window())), "SELECT n_nationkey, max(n_name) OVER ()" + from},
			{"ArrayAgg running", sel(quiver.ArrayAgg(col("n_name")).Over(byRegion)), "SELECT n_nationkey, array_agg(n_name)" + over + from},
			{"ArrayAgg OrderBy Rows(-1, 1)", sel(quiver.ArrayAgg(col("n_nationkey")).OrderBy(col("n_name").Desc()).Over(byRegion.Rows(-1, 1))),
				"SELECT n_nationkey, array_agg(n_nationkey ORDER BY n_name DESC) OVER (PARTITION BY n_regionkey ORDER BY n_nationkey ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)" + from},
			{"StringAgg OrderBy", sel(quiver.StringAgg(col("n_name"), quiver.Lit(",")).OrderBy(col("n_name").Asc()).Over(quiver.Window().PartitionBy(col("n_regionkey")))),
				"SELECT n_nationkey, string_agg(n_name, ',' ORDER BY n_name) OVER (PARTITION BY n_regionkey)" + from},
			{"over an expression", sel(quiver.Sum(col("n_nationkey").Mul(2)).Over(byRegion).Add(1)), "SELECT n_nationkey, sum(n_nationkey * 2)" + over + " + 1" + from},
			{"WithColumn", keys.WithColumn("rn", quiver.RowNumber().Over(byRegion)).Select(col("n_nationkey"), col("rn")).Sort(col("n_nationkey").Asc()),
				"SELECT n_nationkey, row_number()" + over + from},
		}
		for _, c := range cases {
			got := dfRows(t, c.df)
			want := sqlRows(t, s, c.sql)
			if len(want) != 25 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: got %v, want %v", c.name, got, want)
			}
		}
		for _, c := range []struct {
			df   *quiver.DataFrame
			want string
		}{
			{keys.Select(quiver.RowNumber()), "planning error: Select: window function row_number needs a window"},
			{keys.WithColumn("x", quiver.Rank().Add(1)), "planning error: WithColumn: window function rank needs a window"},
			{keys.Select(quiver.Sum(col("n_nationkey")).Over(quiver.Window().Rows(quiver.UnboundedFollowing, 0))), "planning error: Select: Window: a frame cannot start at UnboundedFollowing"},
			{keys.Select(col("n_name").Over(byRegion)), "planning error: Select: Over: n_name is neither a window function nor an aggregate"},
			{keys.Select(quiver.Sum(col("n_nationkey")).Over(quiver.Window().Range(-1, 0))), "planning error: Select:"},
		} {
			err := c.df.Err()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Count(err.Error(), "planning error") != 1 {
				t.Errorf("got %v, want an error starting %q", err, c.want)
			}
		}
	}
}

// ArrayAgg(...).OrderBy collects in the given order: region's names by
// descending key, and string_agg's by descending name.
func TestDataFrameArrayAggOrderBy(t *testing.T) {
	s := newTPCHSession(t)
	region, err := s.Table(context.Background(), "region")
	if err != nil {
		t.Fatal(err)
	}
	got := dfRows(t, region.Aggregate(nil, []quiver.Expr{
		quiver.ArrayAgg(quiver.Col("r_name")).OrderBy(quiver.Col("r_regionkey").Desc()),
		quiver.StringAgg(quiver.Col("r_name"), quiver.Lit(",")).OrderBy(quiver.Col("r_name").Desc()),
	}))
	want := [][]string{{"[MIDDLE EAST, EUROPE, ASIA, AMERICA, AFRICA]", "MIDDLE EAST,EUROPE,ASIA,AMERICA,AFRICA"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
