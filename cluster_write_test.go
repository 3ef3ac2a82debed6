package quiver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
)

// TestClusterCopy: on a cluster of two executor processes, COPY runs on
// the executors (each task writes its partition's files, the job's last
// task moves them into place), the written data reads back whole, and a
// COPY whose query fails mid-way leaves nothing at its target nor beside
// it.
func TestClusterCopy(t *testing.T) {
	c := startCluster(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := quiver.Connect(ctx, c.addr, quiver.WithTargetPartitions(4))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wd, _ := os.Getwd()
	if err := s.RegisterParquet(ctx, "orders", filepath.Join(wd, "tpch", "sf0.01", "orders.parquet")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "by_status")
	got := sqlRows(t, s, "COPY (SELECT o_orderkey, o_orderstatus, o_totalprice FROM orders) TO '"+out+"' (FORMAT parquet, PARTITION_BY (o_orderstatus))")
	if len(got) != 1 || got[0][0] != "15000" {
		t.Fatalf("COPY returned %v, want 15000 rows written", got)
	}
	want := sqlRows(t, s, "SELECT o_orderstatus, count(*), sum(o_totalprice) FROM orders GROUP BY 1 ORDER BY 1")
	if back := sqlRows(t, s, "SELECT o_orderstatus, count(*), sum(o_totalprice) FROM '"+out+"' GROUP BY 1 ORDER BY 1"); strings.Join(flat(back), ",") != strings.Join(flat(want), ",") {
		t.Errorf("read back %v, want %v", back, want)
	}
	single := filepath.Join(dir, "orders.csv")
	small := sqlRows(t, s, "SELECT count(*), sum(o_orderkey) FROM orders WHERE o_orderkey < 1000")
	if got := sqlRows(t, s, "COPY (SELECT o_orderkey, o_comment FROM orders WHERE o_orderkey < 1000) TO '"+single+"'"); got[0][0] != small[0][0] {
		t.Errorf("single-file COPY returned %v, want %s", got, small[0][0])
	}
	if back := sqlRows(t, s, "SELECT count(*), sum(o_orderkey) FROM '"+single+"'"); strings.Join(back[0], ",") != strings.Join(small[0], ",") {
		t.Errorf("single file read back %v, want %v", back, small)
	}

	// A query that fails in some tasks (division by zero at o_orderkey
	// 1007) after others have written their files.
	failed := filepath.Join(dir, "failed")
	_, err = s.SQL(ctx, "COPY (SELECT o_orderkey, o_orderkey / (o_orderkey % 1000 - 7) AS r, o_orderstatus FROM orders) TO '"+failed+"' (FORMAT parquet, PARTITION_BY (o_orderstatus))")
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("failing COPY: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "by_status,orders.csv" {
		t.Errorf("after a failed COPY the directory holds %v, want only the two earlier writes", names)
	}
}
