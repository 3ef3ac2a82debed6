package quiver

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestWritesBumpVersion: every write to a table registers it with a version
// one higher (so caches built on the old one can tell), and a failed write
// leaves the version as it was.
func TestWritesBumpVersion(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	s, err := NewSession(ctx, WithAllocator(mem), WithLocalExecution())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Close()
		mem.AssertSize(t, 0)
	}()
	version := func() uint64 {
		tab, ok := s.cat.Table("t")
		if !ok {
			t.Fatal("table t is gone")
		}
		return tab.Version
	}
	steps := []struct {
		sql  string
		fail bool
	}{
		{sql: "CREATE TABLE t (a BIGINT)"},
		{sql: "INSERT INTO t VALUES (1), (2), (3)"},
		{sql: "INSERT INTO t SELECT 10 / (a - 2) FROM t", fail: true},
		{sql: "DELETE FROM t WHERE a = 2"},
		{sql: "TRUNCATE t"},
		{sql: "CREATE OR REPLACE TABLE t AS SELECT 1 AS a"},
	}
	want := uint64(0)
	for _, st := range steps {
		_, err := s.SQL(ctx, st.sql)
		if (err != nil) != st.fail {
			t.Fatalf("%s: %v", st.sql, err)
		}
		if !st.fail {
			want++
		}
		if v := version(); v != want {
			t.Errorf("after %s: version %d, want %d", st.sql, v, want)
		}
	}
}
