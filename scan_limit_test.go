package quiver_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/quiverdb/quiver/qerr"
)

// TestParquetRecordReaderLimitLeak: a decimal stored as fixed-length bytes
// (arrow-go's default) is read through arrow-go's record reader, not our
// page decoder; a memory limit crossed mid-read must fail the query with a
// resources error and leave nothing allocated (the session's checked
// allocator asserts that when it closes).
func TestParquetRecordReaderLimitLeak(t *testing.T) {
	cols := []fpCol{{"id", arrow.PrimitiveTypes.Int64}, {"m", &arrow.Decimal128Type{Precision: 12, Scale: 2}}}
	var rows [][]any
	for i := 0; i < 50000; i++ {
		rows = append(rows, []any{int64(i), decimal128.FromI64(int64(i))})
	}
	schema, batches := fpBatches(t, cols, rows, 5000)
	path := filepath.Join(t.TempDir(), "t.parquet")
	fpWriteParquet(t, path, schema, batches, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(10000)))
	for _, limit := range []string{"16KB", "24KB", "64KB"} {
		for _, parts := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/%d", limit, parts), func(t *testing.T) {
				s := fpSession(t, 1024, parts)
				if err := s.RegisterParquet(context.Background(), "t", path); err != nil {
					t.Fatal(err)
				}
				sqlRows(t, s, "SET quiver.memory_limit = '"+limit+"'")
				df, err := s.SQL(context.Background(), "SELECT sum(id), sum(m) FROM t")
				if err != nil {
					t.Fatal(err)
				}
				bs, err := df.Collect(context.Background())
				release(bs)
				if !qerr.Is(err, qerr.Resources) {
					t.Fatalf("got %v, want resources exhausted", err)
				}
			})
		}
	}
}
