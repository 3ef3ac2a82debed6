package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		// The rows are hash-partitioned on the key before the write: one
		// task, and so one file, per partition value.
		for _, st := range []string{"F", "O", "P"} {
			files, _ := filepath.Glob(filepath.Join(out, "o_orderstatus="+st, "*.parquet"))
			if len(files) != 1 {
				t.Errorf("partition %s: files %v, want one", st, files)
			}
		}
		if hidden, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*")); len(hidden) != 0 {
			t.Errorf("the write left %v beside its target", hidden)
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

// TestCopyCanceledLeavesNothing: a write canceled while it streams (the
// query would run for hours) leaves nothing in the target's directory.
func TestCopyCanceledLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s := newTPCHSession(t, quiver.WithLocalExecution(), quiver.WithBatchSize(64))
	df, err := s.SQL(ctx, "SELECT a.l_orderkey, b.l_partkey FROM lineitem a CROSS JOIN lineitem b")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- df.WriteCSV(wctx, filepath.Join(dir, "huge.csv"))
	}()
	// Cancel once the temporary file has data in it: the write is under way.
	deadline := time.Now().Add(time.Minute)
	for started := false; !started; {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("the write never started")
		}
		matches, _ := filepath.Glob(filepath.Join(dir, ".huge.csv.quiver-tmp-*", "part-*.csv"))
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.Size() > 0 {
				started = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a canceled write succeeded")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("a canceled write left %s", e.Name())
	}
}
