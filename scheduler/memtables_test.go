package scheduler

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
)

// TestIsTableRead: only a Cache node marked as a memory table's and reading
// the bare table is a read that must never be built; the write that makes
// the entry (its input the rows to keep) is built like any cache.
func TestIsTableRead(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	tbl := &catalog.Table{Name: "t", Schema: schema, Format: catalog.Memory, OnExecutors: true}
	scan := logical.NewScan(tbl, "t")
	proj, err := logical.NewProjection(scan, []logical.Expr{&logical.Column{Qualifier: "t", Name: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{cache.TableOption: "t", cache.TTLOption: "0"}
	for _, c := range []struct {
		n    *logical.Cache
		want bool
	}{
		{&logical.Cache{CacheID: "a", Input: scan, Options: opts}, true},
		{&logical.Cache{CacheID: "b", Input: proj, Options: opts}, false},
		{&logical.Cache{CacheID: "c", Input: scan}, false},
	} {
		if got := isTableRead(c.n); got != c.want {
			t.Errorf("isTableRead(%s over %T, options %v) = %v, want %v", c.n.CacheID, c.n.Input, c.n.Options, got, c.want)
		}
	}
	if err := tableGone(&logical.Cache{Input: scan, Options: opts}); err == nil || !strings.Contains(err.Error(), `memory table "t"`) {
		t.Errorf("tableGone = %v", err)
	}
}
