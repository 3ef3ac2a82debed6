package quiver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
)

// TestDataFrameCall: the DataFrame API calls the same function library as
// SQL, by name or alias, scalars and aggregates alike, and gives the same
// answers.
func TestDataFrameCall(t *testing.T) {
	s := newTPCHSession(t, quiver.WithLocalExecution())
	ctx := context.Background()
	n := table(t, s, "nation")
	df := n.Filter(col("n_nationkey").Lt(3)).
		Select(col("n_nationkey"), quiver.Fn("lpad", quiver.Fn("lcase", col("n_name")), quiver.Lit(10), quiver.Lit(".")).As("p"),
			quiver.Fn("split_part", col("n_comment"), quiver.Lit(" "), quiver.Lit(1)).As("w"),
			quiver.Fn("mod", col("n_nationkey"), quiver.Lit(2)).As("m")).
		Sort(col("n_nationkey").Asc())
	got := collect(t, ctx, df)
	want := sqlRows(t, s, "SELECT n_nationkey, lpad(lower(n_name), 10, '.') AS p, split_part(n_comment, ' ', 1) AS w, n_nationkey % 2 AS m FROM nation WHERE n_nationkey < 3 ORDER BY n_nationkey")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Call: got %v, SQL gives %v", got, want)
	}
	if len(got) != 3 || got[0][1] != "...algeria" {
		t.Errorf("Call rows: %v", got)
	}

	agg := n.Aggregate([]quiver.Expr{col("n_regionkey")}, []quiver.Expr{
		quiver.Fn("bool_and", col("n_nationkey").Gt(0)).As("all_pos"),
		quiver.Fn("approx_distinct", col("n_name")).As("names"),
		quiver.Fn("bit_or", col("n_nationkey")).As("bits"),
	}).Sort(col("n_regionkey").Asc())
	got = collect(t, ctx, agg)
	want = sqlRows(t, s, "SELECT n_regionkey, bool_and(n_nationkey > 0), count(DISTINCT n_name), bit_or(n_nationkey) FROM nation GROUP BY n_regionkey ORDER BY n_regionkey")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Call aggregates: got %v, SQL gives %v", got, want)
	}
	if len(got) != 5 || got[0][1] != "false" || got[0][2] != "5" {
		t.Errorf("Call aggregate rows: %v", got)
	}

	for _, c := range []struct {
		df   *quiver.DataFrame
		want string
	}{
		{n.Select(quiver.Fn("nope", col("n_name"))), `unknown function "nope"`},
		{n.Select(quiver.Fn("lpad", col("n_name"))), `function "lpad" does not take 1 argument`},
		{n.Select(quiver.Fn("sqrt", col("n_name"))), "function sqrt does not accept Utf8"},
		{n.Select(quiver.Fn("upper", col("missing"))), `"missing"`},
	} {
		err := c.df.Err()
		if err == nil || !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want a planning error mentioning %q", err, c.want)
		}
	}
}

// TestGeneratedFunctions: the Go function generated for each kind of
// signature (fixed, optional, variadic, several; scalar and aggregate)
// gives what the SQL call gives, as do the window functions by name and
// TryCast.
func TestGeneratedFunctions(t *testing.T) {
	s := newTPCHSession(t, quiver.WithLocalExecution())
	ctx := context.Background()
	n := table(t, s, "nation").Filter(col("n_nationkey").Lt(6))
	df := n.Select(col("n_nationkey"),
		quiver.Upper(quiver.Left(col("n_name"), quiver.Lit(3))),
		quiver.Lpad(col("n_name"), quiver.Lit(12)),
		quiver.Lpad(col("n_name"), quiver.Lit(12), quiver.Lit("*")),
		quiver.ConcatWS(quiver.Lit("-"), col("n_name"), col("n_regionkey"), quiver.Lit(nil)),
		quiver.Coalesce(quiver.NullIf(col("n_regionkey"), quiver.Lit(1)), quiver.Lit(-1)),
		quiver.Log(quiver.Lit(2), col("n_nationkey").Add(1)),
		quiver.If(col("n_nationkey").Gt(2), quiver.Lit("big"), quiver.Lit("small")),
		quiver.DateTrunc(quiver.Lit("month"), quiver.MakeDate(quiver.Lit(2024), quiver.Lit(2), col("n_nationkey").Add(1))),
		quiver.MD5(col("n_name")),
		quiver.Lit("12").TryCast(arrow.PrimitiveTypes.Int64).Add(col("n_nationkey")),
		quiver.Fn("lag", col("n_nationkey")).Over(quiver.Window().OrderBy(col("n_nationkey").Asc())),
	).Sort(col("n_nationkey").Asc())
	got := collect(t, ctx, df)
	want := sqlRows(t, s, `SELECT n_nationkey, upper(left(n_name, 3)), lpad(n_name, 12), lpad(n_name, 12, '*'),
		concat_ws('-', n_name, n_regionkey, NULL), coalesce(nullif(n_regionkey, 1), -1), log(2, n_nationkey + 1),
		if(n_nationkey > 2, 'big', 'small'), date_trunc('month', make_date(2024, 2, n_nationkey + 1)), md5(n_name),
		TRY_CAST('12' AS BIGINT) + n_nationkey, lag(n_nationkey) OVER (ORDER BY n_nationkey)
		FROM nation WHERE n_nationkey < 6 ORDER BY n_nationkey`)
	if len(got) != 6 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("generated functions: got %v, SQL gives %v", got, want)
	}
	agg := n.Aggregate(nil, []quiver.Expr{quiver.StddevSamp(col("n_nationkey")), quiver.StringAgg(col("n_name"), quiver.Lit(",")), quiver.BoolOr(col("n_regionkey").Eq(4))})
	got = collect(t, ctx, agg)
	want = sqlRows(t, s, "SELECT stddev_samp(n_nationkey), string_agg(n_name, ','), bool_or(n_regionkey = 4) FROM nation WHERE n_nationkey < 6")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("generated aggregates: got %v, SQL gives %v", got, want)
	}
	if err := n.Select(quiver.Fn("rank")).Err(); err == nil || !strings.Contains(err.Error(), "needs a window") {
		t.Errorf("a window function without Over: %v", err)
	}
}

func collect(t *testing.T, ctx context.Context, df *quiver.DataFrame) [][]string {
	t.Helper()
	if err := df.Err(); err != nil {
		t.Fatal(err)
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release(batches)
	return render(df.Schema(), batches)
}
