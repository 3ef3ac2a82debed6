package planner

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// TestSplitParquetScan: a Parquet table with fewer files than
// target_partitions is split by row-group ranges of about equal rows, with
// no round-robin repartition above; tables that cannot be split keep one
// partition per file under a repartition.
func TestSplitParquetScan(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
	cases := []struct {
		files  []string
		rgs    [][]int64
		target int
		want   string // RowGroups per partition, or "repartition"
	}{
		{[]string{"f"}, [][]int64{{100, 100, 100, 100}}, 2, "[[{0 2}] [{2 4}]]"},
		{[]string{"f"}, [][]int64{{1048576, 5, 1048576, 4, 1048576, 3}}, 2, "[[{0 3}] [{3 6}]]"},
		{[]string{"f"}, [][]int64{{10, 10, 10}}, 4, "[[{0 1}] [{1 2}] [{2 3}]]"},
		{[]string{"f"}, [][]int64{{100, 1, 1, 1}}, 3, "[[{0 1}] [{1 2}] [{2 4}]]"},
		{[]string{"f", "g"}, [][]int64{{10, 10}, {10}}, 3, "[[{0 1}] [{1 2}] [{0 1}]]"},
		{[]string{"f", "g"}, [][]int64{{30}, {10, 10, 10}}, 3, "[[{0 1}] [{0 1}] [{1 3}]]"},
		{[]string{"f"}, [][]int64{{100}}, 2, "repartition"},
		{[]string{"f", "g"}, [][]int64{{5, 5}, {5, 5}}, 2, "files"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.rgs, c.target), func(t *testing.T) {
			tbl := &catalog.Table{Name: "t", Schema: schema, Format: catalog.Parquet, Files: c.files, RowGroupRows: c.rgs, Rows: -1}
			p, err := New(Config{TargetPartitions: c.target}).Plan(context.Background(), logical.NewScan(tbl, "t"))
			if err != nil {
				t.Fatal(err)
			}
			switch c.want {
			case "repartition":
				if _, ok := p.(*physical.Repartition); !ok {
					t.Fatalf("got %s, want a repartition above a one-partition scan", p)
				}
				return
			case "files":
				s := p.(*physical.Scan)
				if s.RowGroups != nil || len(s.Partitions) != len(c.files) {
					t.Fatalf("got %s, want one partition per file", s)
				}
				return
			}
			if r, ok := p.(*physical.Repartition); ok {
				// Fewer row groups than target_partitions: the split scan
				// is still spread round-robin.
				if s, ok := r.Input.(*physical.Scan); ok && s.OutputPartitions() < c.target {
					p = s
				}
			}
			s, ok := p.(*physical.Scan)
			if !ok {
				t.Fatalf("got %s, want a split scan with no repartition", p)
			}
			if got := fmt.Sprint(s.RowGroups); got != c.want {
				t.Fatalf("row groups %s, want %s", got, c.want)
			}
			// Every row group of every file is read exactly once.
			seen := map[string]int{}
			for p, files := range s.Partitions {
				for i, f := range files {
					for rg := s.RowGroups[p][i].Start; rg < s.RowGroups[p][i].End; rg++ {
						seen[fmt.Sprint(f, rg)]++
					}
				}
			}
			for fi, f := range c.files {
				for rg := range c.rgs[fi] {
					if seen[fmt.Sprint(f, rg)] != 1 {
						t.Fatalf("%s row group %d read %d times", f, rg, seen[fmt.Sprint(f, rg)])
					}
				}
			}
		})
	}
}
