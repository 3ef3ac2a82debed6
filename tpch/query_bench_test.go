package tpch

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
)

// BenchmarkQuery runs whole TPC-H queries (plan and collect) on the SF 0.01
// tables: go test -bench Query -run ^$ ./tpch/ (add -cpuprofile to profile).
// `quiver bench tpch` is the benchmark of record; these are for profiling
// and allocation counts.
func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	s, err := quiver.NewSession(ctx, quiver.WithAllocator(mem))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Close()
		mem.AssertSize(b, 0)
	})
	for _, t := range Tables {
		if err := s.RegisterParquet(ctx, t, filepath.Join(sf001, t+".parquet")); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []int{1, 3, 6, 9, 18} {
		text, err := Query(q)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("q%02d", q), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				df, err := s.SQL(ctx, text)
				if err != nil {
					b.Fatal(err)
				}
				batches, err := df.Collect(ctx)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range batches {
					r.Release()
				}
			}
		})
	}
}
