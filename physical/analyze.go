package physical

import (
	"fmt"
	"strings"
	"time"
)

// OperatorFigures are one node's EXPLAIN ANALYZE counters, summed over the
// partitions (and tasks) that ran it. Elapsed is the wall time spent in
// the node's Next, its inputs included, summed over partitions.
type OperatorFigures struct {
	OutputRows    int64
	OutputBatches int64
	Elapsed       time.Duration
	SpilledBytes  int64
	Tables        TableFigures
	// BatchesSkipped are a cache read's batches its zone maps ruled out.
	BatchesSkipped int64
}

// HashLayout is a hash table's layout (exec/hashtable): where it keeps the
// ids of its keys.
type HashLayout int

// The hash-table layouts.
const (
	LayoutDirect HashLayout = iota
	LayoutHashed
	LayoutPacked
	LayoutGeneric
	numLayouts
)

func (l HashLayout) String() string {
	return [...]string{"direct", "hashed", "packed", "generic"}[l]
}

// TableFigures count the hash tables an operator made (a join's shared
// build counts once) by the layout each started in, how many of those
// were chosen from the keys' statistics (ColumnStats), and the layout
// changes they made afterwards (direct → hashed, packed re-packs and
// → generic, records → columns).
type TableFigures struct {
	Started [numLayouts]int64
	ByStats int64
	Changes int64
}

// Add sums o into f.
func (f *TableFigures) Add(o TableFigures) {
	for i := range f.Started {
		f.Started[i] += o.Started[i]
	}
	f.ByStats += o.ByStats
	f.Changes += o.Changes
}

// String is the figures' EXPLAIN ANALYZE form, "" with no table:
// `hash_tables=[direct=2, by_stats=2, layout_changes=0]`.
func (f TableFigures) String() string {
	var parts []string
	for l, n := range f.Started {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", HashLayout(l), n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	parts = append(parts, fmt.Sprintf("by_stats=%d", f.ByStats), fmt.Sprintf("layout_changes=%d", f.Changes))
	return "hash_tables=[" + strings.Join(parts, ", ") + "]"
}

// IndentAnalyze renders p as Indent does, with each node's figures
// appended: `, metrics=[output_rows=N, output_batches=B, elapsed=1.23ms]`,
// and `, spilled=S` inside the brackets for a node that spilled, then the
// hash tables' layouts (TableFigures) for a node that made any. figures
// gets each node with its position in a pre-order walk (root 0); a node
// that never ran shows zeros. This is the one text form of EXPLAIN
// ANALYZE, shared by the engine and the scheduler's job page.
func IndentAnalyze(p Plan, figures func(i int, n Plan) OperatorFigures) string {
	var b strings.Builder
	n := 0
	var walk func(Plan, int)
	walk = func(p Plan, depth int) {
		f := figures(n, p)
		n++
		spill := ""
		if f.SpilledBytes > 0 {
			spill = ", spilled=" + FormatBytes(f.SpilledBytes)
		}
		if f.BatchesSkipped > 0 {
			spill += fmt.Sprintf(", batches_skipped=%d", f.BatchesSkipped)
		}
		if t := f.Tables.String(); t != "" {
			spill += ", " + t
		}
		fmt.Fprintf(&b, "%02d)%s%s, metrics=[output_rows=%d, output_batches=%d, elapsed=%s%s]\n",
			n, strings.Repeat("--", depth), p.String(), f.OutputRows, f.OutputBatches, formatElapsed(f.Elapsed), spill)
		for _, c := range p.Children() {
			walk(c, depth+1)
		}
	}
	walk(p, 0)
	return b.String()
}

// PreOrder calls f with every node of p and its pre-order position (root
// 0), the numbering IndentAnalyze and task metrics share.
func PreOrder(p Plan, f func(i int, n Plan)) {
	n := 0
	var walk func(Plan)
	walk = func(p Plan) {
		f(n, p)
		n++
		for _, c := range p.Children() {
			walk(c)
		}
	}
	walk(p)
}

func formatElapsed(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	}
}

// FormatBytes renders n bytes with one decimal and a binary unit
// ("1.5 MiB"), as EXPLAIN ANALYZE and memory-limit errors show sizes.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
