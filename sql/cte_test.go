package sql

import (
	"testing"

	"github.com/quiverdb/quiver/logical"
)

// sharedIDs counts the references to each shared CTE in p, subqueries
// included.
func sharedIDs(p logical.Plan) map[int]int {
	out := map[int]int{}
	var walk func(logical.Plan)
	walk = func(p logical.Plan) {
		if r, ok := p.(*logical.CTERef); ok {
			out[r.ID]++
		}
		for _, c := range planChildren(p) {
			walk(c)
		}
	}
	walk(p)
	return out
}

// A WITH query is shared only when read more than once, costlier than a
// filtered scan, not correlated and not read by a recursive query.
func TestShareCTEs(t *testing.T) {
	cat := tpchCatalog(t)
	const agg = `SELECT n_regionkey AS r, count(*) AS c FROM nation GROUP BY n_regionkey`
	for _, tc := range []struct {
		name, q string
		want    int // references of the one shared CTE, 0: none shared
	}{
		{"read twice", `WITH s AS (` + agg + `) SELECT * FROM s a JOIN s b ON a.r = b.r`, 2},
		{"read three times, twice in subqueries", `WITH s AS (` + agg + `) SELECT (SELECT max(c) FROM s), (SELECT min(c) FROM s WHERE r > 1), count(*) FROM s`, 3},
		{"read once", `WITH s AS (` + agg + `) SELECT * FROM s WHERE r > 1`, 0},
		{"defined, never read", `WITH s AS (` + agg + `) SELECT 1`, 0},
		{"a filtered scan", `WITH s AS (SELECT n_nationkey, n_name FROM nation WHERE n_regionkey = 1) SELECT * FROM s a JOIN s b ON a.n_nationkey = b.n_nationkey`, 0},
		{"correlated", `SELECT n_name FROM nation n WHERE n_regionkey IN (WITH s AS (SELECT r_regionkey AS r FROM region GROUP BY r_regionkey HAVING r_regionkey = n.n_regionkey) SELECT a.r FROM s a JOIN s b ON a.r = b.r)`, 0},
		{"read by a recursive query", `WITH RECURSIVE s AS (` + agg + `), t(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM t JOIN s ON s.r = t.n WHERE n < 3) SELECT * FROM t JOIN s a ON a.r = t.n JOIN s b ON b.r = t.n`, 0},
		{"in a subquery's own WITH", `SELECT * FROM nation WHERE n_regionkey IN (WITH s AS (` + agg + `) SELECT a.r FROM s a JOIN s b ON a.r = b.r)`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lp, err := NewPlanner(cat).PlanQuery(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			ids := sharedIDs(lp)
			if tc.want == 0 && len(ids) != 0 || tc.want > 0 && (len(ids) != 1 || ids[firstKey(ids)] != tc.want) {
				t.Fatalf("shared references %v, want %d:\n%s", ids, tc.want, logical.Indent(lp))
			}
		})
	}
}

func firstKey(m map[int]int) int {
	for k := range m {
		return k
	}
	return 0
}
