package repl

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/format"
)

// metaCommand is one backslash command of the shell.
type metaCommand struct {
	name, args, help string
	run              func(sh *shell, ctx context.Context, arg string) (quit bool)
}

// metaCommands lists the commands in the order \? shows them. It is filled
// in init because the commands' bodies refer to it (\? and unknown commands).
var metaCommands []metaCommand

func init() {
	metaCommands = []metaCommand{
		{`\?`, "", "show this help", (*shell).help},
		{`\q`, "", "quit (Ctrl-D does too)", func(*shell, context.Context, string) bool { return true }},
		{`\d`, "[NAME]", "list tables and views, or the columns of NAME", (*shell).describe},
		{`\caches`, "", "show the cached datasets (SHOW CACHES)", func(sh *shell, ctx context.Context, _ string) bool {
			sh.runSQL(ctx, "SHOW CACHES")
			return false
		}},
		{`\timing`, "[on|off]", "show how long each statement took (default on)", (*shell).setTiming},
		{`\format`, "table|csv|tsv|json|ndjson", "choose the output format", (*shell).setFormat},
		{`\maxrows`, "N", "show at most N rows of a table, eliding the middle (0: all)", (*shell).setMaxRows},
		{`\i`, "FILE", "run the statements and commands in FILE", func(sh *shell, ctx context.Context, arg string) bool {
			if arg == "" {
				fmt.Fprintln(sh.errw, `Error: \i needs a file name`)
				return false
			}
			return sh.runFile(ctx, arg)
		}},
		{`\explain`, "QUERY", "show the logical and physical plans of QUERY", (*shell).explain},
	}
}

// aliases are other spellings people type for a command.
var metaAliases = map[string]string{`\h`: `\?`, `\help`: `\?`, `\quit`: `\q`, `\dt`: `\d`, `\describe`: `\d`}

// meta runs one meta-command line; it returns true to quit the shell.
func (sh *shell) meta(ctx context.Context, line string) (quit bool) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	name = strings.ToLower(strings.TrimRight(name, ";"))
	if a, ok := metaAliases[name]; ok {
		name = a
	}
	for _, c := range metaCommands {
		if c.name == name {
			return c.run(sh, ctx, arg)
		}
	}
	names := make([]string, len(metaCommands))
	for i, c := range metaCommands {
		names[i] = c.name
	}
	fmt.Fprintf(sh.errw, "Error: unknown command %s; the commands are %s (\\? explains them)\n", name, strings.Join(names, " "))
	return false
}

func (sh *shell) help(context.Context, string) bool {
	var b strings.Builder
	b.WriteString("SQL statements end with ';' and may span lines. Ctrl-C cancels a running query\n")
	b.WriteString("or discards the line being typed; Tab completes keywords, tables and columns.\n\n")
	for _, c := range metaCommands {
		use := c.name
		if c.args != "" {
			use += " " + c.args
		}
		fmt.Fprintf(&b, "  %-36s %s\n", use, c.help)
	}
	fmt.Fprint(sh.out, b.String())
	return false
}

func (sh *shell) setTiming(_ context.Context, arg string) bool {
	switch strings.ToLower(arg) {
	case "":
		sh.timing = !sh.timing
	case "on":
		sh.timing = true
	case "off":
		sh.timing = false
	default:
		fmt.Fprintf(sh.errw, "Error: \\timing: want on or off, got %q\n", arg)
		return false
	}
	fmt.Fprintf(sh.out, "Timing is %s.\n", map[bool]string{true: "on", false: "off"}[sh.timing])
	return false
}

func (sh *shell) setFormat(_ context.Context, arg string) bool {
	if arg == "" {
		fmt.Fprintf(sh.out, "Output format is %s.\n", sh.format)
		return false
	}
	k, err := format.Parse(arg)
	if err != nil {
		fmt.Fprintln(sh.errw, "Error: \\format:", err)
		return false
	}
	sh.format = k
	fmt.Fprintf(sh.out, "Output format is %s.\n", k)
	return false
}

func (sh *shell) setMaxRows(_ context.Context, arg string) bool {
	if arg == "" {
		fmt.Fprintf(sh.out, "Max rows is %d.\n", sh.maxRows)
		return false
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		fmt.Fprintf(sh.errw, "Error: \\maxrows: want a number ≥ 0 (0 shows all rows), got %q\n", arg)
		return false
	}
	sh.maxRows = n
	if n == 0 {
		fmt.Fprintln(sh.out, "Tables show all rows.")
	} else {
		fmt.Fprintf(sh.out, "Tables show at most %d rows.\n", n)
	}
	return false
}

func (sh *shell) explain(ctx context.Context, arg string) bool {
	query := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(arg), ";"))
	if query == "" {
		fmt.Fprintln(sh.errw, `Error: \explain needs a query, e.g. \explain SELECT count(*) FROM lineitem`)
		return false
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := sh.cancelOnInterrupt(qctx, cancel)
	defer stop()
	df, err := sh.s.SQL(qctx, query)
	if err != nil {
		sh.printError(query, err)
		return false
	}
	plan, err := df.Explain(qctx, false)
	if err != nil {
		sh.printError(query, err)
		return false
	}
	fmt.Fprint(sh.out, plan)
	return false
}

// describe is \d: the tables and views, or one's columns.
func (sh *shell) describe(_ context.Context, arg string) bool {
	start := time.Now()
	var (
		cols []string
		rows [][]string
	)
	if arg == "" {
		cols = []string{"name", "kind", "columns"}
		for _, t := range sh.s.Tables() {
			rows = append(rows, []string{t.Name, t.Kind, strconv.Itoa(len(t.Columns))})
		}
	} else {
		t, err := sh.s.Describe(strings.Trim(strings.TrimRight(arg, ";"), "`\""))
		if err != nil {
			fmt.Fprintln(sh.errw, "Error:", err)
			return false
		}
		cols = []string{"column", "type", "nullable"}
		for _, c := range t.Columns {
			rows = append(rows, []string{c.Name, c.Type, map[bool]string{true: "YES", false: "NO"}[c.Nullable]})
		}
	}
	if err := sh.printStrings(cols, rows); err != nil {
		fmt.Fprintln(sh.errw, "Error:", err)
		return false
	}
	sh.printFooter(Result{Rows: int64(len(rows)), Seconds: time.Since(start).Seconds()}, plural(int64(len(rows)), "row"))
	return false
}

// printStrings prints a small table of strings in the current format.
func (sh *shell) printStrings(cols []string, rows [][]string) error {
	mem := memory.DefaultAllocator
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c, Type: arrow.BinaryTypes.String}
		b := array.NewStringBuilder(mem)
		b.Reserve(len(rows))
		for _, r := range rows {
			b.Append(r[i])
		}
		arrs[i] = b.NewArray()
		b.Release()
		defer arrs[i].Release()
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecordBatch(schema, arrs, int64(len(rows)))
	defer rec.Release()
	opt := format.Options{Width: sh.width(), Color: sh.color}
	return format.Write(sh.out, sh.format, schema, []arrow.RecordBatch{rec}, opt)
}
