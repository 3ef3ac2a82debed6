package quiver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
		Select(col("n_nationkey"), quiver.Call("lpad", quiver.Call("lcase", col("n_name")), quiver.Lit(10), quiver.Lit(".")).As("p"),
			quiver.Call("split_part", col("n_comment"), quiver.Lit(" "), quiver.Lit(1)).As("w"),
			quiver.Call("mod", col("n_nationkey"), quiver.Lit(2)).As("m")).
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
		quiver.Call("bool_and", col("n_nationkey").Gt(0)).As("all_pos"),
		quiver.Call("approx_distinct", col("n_name")).As("names"),
		quiver.Call("bit_or", col("n_nationkey")).As("bits"),
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
		{n.Select(quiver.Call("nope", col("n_name"))), `unknown function "nope"`},
		{n.Select(quiver.Call("lpad", col("n_name"))), `function "lpad" does not take 1 argument`},
		{n.Select(quiver.Call("sqrt", col("n_name"))), "function sqrt does not accept Utf8"},
		{n.Select(quiver.Call("upper", col("missing"))), `"missing"`},
	} {
		err := c.df.Err()
		if err == nil || !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want a planning error mentioning %q", err, c.want)
		}
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
