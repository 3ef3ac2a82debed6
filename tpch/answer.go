package tpch

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/qerr"
)

// AnswerPath is the answer file of query n in dir: dir/qNN.csv.
func AnswerPath(dir string, n int) string { return filepath.Join(dir, fmt.Sprintf("q%02d.csv", n)) }

// ReadAnswer reads an answer file: '|'-delimited, a header line of column
// names first, no quoting, NULL as an empty field (a one-column NULL row is
// an empty line).
func ReadAnswer(path string) ([][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, qerr.IOf("tpch: answer file: %w", err)
	}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return nil, qerr.Planf("tpch: answer file %s is empty (want a header line)", path)
	}
	lines := strings.Split(text, "\n")
	recs := make([][]string, len(lines))
	for i, l := range lines {
		recs[i] = strings.Split(strings.TrimSuffix(l, "\r"), "|")
	}
	return recs, nil
}

// WriteAnswer writes rows (of a result with schema) to path in the answer
// files' format, which ReadAnswer reads. Text holding '|' or a line break
// cannot be told apart in that format and is refused.
func WriteAnswer(path string, schema *arrow.Schema, rows [][]string) error {
	var b strings.Builder
	for i, f := range schema.Fields() {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(f.Name)
	}
	b.WriteByte('\n')
	for _, row := range rows {
		for i, v := range row {
			if strings.ContainsAny(v, "|\r\n") {
				return qerr.Planf("tpch: answer file %s: value %q holds a '|' or a line break", path, v)
			}
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString(v)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return qerr.IOf("tpch: writing answer file: %w", err)
	}
	return nil
}

// Render turns batches into rows of text in the answer files' format
// (format.Column's rendering; NULL as "").
func Render(batches []arrow.RecordBatch) [][]string {
	var rows [][]string
	for _, b := range batches {
		cols := make([][]string, b.NumCols())
		for i := range cols {
			vals, nulls := format.Column(b.Column(i))
			for r, null := range nulls {
				if null {
					vals[r] = ""
				}
			}
			cols[i] = vals
		}
		for r := 0; r < int(b.NumRows()); r++ {
			row := make([]string, len(cols))
			for i := range cols {
				row[i] = cols[i][r]
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// CompareAnswer checks rows got (of a result with schema) against an answer
// file's records (header first): the column names, the row count, then every
// cell — floats within 1e-9 relative, everything else (decimals at their
// scale, dates, text) exactly. The error lists the first differences.
func CompareAnswer(schema *arrow.Schema, got, want [][]string) error {
	if len(want) == 0 {
		return qerr.Planf("tpch: answer has no header line")
	}
	header, want := want[0], want[1:]
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	if strings.Join(names, "|") != strings.Join(header, "|") {
		return qerr.Execf("tpch: result columns %v, want %v", names, header)
	}
	if len(got) != len(want) {
		return qerr.Execf("tpch: result has %d rows, want %d", len(got), len(want))
	}
	var diffs []string
	for r := range want {
		if len(got[r]) != len(want[r]) {
			return qerr.Execf("tpch: row %d has %d columns, want %d", r+1, len(got[r]), len(want[r]))
		}
		for c := range want[r] {
			if !cellEqual(schema.Field(c).Type, got[r][c], want[r][c]) {
				diffs = append(diffs, fmt.Sprintf("row %d column %s: got %q, want %q", r+1, header[c], got[r][c], want[r][c]))
			}
		}
	}
	if len(diffs) > 0 {
		n := len(diffs)
		if n > 5 {
			diffs = append(diffs[:5], "...")
		}
		return qerr.Execf("tpch: %d cells differ: %s", n, strings.Join(diffs, "; "))
	}
	return nil
}

func cellEqual(typ arrow.DataType, got, want string) bool {
	if typ.ID() != arrow.FLOAT64 && typ.ID() != arrow.FLOAT32 {
		return got == want
	}
	if got == "" || want == "" {
		return got == want
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if g == w {
		return true
	}
	return math.Abs(g-w) <= 1e-9*math.Max(math.Abs(g), math.Abs(w))
}
