package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/tpch"
)

var tpchTables = []string{"customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"}

// newTPCHSession registers the SF 0.01 tables from testdata in a session
// whose allocator is checked for leaks when the test ends.
func newTPCHSession(t testing.TB, opts ...quiver.Option) *quiver.Session {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	ctx := context.Background()
	s, err := quiver.NewSession(ctx, append([]quiver.Option{quiver.WithAllocator(mem)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	for _, name := range tpchTables {
		if err := s.RegisterParquet(ctx, name, filepath.Join("tpch", "sf0.01", name+".parquet")); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestTPCH(t *testing.T) {
	configs := []struct {
		name string
		opts []quiver.Option
	}{
		// The default session: one executor, each job one whole stage
		// with in-memory exchanges.
		{"standalone", nil},
		// One executor cut into stages with shuffle files, as on a cluster.
		{"standalone,exchange=shuffle", []quiver.Option{quiver.WithExchangeMode(quiver.ExchangeShuffle)}},
		{"standalone,executors=2,partitions=3", []quiver.Option{quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3)}},
		{"local", []quiver.Option{quiver.WithLocalExecution()}},
		{"local,partitions=1", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(1)}},
		{"local,partitions=3,batch=7", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(3), quiver.WithBatchSize(7)}},
	}
	if !testing.Short() {
		configs = append(configs, struct {
			name string
			opts []quiver.Option
		}{"local,batch=1", []quiver.Option{quiver.WithLocalExecution(), quiver.WithBatchSize(1)}})
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			s := newTPCHSession(t, cfg.opts...)
			for q := 1; q <= 22; q++ {
				t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
					runTPCH(t, s, q)
				})
			}
		})
	}
}

func runTPCH(t *testing.T, s *quiver.Session, q int) {
	ctx := context.Background()
	text, err := os.ReadFile(filepath.Join("tpch", "queries", fmt.Sprintf("q%02d.sql", q)))
	if err != nil {
		t.Fatal(err)
	}
	got, schema, err := runQuery(ctx, s, string(text))
	if err != nil {
		t.Fatal(err)
	}
	want := readAnswer(t, filepath.Join("tpch", "answers", fmt.Sprintf("q%02d.csv", q)))
	compareAnswer(t, schema, got, want)
}

// render turns batches into rows of text (NULL as ""), as the answer files.
func render(_ *arrow.Schema, batches []arrow.RecordBatch) [][]string { return tpch.Render(batches) }

func readAnswer(t *testing.T, path string) [][]string {
	t.Helper()
	recs, err := tpch.ReadAnswer(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// compareAnswer checks got against an answer file's records (header first).
func compareAnswer(t *testing.T, schema *arrow.Schema, got, want [][]string) {
	t.Helper()
	if err := tpch.CompareAnswer(schema, got, want); err != nil {
		t.Error(err)
	}
}
