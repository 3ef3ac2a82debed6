package quiver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
)

// spillSortQuery sorts every lineitem row by a string key: about 60,000
// rows, several megabytes, so a limit of 12 MB (of which the Parquet scan takes a good part) forces the sort
// to spill.
const spillSortQuery = `SELECT l_comment, l_orderkey, l_linenumber, l_extendedprice FROM lineitem
ORDER BY l_comment DESC, l_orderkey, l_linenumber`

// spillAggQuery groups lineitem by a key with about 60,000 distinct
// values: its groups take several megabytes.
const spillAggQuery = `SELECT l_comment, count(*) AS n, sum(l_quantity) AS q, min(l_shipdate) AS d
FROM lineitem GROUP BY l_comment ORDER BY l_comment`

// TestAggregateSpillsThroughSQL drives the aggregate's switch from memory
// to spilled partitions (single and final phases) and early flushes
// (partial phase) through SQL: under quiver.memory_limit the groups come
// out the same as without, locally at one and at two partitions and on
// the standalone cluster, and EXPLAIN ANALYZE shows the bytes spilled.
func TestAggregateSpillsThroughSQL(t *testing.T) {
	ref := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	want := sqlRows(t, ref, spillAggQuery)
	if len(want) < 50000 {
		t.Fatalf("reference has %d groups", len(want))
	}
	for _, tc := range []struct {
		name string
		opts []quiver.Option
	}{
		{"local-single", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(1)}},
		{"local-two-phase", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(2)}},
		{"standalone", []quiver.Option{quiver.WithTargetPartitions(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTPCHSession(t, tc.opts...)
			sqlRows(t, s, "SET quiver.memory_limit = '16MB'")
			got := sqlRows(t, s, spillAggQuery)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("got %d groups, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
		})
	}
	s := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	sqlRows(t, s, "SET quiver.memory_limit = '16MB'")
	plan := fmt.Sprint(sqlRows(t, s, "EXPLAIN ANALYZE "+spillAggQuery))
	spilled := false
	for _, line := range strings.Split(plan, "\n") {
		spilled = spilled || strings.Contains(line, "HashAggregateExec") && strings.Contains(line, "spilled=")
	}
	if !spilled {
		t.Errorf("EXPLAIN ANALYZE shows no aggregate spill under a 16MB limit:\n%s", plan)
	}
}

