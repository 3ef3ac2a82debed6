package exec_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/physical"
)

// BenchmarkScanParquetSF1 reads the columns of TPC-H q1 (decimals
// stored as INT64, dates, one-byte strings) and q19's strings from
// lineitem, one partition, releasing each batch as a pipeline would. It
// uses SF 1 from QUIVER_BENCH_SF1 (a directory of NAME.parquet, default
// /tmp/tpch-sf1) if there, else the SF 0.01 test data.
func BenchmarkScanParquetSF1(b *testing.B) {
	path := lineitemPath
	dir := os.Getenv("QUIVER_BENCH_SF1")
	if dir == "" {
		dir = "/tmp/tpch-sf1"
	}
	if p := filepath.Join(dir, "lineitem.parquet"); fileExists(p) {
		path = p
	}
	schema := lineitemSchema(b)
	var proj []int
	for _, n := range []string{"l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag",
		"l_linestatus", "l_shipdate", "l_shipinstruct", "l_shipmode"} {
		proj = append(proj, schema.FieldIndices(n)[0])
	}
	scan := &physical.Scan{Table: "lineitem", Format: physical.FormatParquet, FileSchema: schema,
		Projection: proj, Partitions: [][]string{{path}}, Fetch: -1}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tc := exec.NewTaskContext(memory.DefaultAllocator, 0)
		op, err := exec.Build(tc, scan, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := op.Open(ctx); err != nil {
			b.Fatal(err)
		}
		for {
			bt, err := op.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			bt.Release()
		}
		op.Close()
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
