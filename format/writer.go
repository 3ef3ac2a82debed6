package format

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// Kind is an output format.
type Kind string

// Output formats.
const (
	Table  Kind = "table"
	CSV    Kind = "csv"
	TSV    Kind = "tsv"
	JSON   Kind = "json"
	NDJSON Kind = "ndjson"
)

// Parse maps a format name to a Kind.
func Parse(name string) (Kind, error) {
	switch k := Kind(strings.ToLower(name)); k {
	case Table, CSV, TSV, JSON, NDJSON:
		return k, nil
	}
	return "", qerr.Planf("unknown format %q (want table, csv, tsv, json or ndjson)", name)
}

// Options tune the table format.
type Options struct {
	// MaxRows is the most rows a table shows (the middle is elided); ≤ 0 shows all.
	MaxRows int
	// MaxWidth cuts values longer than this many characters with an ellipsis; ≤ 0 never.
	MaxWidth int
}

// Write renders one result (schema and batches) to w in format k.
func Write(w io.Writer, k Kind, schema *arrow.Schema, batches []arrow.RecordBatch, opt Options) error {
	cols := collect(schema, batches)
	bw := bufio.NewWriter(w)
	var err error
	switch k {
	case CSV, TSV:
		err = writeDelimited(bw, k, schema, cols)
	case JSON:
		err = writeJSON(bw, schema, cols, false)
	case NDJSON:
		err = writeJSON(bw, schema, cols, true)
	default:
		err = writeTable(bw, schema, cols, opt)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

type column struct {
	vals  []string
	nulls []bool
}

func collect(schema *arrow.Schema, batches []arrow.RecordBatch) []column {
	cols := make([]column, schema.NumFields())
	for _, b := range batches {
		for i := range cols {
			v, n := Column(b.Column(i))
			cols[i].vals = append(cols[i].vals, v...)
			cols[i].nulls = append(cols[i].nulls, n...)
		}
	}
	return cols
}

func rows(cols []column) int {
	if len(cols) == 0 {
		return 0
	}
	return len(cols[0].vals)
}

func writeDelimited(w io.Writer, k Kind, schema *arrow.Schema, cols []column) error {
	cw := csv.NewWriter(w)
	if k == TSV {
		cw.Comma = '\t'
	}
	rec := make([]string, len(cols))
	for i, f := range schema.Fields() {
		rec[i] = f.Name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for r := 0; r < rows(cols); r++ {
		for i, c := range cols {
			rec[i] = c.vals[r] // NULL is an empty field
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeJSON(w io.Writer, schema *arrow.Schema, cols []column, lines bool) error {
	numeric := make([]bool, len(cols))
	keys := make([][]byte, len(cols))
	for i, f := range schema.Fields() {
		numeric[i] = IsNumeric(f.Type) || f.Type.ID() == arrow.BOOL
		keys[i], _ = json.Marshal(f.Name)
	}
	if !lines {
		io.WriteString(w, "[")
	}
	for r := 0; r < rows(cols); r++ {
		if !lines && r > 0 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, "{")
		for i, c := range cols {
			if i > 0 {
				io.WriteString(w, ",")
			}
			w.Write(keys[i])
			io.WriteString(w, ":")
			v := c.vals[r]
			switch {
			case c.nulls[r]:
				io.WriteString(w, "null")
			case numeric[i] && jsonNumber(v):
				io.WriteString(w, v)
			default:
				b, _ := json.Marshal(v)
				w.Write(b)
			}
		}
		io.WriteString(w, "}")
		if lines {
			io.WriteString(w, "\n")
		}
	}
	if !lines {
		io.WriteString(w, "]\n")
	}
	return nil
}

// jsonNumber reports whether v is a valid JSON number (NaN and inf are not).
func jsonNumber(v string) bool {
	return v != "" && v != "NaN" && !strings.HasSuffix(v, "inf")
}

const nullText = "NULL"

func writeTable(w io.Writer, schema *arrow.Schema, cols []column, opt Options) error {
	n := rows(cols)
	show := make([]int, 0, n) // row indices shown; -1 marks the elision line
	if opt.MaxRows > 0 && n > opt.MaxRows {
		head := (opt.MaxRows + 1) / 2
		tail := opt.MaxRows - head
		for i := 0; i < head; i++ {
			show = append(show, i)
		}
		show = append(show, -1)
		for i := n - tail; i < n; i++ {
			show = append(show, i)
		}
	} else {
		for i := 0; i < n; i++ {
			show = append(show, i)
		}
	}
	cell := func(c column, r int) string {
		if c.nulls[r] {
			return nullText
		}
		v := strings.TrimRight(c.vals[r], "\n")
		if opt.MaxWidth > 0 {
			lines := strings.Split(v, "\n")
			for i, l := range lines {
				if utf8.RuneCountInString(l) > opt.MaxWidth {
					lines[i] = string([]rune(l)[:max(1, opt.MaxWidth-1)]) + "…"
				}
			}
			v = strings.Join(lines, "\n")
		}
		return v
	}
	// width is the widest line of a (possibly multi-line) cell.
	width := func(v string) int {
		w := 0
		for _, l := range strings.Split(v, "\n") {
			w = max(w, utf8.RuneCountInString(l))
		}
		return w
	}
	widths := make([]int, len(cols))
	for i, f := range schema.Fields() {
		widths[i] = utf8.RuneCountInString(f.Name)
		for _, r := range show {
			if r >= 0 {
				widths[i] = max(widths[i], width(cell(cols[i], r)))
			}
		}
		widths[i] = max(widths[i], 1)
	}
	sep := func(l, m, r string) {
		var b strings.Builder
		b.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		b.WriteString(r + "\n")
		io.WriteString(w, b.String())
	}
	// line prints one table row; a cell with newlines spans several lines.
	line := func(vals []string, right []bool) {
		split := make([][]string, len(vals))
		height := 1
		for i, v := range vals {
			split[i] = strings.Split(v, "\n")
			height = max(height, len(split[i]))
		}
		var b strings.Builder
		for h := 0; h < height; h++ {
			b.WriteString("│")
			for i := range vals {
				v := ""
				if h < len(split[i]) {
					v = split[i][h]
				}
				pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(v))
				if right[i] {
					b.WriteString(" " + pad + v + " │")
				} else {
					b.WriteString(" " + v + pad + " │")
				}
			}
			b.WriteString("\n")
		}
		io.WriteString(w, b.String())
	}
	numeric := make([]bool, len(cols))
	left := make([]bool, len(cols))
	header := make([]string, len(cols))
	for i, f := range schema.Fields() {
		numeric[i] = IsNumeric(f.Type)
		header[i] = f.Name
	}
	sep("┌", "┬", "┐")
	line(header, left)
	sep("├", "┼", "┤")
	vals := make([]string, len(cols))
	for _, r := range show {
		if r < 0 {
			for i := range vals {
				vals[i] = "…"
			}
			line(vals, left)
			continue
		}
		for i := range cols {
			vals[i] = cell(cols[i], r)
		}
		line(vals, numeric)
	}
	sep("└", "┴", "┘")
	if len(show) < n {
		fmt.Fprintf(w, "%d rows (%d shown)\n", n, len(show)-1)
	}
	return nil
}
