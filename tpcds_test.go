package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/tpch"
)

// tpcdsUnsupported are the TPC-DS queries Quiver cannot run yet and what
// each lacks. TestTPCDS requires each of them to fail with a planning or
// not-implemented error, so a query that starts working (or fails another
// way) must leave this list, and every other query must return DuckDB's
// answer.
var tpcdsUnsupported = map[int]string{}

// TestTPCDS runs the 99 TPC-DS queries (DuckDB's text of the templates) on
// the SF 0.01 tables in testdata/tpcds and checks each result against
// DuckDB's answer (decimals exact, floats to 1e-9 relative): standalone,
// on two executors with shuffle files and three partitions, and locally at
// batch size 7.
func TestTPCDS(t *testing.T) {
	configs := []struct {
		name string
		opts []quiver.Option
	}{
		{"standalone", nil},
		{"standalone,executors=2,partitions=3", []quiver.Option{quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3)}},
		{"local,partitions=2,batch=7", []quiver.Option{quiver.WithLocalExecution(), quiver.WithTargetPartitions(2), quiver.WithBatchSize(7)}},
	}
	if testing.Short() {
		configs = configs[:1]
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) { runTPCDS(t, cfg.opts) })
	}
}

func runTPCDS(t *testing.T, opts []quiver.Option) {
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
	createTPCDSTables(t, ctx, s)
	for q := 1; q <= 99; q++ {
		t.Run(fmt.Sprintf("q%02d", q), func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", fmt.Sprintf("q%02d.sql", q)))
			if err != nil {
				t.Fatal(err)
			}
			got, schema, err := runQuery(ctx, s, string(text))
			if why, ok := tpcdsUnsupported[q]; ok {
				if err == nil {
					t.Fatalf("runs now (listed as lacking %s): take it off tpcdsUnsupported", why)
				}
				if k := qerr.KindOf(err); k != qerr.NotImplemented && k != qerr.Plan {
					t.Fatalf("listed as lacking %s, but fails with a %s error: %v", why, k, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := readAnswer(t, filepath.Join("testdata", "tpcds", "answers", fmt.Sprintf("q%02d.csv", q)))
			// DuckDB names unnamed expressions its own way (count_star());
			// the values and the column count are what must agree.
			if len(want) > 0 && len(want[0]) == schema.NumFields() {
				for i, f := range schema.Fields() {
					want[0][i] = f.Name
				}
			}
			if err := tpch.CompareAnswer(schema, got, want); err != nil {
				t.Error(err)
			}
		})
	}
}

// createTPCDSTables registers the SF 0.01 TPC-DS tables of testdata/tpcds.
func createTPCDSTables(t *testing.T, ctx context.Context, s *quiver.Session) {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("testdata", "tpcds", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "tpcds", "sf0.01"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range strings.Split(strings.ReplaceAll(string(schema), "{DIR}", dir), "\n") {
		if !strings.HasPrefix(st, "CREATE") {
			continue // comments
		}
		if _, err := s.SQL(ctx, st); err != nil {
			t.Fatalf("%s: %v", strings.TrimSpace(st), err)
		}
	}
}

// runQuery plans and runs one statement and renders its rows as the
// answer files do.
func runQuery(ctx context.Context, s *quiver.Session, text string) ([][]string, *arrow.Schema, error) {
	df, err := s.SQL(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	batches, err := df.Collect(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release(batches)
	return tpch.Render(batches), df.Schema(), nil
}
