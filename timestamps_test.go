package quiver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/quiverdb/quiver"
)

// TestDataFrameTimestamps: the DataFrame API reaches the timestamp
// functions of the registry and compares timestamps with text and
// time.Time constants as SQL does.
func TestDataFrameTimestamps(t *testing.T) {
	s := newTPCHSession(t, quiver.WithLocalExecution())
	ctx := context.Background()
	o := table(t, s, "orders")
	ts := quiver.Fn("make_timestamp", quiver.Fn("year", col("o_orderdate")), quiver.Fn("month", col("o_orderdate")),
		quiver.Fn("day", col("o_orderdate")), quiver.Lit(12), quiver.Lit(30), quiver.Lit(0.5))
	df := o.Filter(col("o_orderkey").Lt(40)).
		Select(col("o_orderkey"), ts.As("ts")).
		Filter(col("ts").Gte(quiver.Lit("1996-01-01 00:00:00")).And(col("ts").Lt(quiver.Lit(date("1997-01-01"))))).
		Select(col("o_orderkey"), quiver.Fn("to_char", col("ts"), quiver.Lit("YYYY-MM-DD HH24:MI:SS.MS")).As("txt"),
			quiver.Fn("date_trunc", quiver.Lit("month"), col("ts")).As("m"),
			quiver.Fn("date_diff", quiver.Lit("day"), quiver.Lit("1996-01-01"), col("ts")).As("d")).
		Sort(col("o_orderkey").Asc())
	got := collect(t, ctx, df)
	want := sqlRows(t, s, `SELECT o_orderkey, to_char(ts, 'YYYY-MM-DD HH24:MI:SS.MS'), date_trunc('month', ts), date_diff('day', '1996-01-01', ts)
		FROM (SELECT o_orderkey, CAST(o_orderdate AS TIMESTAMP) + INTERVAL '12:30:00.5' AS ts FROM orders WHERE o_orderkey < 40) AS x
		WHERE ts >= '1996-01-01' AND ts < DATE '1997-01-01' ORDER BY o_orderkey`)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("DataFrame: got %v, SQL gives %v", got, want)
	}
	if len(got) == 0 {
		t.Fatal("no orders of 1996 among the first keys: the test checks nothing")
	}
	for _, r := range got {
		if len(r[1]) != len("1996-01-02 12:30:00.500") || r[1][11:] != "12:30:00.500" || r[2][8:] != "01 00:00:00" {
			t.Errorf("row %v: want a 1996 timestamp at 12:30:00.5 and the first of its month", r)
		}
	}
}
