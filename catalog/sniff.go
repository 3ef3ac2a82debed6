package catalog

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// sampleBytes and sampleRows bound what CSV and JSON inference read.
const (
	sampleBytes = 1 << 20
	sampleRows  = 1000
)

// csvDelimiters are the delimiters the sniffer tries, in order of preference.
var csvDelimiters = []rune{',', '|', ';', '\t'}

// openCSV learns a CSV table's schema and dialect. Options given win; the
// rest is sniffed from a sample of the first file: the delimiter (the
// candidate that splits every sample row into the same number of fields,
// the most fields winning), whether the first row is a header (it is when
// some column's first value does not fit the type the other rows give the
// column, or when every column is text), and each column's type. What was
// sniffed is recorded in the options, so every reader agrees.
func (t *Table) openCSV() error {
	if q, ok := t.Options["quote"]; ok && q != `"` {
		return qerr.NotImplementedf("catalog: CSV quote character %q is not supported (only '\"')", q)
	}
	if e, ok := t.Options["escape"]; ok && e != `"` {
		return qerr.NotImplementedf("catalog: CSV escape character %q is not supported (only '\"', by doubling)", e)
	}
	sample, err := readSample(t.Files[0])
	if err != nil {
		return err
	}
	delim, haveDelim := t.Options["delimiter"], true
	if delim == "" {
		haveDelim = false
	}
	var d rune
	if haveDelim {
		if d, err = CSVDelimiter(t.Options); err != nil {
			return err
		}
	} else {
		d = sniffDelimiter(sample)
		t.Options["delimiter"] = string(d)
	}
	rows, err := parseSample(sample, d)
	if err != nil {
		return qerr.IOf("catalog: %s: %w", t.Files[0], err)
	}
	if len(rows) == 0 {
		if t.Schema == nil {
			return qerr.Planf("catalog: %s is empty: cannot learn its columns (declare them)", t.Files[0])
		}
		return nil
	}
	width := len(rows[0])
	header := true
	if _, ok := t.Options["has_header"]; ok {
		if header, err = CSVHasHeader(t.Options); err != nil {
			return err
		}
	} else {
		header = sniffHeader(rows, width)
		t.Options["has_header"] = strconv.FormatBool(header)
	}
	if t.Schema != nil {
		if t.Schema.NumFields() != width {
			return qerr.Planf("catalog: %s has %d columns, table %q declares %d", t.Files[0], width, t.Name, t.Schema.NumFields())
		}
		return nil
	}
	names := make([]string, width)
	used := map[string]bool{}
	for i := range names {
		n := ""
		if header {
			n = strings.TrimSpace(rows[0][i])
		}
		if n == "" {
			n = "column" + strconv.Itoa(i)
		}
		for base, k := n, 1; used[strings.ToLower(n)]; k++ {
			n = base + "_" + strconv.Itoa(k)
		}
		used[strings.ToLower(n)] = true
		names[i] = n
	}
	data := rows
	if header {
		data = rows[1:]
	}
	kinds := columnKinds(data, width)
	fields := make([]arrow.Field, width)
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: kinds[i].arrowType(), Nullable: true}
	}
	t.Schema = arrow.NewSchema(fields, nil)
	return nil
}

// readSample reads the start of a file, cut after its last complete line
// when the file is longer than the sample.
func readSample(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, qerr.IOf("catalog: %w", err)
	}
	defer fh.Close()
	buf := make([]byte, sampleBytes)
	n, err := io.ReadFull(fh, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, qerr.IOf("catalog: %s: %w", path, err)
	}
	buf = buf[:n]
	if n == sampleBytes {
		if i := bytes.LastIndexByte(buf, '\n'); i > 0 {
			buf = buf[:i+1]
		}
	}
	return buf, nil
}

// parseSample splits the sample into at most sampleRows records. A sample
// cut short may end inside a quoted field: an error after some records
// ends the sample there.
func parseSample(sample []byte, d rune) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(sample))
	r.Comma = d
	r.FieldsPerRecord = -1
	var rows [][]string
	for len(rows) < sampleRows {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(rows) >= 2 {
				break
			}
			return nil, err
		}
		rows = append(rows, rec)
	}
	return rows, nil
}

// sniffDelimiter picks the candidate that gives every sample row the same
// number of fields, more than one; among those the most fields. With none
// consistent it falls back to ','.
func sniffDelimiter(sample []byte) rune {
	best, bestWidth := ',', 0
	for _, d := range csvDelimiters {
		rows, err := parseSample(sample, d)
		if err != nil || len(rows) == 0 {
			continue
		}
		w := len(rows[0])
		consistent := w > 1
		for _, r := range rows[1:] {
			if len(r) != w {
				consistent = false
				break
			}
		}
		if consistent && w > bestWidth {
			best, bestWidth = d, w
		}
	}
	return best
}

