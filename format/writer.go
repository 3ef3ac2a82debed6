package format

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"

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

// Options tune the table format; the zero value prints every row and
// column in full. The machine formats ignore them.
type Options struct {
	// MaxRows is the most rows a table shows (the middle is elided); ≤ 0 shows all.
	MaxRows int
	// MaxWidth cuts values wider than this many terminal columns with an ellipsis; ≤ 0 never.
	MaxWidth int
	// Width is the terminal's width: wider tables first narrow their widest
	// columns (cutting values with an ellipsis) and then hide middle columns
	// behind a "…" column until they fit; ≤ 0 never.
	Width int
	// Null is how a table shows NULL; "" means "NULL".
	Null string
	// Color styles the table with ANSI escapes for a terminal: NULL dim, so
	// that it differs from the string 'NULL'.
	Color bool
	// HideRowCount leaves out the "N rows (M shown)" line under an elided
	// table, for callers that print their own footer (the REPL).
	HideRowCount bool
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
