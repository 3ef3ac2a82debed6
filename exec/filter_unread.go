package exec

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
)

// Columns a filter's parent never reads. A filter keeps every input column
// (its predicate's too), and gathering the selected rows of a column costs
// about as much as the rest of a simple aggregate's work on it (a string
// column: its offsets and bytes). When the filter's parent is a hash
// aggregate, Build knows every column that aggregate reads (its group keys
// and its aggregates' arguments) and records the others for the filter,
// which then fills them with NULLs of their type instead of gathering them:
// the batch keeps its schema, and nobody reads those columns. Only the
// aggregate's own Build records this, for the Filter node directly below
// it, so no other reader ever sees the NULLs.

// unreadKey keys, in TaskContext.Shared, a Filter node's output columns its
// parent does not read ([]bool, true: not read).
type unreadKey struct{ n *physical.Filter }

// unreadCols counts the columns filters filled with NULLs instead of
// gathering, a batch at a time (UnreadFilterColumns).
var unreadCols atomic.Int64

// UnreadFilterColumns is the number of column batches filters have filled
// with NULLs, unread above, instead of gathering, since the process started
// (for tests).
func UnreadFilterColumns() int64 { return unreadCols.Load() }

// markUnread records, when a's input is a Filter, the filter's output
// columns a never reads. A Final aggregate reads partial states and is left
// alone (its input is an exchange anyway).
func markUnread(tc *execop.TaskContext, a *physical.HashAggregate) {
	f, ok := a.Input.(*physical.Filter)
	if !ok || (a.Mode != physical.AggPartial && a.Mode != physical.AggSingle) {
		return
	}
	used := map[int]bool{}
	for _, g := range a.GroupBy {
		physical.ColumnsOf(g, used)
	}
	for _, ag := range a.Aggs {
		if ag.Arg != nil {
			physical.ColumnsOf(ag.Arg, used)
		}
	}
	unread := make([]bool, f.Schema().NumFields())
	some := false
	for i := range unread {
		unread[i] = !used[i]
		some = some || unread[i]
	}
	if some {
		tc.Shared(unreadKey{f}, func() any { return unread })
	}
}

// unreadOf is what markUnread recorded for n, or nil.
func unreadOf(tc *execop.TaskContext, n *physical.Filter) []bool {
	u, _ := tc.Shared(unreadKey{n}, func() any { return []bool(nil) }).([]bool)
	return u
}

// nullColumn returns an all-NULL column of output column i's type with n
// rows, a slice of one kept (and grown) per column for the filter's life.
func (f *filterOp) nullColumn(i, n int) arrow.Array {
	if f.nulls == nil {
		f.nulls = make([]arrow.Array, len(f.unread))
	}
	if a := f.nulls[i]; a == nil || a.Len() < n {
		if a != nil {
			a.Release()
		}
		f.nulls[i] = array.MakeArrayOfNull(f.tc.Mem, f.schema.Field(i).Type, max(n, f.tc.BatchRows()))
	}
	return array.NewSlice(f.nulls[i], 0, int64(n))
}

// releaseNulls frees the kept NULL columns.
func (f *filterOp) releaseNulls() {
	for _, a := range f.nulls {
		if a != nil {
			a.Release()
		}
	}
	f.nulls = nil
}
