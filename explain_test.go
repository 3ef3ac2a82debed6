package quiver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
)

// TestExplainGolden keeps the optimized logical and physical plans of the
// 22 TPC-H queries (two partitions) in testdata/explain/qNN.golden;
// -rewrite regenerates them.
func TestExplainGolden(t *testing.T) {
	s := newTPCHSession(t, quiver.WithTargetPartitions(2))
	for q := 1; q <= 22; q++ {
		name := fmt.Sprintf("q%02d", q)
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(filepath.Join("tpch", "queries", name+".sql"))
			if err != nil {
				t.Fatal(err)
			}
			explainGolden(t, s, name, string(text))
		})
	}
}

// explainGolden compares EXPLAIN of q on s with testdata/explain/NAME.golden.
func explainGolden(t *testing.T, s *quiver.Session, name, q string) {
	t.Helper()
	ctx := context.Background()
	df, err := s.SQL(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := df.Explain(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	// Paths differ between machines; keep only the file names.
	got = strings.ReplaceAll(got, filepath.Join("tpch", "sf0.01")+string(filepath.Separator), "")
	golden(t, filepath.Join("testdata", "explain", name+".golden"), got)
}

// golden compares got with the file at path, or rewrites the file with -rewrite.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -rewrite to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
