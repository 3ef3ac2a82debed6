package quiver_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
)

// TestClusterMemoryTables: on a scheduler and two executor processes, memory
// tables are written and read with their rows held on the executors: CREATE
// TABLE, INSERT of values and of a query, SELECT, a cache over the table
// going stale after an INSERT, DELETE, CTAS, SHOW TABLES and TRUNCATE.
func TestClusterMemoryTables(t *testing.T) {
	c := startCluster(t, 2)
	s := c.connect(t, quiver.WithTargetPartitions(3))
	one := func(q string) string {
		t.Helper()
		rows := sqlRows(t, s, q)
		if len(rows) != 1 {
			t.Fatalf("%s: %v, want one row", q, rows)
		}
		return strings.Join(rows[0], "|")
	}
	sqlRows(t, s, "CREATE TABLE t (id BIGINT, name VARCHAR)")
	if got := one("SELECT count(*) FROM t"); got != "0" {
		t.Errorf("new table: %s rows", got)
	}
	if got := one("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')"); got != "3" {
		t.Errorf("INSERT VALUES returned %s, want 3", got)
	}
	want := one("SELECT count(*), sum(o_orderkey) FROM orders WHERE o_orderkey < 1000")
	wantN := strings.Split(want, "|")[0]
	if got := one("INSERT INTO t SELECT o_orderkey, o_orderstatus FROM orders WHERE o_orderkey < 1000"); got != wantN {
		t.Errorf("INSERT SELECT returned %s, want %s", got, wantN)
	}
	if got, w := one("SELECT count(*), sum(id) FROM t WHERE id >= 1 AND name <> 'zz'"), one("SELECT count(*) + 3, sum(o_orderkey) + 6 FROM orders WHERE o_orderkey < 1000"); got != w {
		t.Errorf("table holds %s, want %s", got, w)
	}
	if got := one("SELECT min(name), max(name), count(*) FROM t WHERE id = 2"); got != "O|b|2" {
		t.Errorf("rows of id 2 (one inserted as a value, one from orders): %s", got)
	}
	var plan string
	for _, r := range sqlRows(t, s, "EXPLAIN SELECT count(*) FROM t") {
		plan += strings.Join(r, " ") + "\n"
	}
	if strings.Count(plan, "CacheReaderExec: t") != 2 {
		t.Errorf("EXPLAIN of a read of t should show its two segments read back from the executors:\n%s", plan)
	}
	// The rows are on the executors, as pinned entries of the table.
	infos, err := s.Caches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	segs := 0
	for _, in := range infos {
		if in.Name == "t" && in.State == "materialized" && len(in.Executors) > 0 {
			segs++
		}
	}
	if segs != 2 {
		t.Errorf("%d materialized entries of t on the executors, want one per INSERT (2): %+v", segs, infos)
	}

	// A cache over the table goes stale with the next write.
	sqlRows(t, s, "CACHE TABLE tc AS SELECT count(*) AS n FROM t")
	before := one("SELECT n FROM tc")
	if o, _ := outcome(t, s, "SELECT n FROM tc"); o != "hit" {
		t.Errorf("the cache over t before a write: %q, want hit", o)
	}
	if o, _ := outcome(t, s, "SELECT count(*) FROM t"); o != "" {
		t.Errorf("a read of t reports cache outcome %q; its rows are no cache", o)
	}
	if got := one("INSERT INTO t VALUES (5000, 'z')"); got != "1" {
		t.Errorf("INSERT returned %s", got)
	}
	if o, _ := outcome(t, s, "SELECT n FROM tc"); o == "hit" {
		t.Errorf("the cache over t after an INSERT: %q, want it rebuilt", o)
	}
	if after := one("SELECT n FROM tc"); after == before {
		t.Errorf("cache over t still says %s after an INSERT", after)
	} else if after != one("SELECT count(*) FROM t") {
		t.Errorf("cache over t says %s, the table holds %s", after, one("SELECT count(*) FROM t"))
	}

	// CLEAR CACHE removes the caches, never a table's rows.
	total := one("SELECT count(*) FROM t")
	sqlRows(t, s, "CLEAR CACHE")
	if got := one("SELECT count(*) FROM t"); got != total {
		t.Errorf("after CLEAR CACHE t holds %s rows, want %s", got, total)
	}
	if infos, err := s.Caches(context.Background()); err != nil {
		t.Fatal(err)
	} else {
		for _, in := range infos {
			if in.Name == "tc" {
				t.Errorf("CLEAR CACHE left %+v", in)
			}
		}
	}
	if got := one("DELETE FROM t WHERE id < 100"); got == "0" {
		t.Errorf("DELETE removed nothing (table of %s rows)", total)
	}
	if got := one("SELECT count(*) FROM t WHERE id < 100"); got != "0" {
		t.Errorf("%s rows left below 100 after DELETE", got)
	}
	if got, w := one("SELECT count(*) FROM t"), one("SELECT count(*) + 1 FROM orders WHERE o_orderkey >= 100 AND o_orderkey < 1000"); got != w {
		t.Errorf("after DELETE t holds %s rows, want %s", got, w)
	}

	if got := one("CREATE TABLE u AS SELECT id * 2 AS d, name FROM t WHERE id >= 5000"); got != "1" {
		t.Errorf("CTAS returned %s, want 1", got)
	}
	if got := one("SELECT d, name FROM u"); got != "10000|z" {
		t.Errorf("CTAS table holds %s", got)
	}
	var kinds []string
	for _, r := range sqlRows(t, s, "SHOW TABLES") {
		if r[0] == "t" || r[0] == "u" {
			kinds = append(kinds, r[0]+":"+strings.Join(r[1:], ","))
		}
	}
	if len(kinds) != 2 || !strings.Contains(kinds[0], "memory") || !strings.Contains(kinds[1], "memory") {
		t.Errorf("SHOW TABLES lists %v, want t and u as memory tables", kinds)
	}

	sqlRows(t, s, "TRUNCATE t")
	if got := one("SELECT count(*) FROM t"); got != "0" {
		t.Errorf("after TRUNCATE t holds %s rows", got)
	}
	if got := one("INSERT INTO t VALUES (7, 'q')"); got != "1" {
		t.Errorf("INSERT after TRUNCATE returned %s", got)
	}
	if got := one("SELECT id, name FROM t"); got != "7|q" {
		t.Errorf("after TRUNCATE and INSERT t holds %s", got)
	}
	sqlRows(t, s, "DROP TABLE u")
	infos, err = s.Caches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Name == "u" {
			t.Errorf("DROP TABLE u left its entry %+v", in)
		}
	}
}