func firstDiff(a, b [][]string) int {
	for i := range min(len(a), len(b)) {
		if fmt.Sprint(a[i]) != fmt.Sprint(b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSortSpillsThroughSQL drives the sort's switch from memory to
// spilled runs through SQL: with quiver.memory_limit well below what the
// sort holds, the query still answers — the same rows in the same order
// as without a limit — locally and on the standalone cluster, and EXPLAIN
// ANALYZE shows the bytes spilled.
func TestSortSpillsThroughSQL(t *testing.T) {
	ref := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	want := sqlRows(t, ref, spillSortQuery)
	if len(want) < 50000 {
		t.Fatalf("reference has %d rows", len(want))
	}
	for _, tc := range []struct {
		name string
		opts []quiver.Option
	}{
		// One partition: two sorts and their scans under one small limit
		// can take each other's room (exec/sort's tests cover that).
		{"local", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(1)}},
		{"standalone", []quiver.Option{quiver.WithTargetPartitions(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTPCHSession(t, tc.opts...)
			sqlRows(t, s, "SET quiver.memory_limit = '12MB'")
			got := sqlRows(t, s, spillSortQuery)
			if len(got) != len(want) {
				t.Fatalf("got %d rows, want %d", len(got), len(want))
			}
			for i := range got {
				if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
					t.Fatalf("row %d: got %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
	s := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	sqlRows(t, s, "SET quiver.memory_limit = '12MB'")
	plan := fmt.Sprint(sqlRows(t, s, "EXPLAIN ANALYZE "+spillSortQuery))
	if !strings.Contains(plan, "spilled=") {
		t.Errorf("EXPLAIN ANALYZE shows no spill under a 12MB limit:\n%s", plan)
	}
}

// TestJoinSpillsThroughSQL drives the hash join's switch to a grace join
// through SQL: TPC-H Q18 and Q9 under a quiver.memory_limit far below
// what their build sides' hash tables ask for still give the answers,
// locally and on the standalone cluster (whose stages run every
// partition in one task, sharing each build side), and EXPLAIN ANALYZE
// shows a join's spilled bytes.
func TestJoinSpillsThroughSQL(t *testing.T) {
	const limit = "SET quiver.memory_limit = '" + spillJoinLimit + "'"
	for _, tc := range []struct {
		name string
		opts []quiver.Option
	}{
		{"local", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(1)}},
		{"standalone", []quiver.Option{quiver.WithTargetPartitions(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTPCHSession(t, tc.opts...)
			sqlRows(t, s, limit)
			for _, q := range []int{18, 9} {
				t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) { runTPCH(t, s, q) })
			}
		})
	}
	s := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	sqlRows(t, s, limit)
	text, err := os.ReadFile(filepath.Join("tpch", "queries", "q18.sql"))
	if err != nil {
		t.Fatal(err)
	}
	plan := fmt.Sprint(sqlRows(t, s, "EXPLAIN ANALYZE "+string(text)))
	spilled := false
	for _, line := range strings.Split(plan, "\n") {
		spilled = spilled || strings.Contains(line, "HashJoinExec") && strings.Contains(line, "spilled=")
	}
	if !spilled {
		t.Errorf("EXPLAIN ANALYZE shows no join spill under %s:\n%s", spillJoinLimit, plan)
	}
}

// spillJoinLimit is below the worst case a hash table over the SF 0.01
// orders or lineitem keys reserves, yet room for the rest of the query.
const spillJoinLimit = "8MB"

// spillDistinctQueries hold DISTINCT sets as their aggregates' state:
// about 15,000 orders each with its set of ship instructions (the issue's
// query, which once crashed the process), and the suppliers' sets of line
// comments, nearly all distinct, beside plain aggregates.
var spillDistinctQueries = []string{
	`SELECT l_orderkey, count(DISTINCT l_shipinstruct) AS n FROM lineitem
GROUP BY l_orderkey ORDER BY l_orderkey`,
	`SELECT l_suppkey, count(DISTINCT l_comment) AS c, count(*) AS n, sum(DISTINCT l_partkey) AS p,
sum(l_quantity) AS q, max(DISTINCT l_shipmode) AS m FROM lineitem GROUP BY l_suppkey ORDER BY l_suppkey`,
}

// spillDistinctLimit is far below what the sets of spillDistinctQueries
// take, yet room for the scans and exchanges beside them.
const spillDistinctLimit = "12MB"

// TestDistinctAggregateSpillsThroughSQL: an aggregate with DISTINCT spills
// its groups' sets and merges them again, so under a memory limit far
// below what they take it gives the unlimited answer, locally at one and
// two partitions and on the standalone cluster; so does TPC-H Q16 (a
// count(DISTINCT) under a join); and EXPLAIN ANALYZE shows the aggregate's
// spilled bytes.
func TestDistinctAggregateSpillsThroughSQL(t *testing.T) {
	ref := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	var want [][][]string
	for _, q := range spillDistinctQueries {
		want = append(want, sqlRows(t, ref, q))
	}
	if len(want[0]) < 10000 || len(want[1]) < 100 {
		t.Fatalf("reference has %d and %d groups", len(want[0]), len(want[1]))
	}
	for _, tc := range []struct {
		name  string
		opts  []quiver.Option
		limit string
	}{
		{"local-single", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(1)}, spillDistinctLimit},
		// Two partitions in one process share one limit, and the parts
		// that cannot spill (scans, exchanges, two aggregates' current
		// batches) need twice the room: at 12MB it failed now and then.
		{"local-two", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(2)}, "24MB"},
		{"standalone", []quiver.Option{quiver.WithTargetPartitions(2)}, spillDistinctLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTPCHSession(t, tc.opts...)
			sqlRows(t, s, "SET quiver.memory_limit = '"+tc.limit+"'")
			for i, q := range spillDistinctQueries {
				got := sqlRows(t, s, q)
				if fmt.Sprint(got) != fmt.Sprint(want[i]) {
					t.Fatalf("query %d: got %d groups, want %d; first difference at %d", i, len(got), len(want[i]), firstDiff(got, want[i]))
				}
			}
			t.Run("q16", func(t *testing.T) { runTPCH(t, s, 16) })
		})
	}
	s := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	sqlRows(t, s, "SET quiver.memory_limit = '"+spillDistinctLimit+"'")
	for i, q := range spillDistinctQueries {
		plan := fmt.Sprint(sqlRows(t, s, "EXPLAIN ANALYZE "+q))
		spilled := false
		for _, line := range strings.Split(plan, "\n") {
			spilled = spilled || strings.Contains(line, "HashAggregateExec") && strings.Contains(line, "DISTINCT") && strings.Contains(line, "spilled=")
		}
		if !spilled {
			t.Errorf("query %d: EXPLAIN ANALYZE shows no DISTINCT aggregate spill under %s:\n%s", i, spillDistinctLimit, plan)
		}
	}
}

// spillFewGroupsQueries hold DISTINCT sets too few groups to split by
// key: no GROUP BY at all, and three return flags each holding a third of
// lineitem's comments; plain aggregates run beside them.
var spillFewGroupsQueries = []string{
	`SELECT count(DISTINCT l_comment) AS c, count(*) AS n, sum(DISTINCT l_partkey) AS p, avg(DISTINCT l_suppkey) AS s,
sum(l_quantity) AS q FROM lineitem`,
	`SELECT l_returnflag, count(DISTINCT l_comment) AS c, count(*) AS n, avg(DISTINCT l_partkey) AS p,
max(l_shipdate) AS d FROM lineitem GROUP BY l_returnflag ORDER BY l_returnflag`,
}

// spillCollectQuery keeps every lineitem comment in its supplier's list:
// a collecting aggregate's state, several megabytes.
const spillCollectQuery = `SELECT l_suppkey, array_agg(l_comment ORDER BY l_comment, l_orderkey) AS a,
string_agg(DISTINCT l_shipmode, ',') AS m, count(*) AS n FROM lineitem GROUP BY l_suppkey ORDER BY l_suppkey`

// spillFewGroupsLimit is far below what the sets of spillFewGroupsQueries
// and the lists of spillCollectQuery take.
const spillFewGroupsLimit = "12MB"

// TestFewGroupsSpillThroughSQL: DISTINCT sets of too few groups to split
// by key (no GROUP BY, three giant groups) spill split by value, and a
// grouped array_agg and DISTINCT string_agg spill their lists; under a
// limit far below what they hold they give the unlimited answers, locally
// and on the standalone cluster, and EXPLAIN ANALYZE shows the
// aggregate's spilled bytes.
func TestFewGroupsSpillThroughSQL(t *testing.T) {
	queries := append(slices.Clone(spillFewGroupsQueries), spillCollectQuery)
	ref := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	var want [][][]string
	for _, q := range queries {
		want = append(want, sqlRows(t, ref, q))
	}
	if len(want[0]) != 1 || len(want[1]) != 3 || len(want[2]) < 100 {
		t.Fatalf("reference has %d, %d and %d rows", len(want[0]), len(want[1]), len(want[2]))
	}
	for _, tc := range []struct {
		name  string
		opts  []quiver.Option
		limit string
	}{
		{"local", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(1)}, spillFewGroupsLimit},
		// A task of the cluster's first stage holds a scan, a partial
		// aggregate and the shuffle's output beside each other.
		{"standalone", []quiver.Option{quiver.WithTargetPartitions(2)}, "24MB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTPCHSession(t, tc.opts...)
			sqlRows(t, s, "SET quiver.memory_limit = '"+tc.limit+"'")
			for i, q := range queries {
				if got := sqlRows(t, s, q); fmt.Sprint(got) != fmt.Sprint(want[i]) {
					t.Fatalf("query %d: got %d rows, want %d; first difference at %d", i, len(got), len(want[i]), firstDiff(got, want[i]))
				}
			}
		})
	}
	s := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithTargetPartitions(1))
	sqlRows(t, s, "SET quiver.memory_limit = '"+spillFewGroupsLimit+"'")
	for i, q := range queries {
		plan := fmt.Sprint(sqlRows(t, s, "EXPLAIN ANALYZE "+q))
		spilled := false
		for _, line := range strings.Split(plan, "\n") {
			spilled = spilled || strings.Contains(line, "HashAggregateExec") && strings.Contains(line, "spilled=")
		}
		if !spilled {
			t.Errorf("query %d: EXPLAIN ANALYZE shows no aggregate spill under %s:\n%s", i, spillFewGroupsLimit, plan)
		}
	}
}
