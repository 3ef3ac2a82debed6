package quiver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver"
)

// dfRows runs df and renders its rows.
func dfRows(t *testing.T, df *quiver.DataFrame) [][]string {
	t.Helper()
	if err := df.Err(); err != nil {
		t.Fatal(err)
	}
	batches, err := df.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release(batches)
	return render(df.Schema(), batches)
}

// TestDataFrameOperations checks each DataFrame operation against the SQL
// that means the same, standalone and on two executors.
func TestDataFrameOperations(t *testing.T) {
	for _, opts := range [][]quiver.Option{nil, {quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3), quiver.WithBatchSize(7)}} {
		s := newTPCHSession(t, opts...)
		ctx := context.Background()
		nation, err := s.Table(ctx, "nation")
		if err != nil {
			t.Fatal(err)
		}
		region, _ := s.Table(ctx, "region")
		ordered := func(df *quiver.DataFrame, keys ...string) *quiver.DataFrame {
			var ks []quiver.SortKey
			for _, k := range keys {
				ks = append(ks, quiver.Col(k).Asc())
			}
			return df.Sort(ks...)
		}
		cases := []struct {
			name string
			df   *quiver.DataFrame
			sql  string
		}{
			{"WithColumn", ordered(nation.Select(quiver.Col("n_nationkey"), quiver.Col("n_regionkey")).WithColumn("k2", quiver.Col("n_nationkey").Mul(2)), "n_nationkey"),
				"SELECT n_nationkey, n_regionkey, n_nationkey * 2 AS k2 FROM nation ORDER BY 1"},
			{"WithColumn replaces", ordered(nation.Select(quiver.Col("n_nationkey"), quiver.Col("n_regionkey")).WithColumn("n_regionkey", quiver.Col("n_regionkey").Add(10)), "n_nationkey"),
				"SELECT n_nationkey, n_regionkey + 10 FROM nation ORDER BY 1"},
			{"Drop", ordered(nation.Drop("n_comment", "n_name"), "n_nationkey"), "SELECT n_nationkey, n_regionkey FROM nation ORDER BY 1"},
			{"Distinct", ordered(nation.Select(quiver.Col("n_regionkey")).Distinct(), "n_regionkey"), "SELECT DISTINCT n_regionkey FROM nation ORDER BY 1"},
			{"Union", ordered(nation.Select(quiver.Col("n_regionkey")).Union(region.Select(quiver.Col("r_regionkey"))), "n_regionkey"),
				"SELECT n_regionkey FROM nation UNION ALL SELECT r_regionkey FROM region ORDER BY 1"},
			{"UnionDistinct", ordered(nation.Select(quiver.Col("n_regionkey")).UnionDistinct(region.Select(quiver.Col("r_regionkey"))), "n_regionkey"),
				"SELECT n_regionkey FROM nation UNION SELECT r_regionkey FROM region ORDER BY 1"},
			{"Intersect", ordered(nation.Select(quiver.Col("n_nationkey")).Intersect(region.Select(quiver.Col("r_regionkey"))), "n_nationkey"),
				"SELECT n_nationkey FROM nation INTERSECT SELECT r_regionkey FROM region ORDER BY 1"},
			{"Except", ordered(nation.Select(quiver.Col("n_nationkey")).Except(region.Select(quiver.Col("r_regionkey"))), "n_nationkey"),
				"SELECT n_nationkey FROM nation EXCEPT SELECT r_regionkey FROM region ORDER BY 1"},
			{"IntersectAll", ordered(nation.Select(quiver.Col("n_regionkey")).IntersectAll(nation.Filter(quiver.Col("n_nationkey").Lt(quiver.Lit(12))).Select(quiver.Col("n_regionkey"))), "n_regionkey"),
				"SELECT n_regionkey FROM nation INTERSECT ALL SELECT n_regionkey FROM nation WHERE n_nationkey < 12 ORDER BY 1"},
			{"ExceptAll", ordered(nation.Select(quiver.Col("n_regionkey")).ExceptAll(region.Select(quiver.Col("r_regionkey"))), "n_regionkey"),
				"SELECT n_regionkey FROM nation EXCEPT ALL SELECT r_regionkey FROM region ORDER BY 1"},
			{"JoinOn", ordered(nation.JoinOn(region, quiver.InnerJoin, []string{"n_regionkey"}, []string{"r_regionkey"}).Select(quiver.Col("n_name"), quiver.Col("r_name")), "n_name"),
				"SELECT n_name, r_name FROM nation JOIN region ON n_regionkey = r_regionkey ORDER BY 1"},
			{"composed aggregates", ordered(nation.Aggregate([]quiver.Expr{quiver.Col("n_regionkey")}, []quiver.Expr{
				quiver.Sum(quiver.Col("n_nationkey")).Mul(quiver.Lit(2)), quiver.Sum(quiver.Col("n_nationkey")).Div(quiver.Count(quiver.Col("*"))).As("avg"), quiver.Max(quiver.Col("n_name"))}), "n_regionkey"),
				"SELECT n_regionkey, sum(n_nationkey) * 2, sum(n_nationkey) / count(*) AS avg, max(n_name) FROM nation GROUP BY n_regionkey ORDER BY 1"},
			{"ArrayAgg", ordered(nation.Filter(quiver.Col("n_nationkey").Lt(quiver.Lit(6))).Aggregate([]quiver.Expr{quiver.Col("n_nationkey")}, []quiver.Expr{quiver.ArrayAgg(quiver.Col("n_name")).As("l")}), "n_nationkey"),
				"SELECT n_nationkey, array_agg(n_name) AS l FROM nation WHERE n_nationkey < 6 GROUP BY n_nationkey ORDER BY 1"},
			{"ArrayAgg OrderBy", ordered(nation.Aggregate([]quiver.Expr{quiver.Col("n_regionkey")}, []quiver.Expr{
				quiver.ArrayAgg(quiver.Col("n_name")).OrderBy(quiver.Col("n_nationkey").Desc()).As("l"),
				quiver.StringAgg(quiver.Col("n_name"), quiver.Lit("|")).As("s").OrderBy(quiver.Col("n_name").Asc())}), "n_regionkey"),
				"SELECT n_regionkey, array_agg(n_name ORDER BY n_nationkey DESC) AS l, string_agg(n_name, '|' ORDER BY n_name) AS s FROM nation GROUP BY n_regionkey ORDER BY 1"},
			{"Col(*)", ordered(region.Select(quiver.Col("*"), quiver.Col("r_regionkey").Add(1).As("next")), "r_regionkey"),
				"SELECT *, r_regionkey + 1 AS next FROM region ORDER BY 1"},
			{"Head", nation.Sort(quiver.Col("n_nationkey").Desc()).Head(3).Select(quiver.Col("n_nationkey")),
				"SELECT n_nationkey FROM nation ORDER BY 1 DESC LIMIT 3"},
			{"DistinctOn", ordered(nation.DistinctOn([]quiver.Expr{quiver.Col("n_regionkey")}, quiver.Col("n_name").Desc()).Select(quiver.Col("n_regionkey"), quiver.Col("n_name")), "n_regionkey"),
				"SELECT DISTINCT ON (n_regionkey) n_regionkey, n_name FROM nation ORDER BY n_regionkey, n_name DESC"},
			{"DistinctOn two keys", ordered(nation.Select(quiver.Col("n_regionkey"), quiver.Col("n_nationkey").Div(10).Cast(arrow.PrimitiveTypes.Int64).As("d"), quiver.Col("n_nationkey")).
				DistinctOn([]quiver.Expr{quiver.Col("n_regionkey"), quiver.Col("d")}, quiver.Col("n_nationkey").Asc()), "n_regionkey", "d"),
				"SELECT DISTINCT ON (n_regionkey, d) n_regionkey, d, n_nationkey FROM (SELECT n_regionkey, CAST(n_nationkey / 10 AS BIGINT) AS d, n_nationkey FROM nation) t ORDER BY n_regionkey, d, n_nationkey"},
			{"Describe", ordered(region.Describe(), "column_name"),
				"SELECT * FROM (VALUES ('r_comment', 'Utf8', 5, 0, NULL, NULL, NULL), ('r_name', 'Utf8', 5, 0, 'AFRICA', 'MIDDLE EAST', NULL), ('r_regionkey', 'Int32', 5, 0, '0', '4', 2.0)) v ORDER BY 1"},
		}
		for _, c := range cases {
			got := dfRows(t, c.df)
			want := sqlRows(t, s, c.sql)
			if c.name == "Describe" {
				// r_comment's min and max are long texts: compare the counts.
				got[0][4], got[0][5] = "NULL", "NULL"
				want[0][4], want[0][5] = "NULL", "NULL"
				for _, r := range want {
					r[6] = strings.TrimSuffix(r[6], ".0")
				}
				for _, r := range got {
					r[6] = strings.TrimSuffix(r[6], ".0")
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: got %v, want %v", c.name, got, want)
			}
		}
		// A view of a DataFrame reads as its plan.
		if err := nation.Filter(quiver.Col("n_regionkey").Eq(1)).CreateView("america", false); err != nil {
			t.Fatal(err)
		}
		if got := sqlRows(t, s, "SELECT count(*) FROM america"); got[0][0] != "5" {
			t.Errorf("view: %v", got)
		}
		// Errors name the operation, with one prefix.
		for _, c := range []struct {
			df   *quiver.DataFrame
			want string
		}{
			{nation.Drop("nope"), `planning error: Drop: column "nope" not found`},
			{nation.DistinctOn(nil), "planning error: DistinctOn: no columns to be distinct on"},
			{nation.DistinctOn([]quiver.Expr{quiver.Col("nope")}), `planning error: DistinctOn:`},
			{nation.WithColumnRenamed("nope", "x"), `planning error: WithColumnRenamed: column "nope" not found`},
			{nation.Union(region), "planning error: Union: each UNION query must have the same number of columns"},
			{nation.JoinOn(region, quiver.InnerJoin, []string{"n_regionkey"}, nil), "planning error: JoinOn: want as many right columns"},
			{nation.Select(quiver.Col("x.*")), `planning error: Select: x.* matches no columns`},
			{nation.Aggregate(nil, []quiver.Expr{quiver.Col("n_name").Add(1)}), "planning error: Aggregate:"},
			{nation.Aggregate(nil, []quiver.Expr{quiver.Sum(quiver.Col("n_nationkey")).OrderBy(quiver.Col("n_name").Asc())}), "planning error: Aggregate: OrderBy applies to array_agg and string_agg"},
		} {
			err := c.df.Err()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Count(err.Error(), "planning error") != 1 {
				t.Errorf("got %v, want %q...", err, c.want)
			}
		}
	}
}
