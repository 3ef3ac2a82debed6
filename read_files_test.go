package quiver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/scan"
)

// TestHivePruning proves partition filters prune files: the scan opens only
// the files of the partitions the WHERE clause keeps.
func TestHivePruning(t *testing.T) {
	const table = "testdata/slt/data/files/sales"
	for _, opts := range [][]quiver.Option{{quiver.WithLocalExecution()}, nil, {quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3)}} {
		ctx := context.Background()
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		s, err := quiver.NewSession(ctx, append([]quiver.Option{quiver.WithAllocator(mem)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			where string
			files int64
			sum   string
		}{
			{"", 3, "27"},
			{"WHERE year = 2023", 2, "15"},
			{"WHERE year = 2023 AND region = 'eu'", 1, "8"},
			{"WHERE region IN ('us') OR year > 2023", 2, "19"},
			{"WHERE year = 2025", 0, ""}, // render shows NULL as empty,
			{"WHERE qty > 4 AND region <> 'us'", 2, "16"},
		} {
			before := scan.FilesOpened(table)
			rows := sqlRows(t, s, fmt.Sprintf("SELECT sum(qty) FROM read_csv('%s') %s", table, c.where))
			if got := rows[0][0]; got != c.sum {
				t.Errorf("%s: sum %s, want %s", c.where, got, c.sum)
			}
			if n := scan.FilesOpened(table) - before; n != c.files {
				t.Errorf("%s: opened %d files, want %d", c.where, n, c.files)
			}
		}
		s.Close()
		mem.AssertSize(t, 0)
	}
}
