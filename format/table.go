package format

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/apache/arrow-go/v18/arrow"
)

const nullText = "NULL"

// ANSI escapes of Options.Color.
const (
	dim   = "\x1b[2m"
	reset = "\x1b[0m"
)

// elided marks the hidden middle rows and columns of a table that does not fit.
const elided = "…"

// cell is one table cell, split into lines (a value with newlines spans several).
type cell struct {
	lines []string
	null  bool
}

// writeTable draws a box table. Rows past opt.MaxRows are elided in the
// middle; with opt.Width the widest columns narrow, and then middle columns
// hide, until the table fits. Widths are terminal columns, so East Asian wide
// characters count two and combining marks none.
func writeTable(w io.Writer, schema *arrow.Schema, cols []column, opt Options) error {
	n := rows(cols)
	show := shownRows(n, opt.MaxRows)
	null := opt.Null
	if null == "" {
		null = nullText
	}

	// Render the shown cells once; the elision row (-1) has no cells.
	cells := make([][]cell, len(cols))
	natural := make([]int, len(cols))
	least := make([]int, len(cols))
	fields := schema.Fields()
	for i, c := range cols {
		natural[i] = max(1, textWidth(fields[i].Name))
		least[i] = max(minColumn, min(natural[i], maxHeader))
		cells[i] = make([]cell, len(show))
		for k, r := range show {
			if r < 0 {
				continue
			}
			var ce cell
			if c.nulls[r] {
				ce = cell{lines: []string{null}, null: true}
			} else {
				ce = cell{lines: strings.Split(clean(c.vals[r]), "\n")}
			}
			for j, l := range ce.lines {
				if opt.MaxWidth > 0 {
					ce.lines[j] = cut(l, opt.MaxWidth)
				}
				natural[i] = max(natural[i], textWidth(ce.lines[j]))
			}
			cells[i][k] = ce
		}
	}

	for i := range least {
		least[i] = min(least[i], natural[i])
	}
	vis, widths := fit(natural, least, opt.Width)
	numeric := make([]bool, len(vis))
	header := make([]cell, len(vis))
	for j, i := range vis {
		if i < 0 {
			header[j] = cell{lines: []string{elided}}
			continue
		}
		numeric[j] = IsNumeric(fields[i].Type)
		header[j] = cell{lines: []string{fields[i].Name}}
	}

	var b strings.Builder
	sep := func(l, m, r string) {
		b.WriteString(l)
		for j, wd := range widths {
			if j > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		b.WriteString(r + "\n")
	}
	// line draws one table row; right says which columns are right-aligned.
	line := func(row []cell, right []bool) {
		height := 1
		for _, c := range row {
			height = max(height, len(c.lines))
		}
		for h := 0; h < height; h++ {
			b.WriteString("│")
			for j, c := range row {
				v := ""
				if h < len(c.lines) {
					v = cut(c.lines[h], widths[j])
				}
				pad := strings.Repeat(" ", widths[j]-textWidth(v))
				if c.null && opt.Color {
					v = dim + v + reset
				}
				if right != nil && right[j] {
					b.WriteString(" " + pad + v + " │")
				} else {
					b.WriteString(" " + v + pad + " │")
				}
			}
			b.WriteString("\n")
		}
	}

	sep("┌", "┬", "┐")
	line(header, nil)
	sep("├", "┼", "┤")
	row := make([]cell, len(vis))
	ellipsis := cell{lines: []string{elided}}
	for k, r := range show {
		if r < 0 {
			for j := range row {
				row[j] = ellipsis
			}
			line(row, nil)
			continue
		}
		for j, i := range vis {
			if i < 0 {
				row[j] = ellipsis
			} else {
				row[j] = cells[i][k]
			}
		}
		line(row, numeric)
	}
	sep("└", "┴", "┘")
	if len(show) < n && !opt.HideRowCount {
		fmt.Fprintf(&b, "%d rows (%d shown)\n", n, len(show)-1)
	}
	if shown := len(vis) - hidden(vis); shown < len(cols) {
		fmt.Fprintf(&b, "%d columns (%d shown)\n", len(cols), shown)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shownRows lists the row indices a table shows: all n, or the first and
// last of them around a -1 that marks the elided middle.
func shownRows(n, maxRows int) []int {
	if maxRows <= 0 || n <= maxRows {
		show := make([]int, n)
		for i := range show {
			show[i] = i
		}
		return show
	}
	head := (maxRows + 1) / 2
	tail := maxRows - head
	show := make([]int, 0, maxRows+1)
	for i := 0; i < head; i++ {
		show = append(show, i)
	}
	show = append(show, -1)
	for i := n - tail; i < n; i++ {
		show = append(show, i)
	}
	return show
}

func hidden(vis []int) int {
	for _, i := range vis {
		if i < 0 {
			return 1
		}
	}
	return 0
}

// A column narrows to fit the terminal down to its header's width (at most
// maxHeader) or minColumn, whichever is wider, before columns are hidden.
const (
	minColumn = 6
	maxHeader = 20
)

// fit chooses the columns shown (indices into natural; -1 is the "…"
// column standing for hidden ones) and their widths so that the table is at
// most width terminal columns wide (width ≤ 0: no limit). least[i] is the
// narrowest column i may become while others are still shown.
func fit(natural, least []int, width int) (vis, widths []int) {
	n := len(natural)
	// The left and right runs of columns kept; the hidden ones lie between.
	left, right := n, 0
	for {
		vis = vis[:0]
		for i := 0; i < left; i++ {
			vis = append(vis, i)
		}
		if left+right < n {
			vis = append(vis, -1)
		}
		for i := n - right; i < n; i++ {
			vis = append(vis, i)
		}
		want := make([]int, len(vis))
		floor := make([]int, len(vis))
		for j, i := range vis {
			want[j], floor[j] = 1, 1
			if i >= 0 {
				want[j], floor[j] = natural[i], least[i]
			}
		}
		if width <= 0 {
			return vis, want
		}
		// capped is the widths with every column capped at c, but not below its floor.
		capped := func(c int) (ws []int, total int) {
			ws = make([]int, len(want))
			total = 3*len(want) + 1
			for j, w := range want {
				ws[j] = max(floor[j], min(w, c))
				total += ws[j]
			}
			return ws, total
		}
		widest := 0
		for _, w := range want {
			widest = max(widest, w)
		}
		if ws, total := capped(widest); total <= width {
			return vis, ws
		}
		if _, total := capped(0); total <= width {
			// The largest cap that fits.
			lo, hi := 0, widest
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if _, t := capped(mid); t <= width {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			ws, _ := capped(lo)
			return vis, ws
		}
		if left+right <= 1 {
			// One column left: cut it to the width, whatever that leaves.
			for j := range want {
				want[j] = min(want[j], max(1, width-4))
			}
			return vis, want
		}
		// Hide one more middle column, alternately from either side.
		if left+right == n {
			left, right = (n+1)/2, n/2
		}
		if left > right {
			left--
		} else {
			right--
		}
	}
}

// clean makes a value printable in one cell: tabs become spaces, other
// control characters (but newlines) are dropped, trailing newlines trimmed.
func clean(v string) string {
	v = strings.TrimRight(v, "\n")
	if strings.IndexFunc(v, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }) < 0 {
		return v
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r != '\n' && unicode.IsControl(r):
			return -1
		}
		return r
	}, v)
}

// cut shortens s to at most w terminal columns, ending it with "…" if it was cut.
func cut(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	used := 0
	for i, r := range s {
		rw := runeWidth(r)
		if used+rw > w-1 {
			return s[:i] + elided
		}
		used += rw
	}
	return s
}

// textWidth is the number of terminal columns s takes.
func textWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// TextWidth is the number of terminal columns s takes: East Asian wide and
// fullwidth characters (and most emoji) count two, combining marks none.
func TextWidth(s string) int { return textWidth(s) }

// wide lists the ranges of double-width characters (East Asian Wide and
// Fullwidth, and the common emoji blocks).
var wide = [][2]rune{
	{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC}, {0x23F0, 0x23F0},
	{0x23F3, 0x23F3}, {0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267F, 0x267F},
	{0x2693, 0x2693}, {0x26A1, 0x26A1}, {0x26AA, 0x26AB}, {0x26BD, 0x26BE}, {0x26C4, 0x26C5},
	{0x26CE, 0x26CE}, {0x26D4, 0x26D4}, {0x26EA, 0x26EA}, {0x26F2, 0x26F3}, {0x26F5, 0x26F5},
	{0x26FA, 0x26FA}, {0x26FD, 0x26FD}, {0x2705, 0x2705}, {0x270A, 0x270B}, {0x2728, 0x2728},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27B0, 0x27B0}, {0x27BF, 0x27BF}, {0x2B1B, 0x2B1C}, {0x2B50, 0x2B50}, {0x2B55, 0x2B55},
	{0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
	{0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19}, {0xFE30, 0xFE6F},
	{0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x16FE0, 0x16FE4}, {0x17000, 0x18AFF}, {0x1B000, 0x1B2FF},
	{0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
	{0x1F200, 0x1F202}, {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251},
	{0x1F300, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F7E0, 0x1F7EB}, {0x1F90C, 0x1F9FF},
	{0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
}

// runeWidth is the number of terminal columns r takes.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	}
	lo, hi := 0, len(wide)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case r < wide[m][0]:
			hi = m
		case r > wide[m][1]:
			lo = m + 1
		default:
			return 2
		}
	}
	return 1
}
