package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/scan"
)

// TestCopyFailureLeavesNothing: a COPY whose query fails after some batches
// were written leaves no file, directory or temporary entry in the target's
// directory.
func TestCopyFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, err := quiver.NewSession(ctx, quiver.WithBatchSize(100))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	for _, q := range []string{
		"COPY (SELECT o_orderkey / (o_orderkey - 59905) AS r FROM 'tpch/sf0.01/orders.parquet') TO '" + dir + "/out.parquet'",
		"COPY (SELECT o_orderkey / (o_orderkey - 59905) AS r, o_orderstatus FROM 'tpch/sf0.01/orders.parquet') TO '" + dir + "/parts' (PARTITION_BY (o_orderstatus))",
	} {
		if _, err := s.SQL(ctx, q); err == nil || !strings.Contains(err.Error(), "division by zero") {
			t.Fatalf("%s: want a division by zero error, got %v", q, err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			t.Errorf("%s left %s", q, e.Name())
		}
	}
}

// TestWritePartitionedPruning writes a partitioned Parquet dataset through
// the DataFrame API and reads it back: the rows agree, and a filter on the
// partition column opens only its partition's file. It runs standalone and
// on two executors.
func TestWritePartitionedPruning(t *testing.T) {
	for _, opts := range [][]quiver.Option{nil, {quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3)}} {
		ctx := context.Background()
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		s, err := quiver.NewSession(ctx, append([]quiver.Option{quiver.WithAllocator(mem)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterParquet(ctx, "orders", "tpch/sf0.01/orders.parquet"); err != nil {
			t.Fatal(err)
		}
		df, err := s.SQL(ctx, "SELECT o_orderkey, o_orderstatus, o_totalprice FROM orders")
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "by_status")
		if err := df.WriteParquet(ctx, out, quiver.PartitionBy("o_orderstatus"), quiver.Compression("zstd")); err != nil {
			t.Fatal(err)
		}
		for _, st := range []string{"F", "O", "P"} {
			if _, err := os.Stat(filepath.Join(out, "o_orderstatus="+st, "data_0.parquet")); err != nil {
				t.Errorf("partition %s: %v", st, err)
			}
		}
		want := sqlRows(t, s, "SELECT o_orderstatus, count(*), sum(o_totalprice) FROM orders GROUP BY 1 ORDER BY 1")
		got := sqlRows(t, s, "SELECT o_orderstatus, count(*), sum(o_totalprice) FROM '"+out+"' GROUP BY 1 ORDER BY 1")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("read back %v, want %v", got, want)
		}
		before := scan.FilesOpened(out)
		rows := sqlRows(t, s, "SELECT count(*) FROM '"+out+"' WHERE o_orderstatus = 'P'")
		if n := scan.FilesOpened(out) - before; n != 1 {
			t.Errorf("a filter on the partition column opened %d files, want 1", n)
		}
		if rows[0][0] != want[2][1] {
			t.Errorf("count of P: %s, want %s", rows[0][0], want[2][1])
		}
		// Writing again without Overwrite fails and keeps the data.
		if err := df.WriteParquet(ctx, out, quiver.PartitionBy("o_orderstatus")); err == nil || !strings.Contains(err.Error(), "OVERWRITE") {
			t.Errorf("second write: %v", err)
		}
		s.Close()
		mem.AssertSize(t, 0)
	}
}