// sniffHeader: the first row is a header unless each of its values fits the
// type the later rows give its column and some column is not text.
func sniffHeader(rows [][]string, width int) bool {
	if len(rows) < 2 {
		// One row: a header if it has no numbers.
		for _, v := range rows[0] {
			if kUnseen.widen(v) != kString {
				return false
			}
		}
		return true
	}
	kinds := columnKinds(rows[1:], width)
	allText := true
	for i, k := range kinds {
		if k == kString || k == kUnseen {
			continue
		}
		allText = false
		if i < len(rows[0]) && rows[0][i] != "" && k.widen(rows[0][i]) != k {
			return true
		}
	}
	return allText
}

func columnKinds(rows [][]string, width int) []csvKind {
	kinds := make([]csvKind, width)
	for _, rec := range rows {
		for i := range kinds {
			if i < len(rec) && rec[i] != "" {
				kinds[i] = kinds[i].widen(rec[i])
			}
		}
	}
	return kinds
}

// inferJSON learns the columns of newline-delimited JSON from the first
// rows of the first file: keys in first-seen order; each column Int64,
// Float64, Boolean, Timestamp (strings that are all date and time) or
// Utf8. Nested values are refused.
func inferJSON(files []string, _ map[string]string) (*arrow.Schema, error) {
	fh, err := os.Open(files[0])
	if err != nil {
		return nil, qerr.IOf("catalog: %w", err)
	}
	defer fh.Close()
	br := bufio.NewReaderSize(fh, 64<<10)
	var order []string
	kinds := map[string]jsonKind{}
	line := 0
	for rows := 0; rows < sampleRows; {
		text, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(text)) > 0 {
			line++
			if line == 1 && bytes.TrimSpace(text)[0] == '[' {
				return nil, qerr.NotImplementedf("catalog: %s holds a JSON array; only newline-delimited JSON (one object per line) is supported", files[0])
			}
			if err := observeJSON(text, &order, kinds); err != nil {
				return nil, qerr.Planf("catalog: %s: line %d: %v", files[0], line, err)
			}
			rows++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, qerr.IOf("catalog: %s: %w", files[0], err)
		}
	}
	if len(order) == 0 {
		return nil, qerr.Planf("catalog: %s has no JSON objects: cannot learn its columns (declare them)", files[0])
	}
	fields := make([]arrow.Field, len(order))
	for i, k := range order {
		fields[i] = arrow.Field{Name: k, Type: kinds[k].arrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

// jsonKind is a lattice: unseen < int < float < string, unseen < bool <
// string, unseen < timestamp < string.
type jsonKind int

const (
	jUnseen jsonKind = iota
	jInt
	jFloat
	jBool
	jString
	jTimestamp // a string holding a date and a time of day
)

func (k jsonKind) join(o jsonKind) jsonKind {
	switch {
	case k == o || o == jUnseen:
		return k
	case k == jUnseen:
		return o
	case (k == jInt && o == jFloat) || (k == jFloat && o == jInt):
		return jFloat
	}
	return jString
}

func (k jsonKind) arrowType() arrow.DataType {
	switch k {
	case jInt:
		return arrow.PrimitiveTypes.Int64
	case jFloat:
		return arrow.PrimitiveTypes.Float64
	case jBool:
		return arrow.FixedWidthTypes.Boolean
	case jTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	}
	return arrow.BinaryTypes.String
}

// observeJSON reads one object's keys in order and widens their kinds.
func observeJSON(text []byte, order *[]string, kinds map[string]jsonKind) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return qerr.Planf("expected a JSON object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return err
		}
		var k jsonKind
		switch x := v.(type) {
		case nil:
			k = jUnseen
		case bool:
			k = jBool
		case json.Number:
			if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
				k = jInt
			} else {
				k = jFloat
			}
		case string:
			k = jString
			// The reader parses timestamps with arrow's parser, so it decides.
			if _, _, err := arrow.TimestampFromStringInLocation(x, arrow.Microsecond, time.UTC); err == nil && len(x) > 10 {
				k = jTimestamp
			}
		default:
			return qerr.NotImplementedf("key %q holds a nested value (object or array), which is not supported yet", key)
		}
		old, seen := kinds[key]
		if !seen {
			*order = append(*order, key)
		}
		kinds[key] = old.join(k)
	}
	return nil
}
