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
}

// IndentAnalyze renders p as Indent does, with each node's figures
// appended: `, metrics=[output_rows=N, output_batches=B, elapsed=1.23ms]`,
// and `, spilled=S` inside the brackets for a node that spilled. figures
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
