package sql

import (
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// parseTypeName reads a SQL type name from toks starting at i and returns the
// Arrow type and the index after it. Names: INT/INTEGER/SMALLINT/TINYINT
// (Int32), BIGINT (Int64), DOUBLE [PRECISION]/FLOAT/REAL (Float64),
// DECIMAL/NUMERIC[(p[,s])], VARCHAR/CHAR/CHARACTER [VARYING]/TEXT/STRING
// [(n)] (Utf8), DATE (Date32), BOOLEAN/BOOL (Boolean), TIMESTAMP/DATETIME
// [(p)] [WITHOUT TIME ZONE] (Timestamp), TIME [(p)] (Time), INTERVAL.
//
// TIMESTAMPTZ, TIMESTAMP WITH TIME ZONE is timestamp[us] with time zone
// zone, the session's.
func parseTypeName(toks []token, i int, zone string) (arrow.DataType, int, error) {
	if i >= len(toks) {
		return nil, i, qerr.Planf("missing type name")
	}
	t := toks[i]
	bad := func() error { return qerr.At(t.Line, t.Col, "unknown type name %q", t.Text) }
	if t.Kind != tokIdent {
		return nil, i, bad()
	}
	i++
	// args reads an optional (n [, m]) list.
	args := func() ([]int, error) {
		if i >= len(toks) || !toks[i].punct("(") {
			return nil, nil
		}
		var out []int
		i++
		for i < len(toks) {
			if toks[i].Kind != tokNumber {
				return nil, qerr.At(toks[i].Line, toks[i].Col, "type %s: expected a number, got %q", t.upper(), toks[i].Text)
			}
			n, err := strconv.Atoi(toks[i].Text)
			if err != nil {
				return nil, qerr.At(toks[i].Line, toks[i].Col, "type %s: bad number %q", t.upper(), toks[i].Text)
			}
			out = append(out, n)
			i++
			if i < len(toks) && toks[i].punct(",") {
				i++
				continue
			}
			if i < len(toks) && toks[i].punct(")") {
				i++
				return out, nil
			}
			break
		}
		return nil, qerr.At(t.Line, t.Col, "type %s: unterminated argument list", t.upper())
	}
	var typ arrow.DataType
	switch t.upper() {
	case "INT", "INTEGER", "SMALLINT", "TINYINT", "INT4", "INT2":
		typ = logical.Int32
	case "BIGINT", "INT8":
		typ = logical.Int64
	case "DOUBLE":
		if i < len(toks) && toks[i].is("PRECISION") {
			i++
		}
		typ = logical.Float64
	case "FLOAT", "REAL", "FLOAT8", "FLOAT4":
		if _, err := args(); err != nil {
			return nil, i, err
		}
		typ = logical.Float64
	case "DECIMAL", "NUMERIC", "DEC":
		a, err := args()
		if err != nil {
			return nil, i, err
		}
		p, s := 38, 10
		switch len(a) {
		case 0:
		case 1:
			p, s = a[0], 0
		case 2:
			p, s = a[0], a[1]
		default:
			return nil, i, qerr.At(t.Line, t.Col, "type %s takes at most 2 arguments", t.upper())
		}
		if p < 1 || p > logical.MaxDecimalPrecision || s < 0 || s > p {
			return nil, i, qerr.At(t.Line, t.Col, "type DECIMAL(%d, %d): precision must be 1 to 38 and scale 0 to precision", p, s)
		}
		typ = logical.Decimal(int32(p), int32(s))
	case "CHARACTER", "CHAR", "VARCHAR", "TEXT", "STRING", "NCHAR", "NVARCHAR":
		if t.is("CHARACTER") && i < len(toks) && toks[i].is("VARYING") {
			i++
		}
		if _, err := args(); err != nil {
			return nil, i, err
		}
		typ = logical.String
	case "DATE":
		typ = logical.Date
	case "BOOLEAN", "BOOL":
		typ = logical.Bool
	case "TIMESTAMP", "DATETIME", "TIME", "TIMESTAMPTZ", "INTERVAL":
		if _, err := args(); err != nil {
			return nil, i, err
		}
		var err error
		if typ, i, err = temporalTypeName(t, toks, i, zone); err != nil {
			return nil, i, err
		}
	default:
		return nil, i, bad()
	}
	return typ, i, nil
}

// typeFromString parses a whole type name (the text quiver_cast carries);
// a TIMESTAMPTZ has time zone zone.
func typeFromString(s, zone string) (arrow.DataType, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, qerr.Planf("bad type name %q", s)
	}
	t, n, err := parseTypeName(toks, 0, zone)
	if qerr.Is(err, qerr.NotImplemented) {
		return nil, qerr.NotImplementedf("type %s: %s", strings.TrimSpace(s), msgOf(err))
	}
	if err != nil {
		return nil, qerr.Planf("bad type name %q: %s", s, msgOf(err))
	}
	if n != len(toks) {
		return nil, qerr.Planf("bad type name %q", strings.TrimSpace(s))
	}
	return t, nil
}

// msgOf is an error's message without its kind and position.
func msgOf(err error) string {
	if e, ok := err.(*qerr.Error); ok {
		return e.Msg
	}
	return err.Error()
}
