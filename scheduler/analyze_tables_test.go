package scheduler

import (
	"testing"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// TestTableFigures: a task's hash-table figures are taken as sent, and
// malformed ones (a layout the scheduler does not know, a negative count)
// are dropped whole.
func TestTableFigures(t *testing.T) {
	ok := tableFigures(&rpc.OperatorMetrics{HashTablesStarted: []int64{2, 0, 1}, HashTablesByStats: 3, HashLayoutChanges: 1})
	if want := (physical.TableFigures{Started: [4]int64{2, 0, 1, 0}, ByStats: 3, Changes: 1}); ok != want {
		t.Errorf("figures %+v, want %+v", ok, want)
	}
	for name, m := range map[string]*rpc.OperatorMetrics{
		"unknown layout": {HashTablesStarted: []int64{1, 0, 0, 0, 1}},
		"negative":       {HashTablesStarted: []int64{-1}},
		"negative stats": {HashTablesStarted: []int64{1}, HashTablesByStats: -1},
	} {
		if f := tableFigures(m); f != (physical.TableFigures{}) {
			t.Errorf("%s: %+v, want none", name, f)
		}
	}
}