// TestClusterMemoryTableLost: a memory table's partitions are spread over
// both executors; one of them is killed, and reading the table then fails
// naming it, never answering with the other executor's rows alone.
func TestClusterMemoryTableLost(t *testing.T) {
	c := startCluster(t, 2, "--policy", "round_robin")
	s := c.connect(t, quiver.WithTargetPartitions(4))
	// Grouped, so the job's output has target_partitions partitions.
	sqlRows(t, s, "CREATE TABLE t AS SELECT o_orderkey, sum(o_totalprice) AS o_totalprice FROM orders GROUP BY o_orderkey")
	sqlRows(t, s, "INSERT INTO t SELECT o_orderkey + 100000, o_totalprice FROM orders WHERE o_orderkey < 1000")
	if got := sqlRows(t, s, "SELECT count(*) FROM t WHERE o_orderkey < 100000"); got[0][0] != "15000" {
		t.Fatalf("t holds %v rows", got)
	}
	infos, err := s.Caches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var holders []string
	for _, in := range infos {
		if in.Name == "t" {
			holders = append(holders, in.Executors...)
		}
	}
	slices.Sort(holders)
	if holders = slices.Compact(holders); len(holders) != 2 {
		t.Fatalf("t's rows are on executors %v, want both: %+v", holders, infos)
	}
	c.executorByID(t, holders[0]).kill()
	// Each read fails naming the table: at first, perhaps, as a fetch that
	// may be retried; once the scheduler has found the executor lost, as
	// rows gone. None answers with the other executor's rows alone.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		var err error
		if df, derr := s.SQL(ctx, "SELECT count(*) FROM t"); derr == nil {
			_, err = df.Collect(ctx)
		} else {
			err = derr
		}
		if err == nil || !strings.Contains(err.Error(), `memory table "t"`) {
			t.Fatalf("reading t after its executor was killed: %v; want an error naming memory table \"t\"", err)
		}
		if msg := err.Error(); strings.Count(msg, "unavailable:")+strings.Count(msg, "execution error:") != 1 {
			t.Errorf("error with other than one prefix: %s", msg)
		}
		if strings.Contains(err.Error(), "lost") && !strings.Contains(err.Error(), "can be run again") {
			t.Logf("the read after the loss: %v", err)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the table's loss was never reported: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestClusterMemoryTableTenants: a memory table one tenant's session wrote
// is not visible to a session opened with another tenant's token.
func TestClusterMemoryTableTenants(t *testing.T) {
	tokens := writeTenantTokens(t)
	c := startCluster(t, 0, "--auth-token-file", tokens)
	for range 2 {
		c.addTokenExecutor(t, tokens)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice, bob := c.connectAs(t, aliceSecret), c.connectAs(t, bobSecret)
	sqlRows(t, alice, "CREATE TABLE secrets (k BIGINT)")
	sqlRows(t, alice, "INSERT INTO secrets VALUES (41), (42)")
	if got := sqlRows(t, alice, "SELECT sum(k) FROM secrets"); got[0][0] != "83" {
		t.Errorf("alice reads %v", got)
	}
	if _, err := bob.SQL(ctx, "SELECT * FROM secrets"); err == nil || !strings.Contains(err.Error(), "secrets") {
		t.Errorf("bob reading alice's table: %v, want table not found", err)
	}
	for _, r := range sqlRows(t, bob, "SHOW TABLES") {
		if slices.Contains(r, "secrets") {
			t.Errorf("bob's SHOW TABLES lists alice's table: %v", r)
		}
	}
	infos, err := bob.Caches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Name == "secrets" {
			t.Errorf("bob sees alice's table entry %+v", in)
		}
	}
}

// TestClusterMemoryTableSchedulerRestart: with a state directory, the
// scheduler killed with -9 and restarted keeps knowing where a memory
// table's rows are, and the client's next read answers from them.
func TestClusterMemoryTableSchedulerRestart(t *testing.T) {
	args := []string{"--heartbeat-timeout", "2s", "--state-dir", t.TempDir()}
	c := startCluster(t, 2, args...)
	s := c.connect(t, quiver.WithTargetPartitions(3))
	sqlRows(t, s, "CREATE TABLE t AS SELECT o_orderkey AS k FROM orders WHERE o_orderkey < 500")
	sqlRows(t, s, "INSERT INTO t VALUES (100000)")
	want := sqlRows(t, s, "SELECT count(*), sum(k) FROM t")
	time.Sleep(300 * time.Millisecond) // the store is written off the loop
	c.scheduler.kill()
	c.scheduler = startProc(t, "scheduler-2", quiverBinary(t), append([]string{"scheduler", "--bind", c.addr}, args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got [][]string
	err := s.ScriptRetry(ctx, "SELECT count(*), sum(k) FROM t", func(df *quiver.DataFrame) error {
		bs, err := df.Collect(ctx)
		if err != nil {
			return err
		}
		got = render(df.Schema(), bs)
		release(bs)
		return nil
	}, nil)
	if err != nil {
		t.Fatalf("reading t after the scheduler's restart: %v", err)
	}
	if strings.Join(flat(got), ",") != strings.Join(flat(want), ",") {
		t.Errorf("after the restart t holds %v, want %v", got, want)
	}
}
