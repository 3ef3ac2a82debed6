package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/chzyer/readline"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/sql"
)

// DefaultMaxRows is how many rows a result table shows unless \maxrows says otherwise.
const DefaultMaxRows = 40

// Prompts: the first line of a statement, and the lines that continue it.
const (
	Prompt         = "quiver> "
	ContinuePrompt = "     -> "
)

// Config is what the shell runs on. Session, In, Out and Err are required.
type Config struct {
	Session *quiver.Session
	// In is the terminal the shell reads; it must be a terminal (the command
	// line runs piped input as a script instead). Run does not close it.
	In *os.File
	// Out receives results; Err receives errors, hints and the progress line.
	Out, Err io.Writer
	// Format is the initial output format (\format changes it); "" is a table.
	Format format.Kind
	// MaxRows is the initial \maxrows: the most rows a table shows, the
	// middle elided; ≤ 0 shows all.
	MaxRows int
	// HistoryFile is where history persists; "" means DefaultHistoryFile(),
	// "-" keeps no history on disk.
	HistoryFile string
	// InitFile runs before the first prompt; "" means ~/.quiverrc if it
	// exists. A named file that does not exist is an error.
	InitFile string
	// Demo prints the hint for the preloaded TPC-H tables.
	Demo bool
	// Interrupts delivers Ctrl-C while a query runs (the terminal is not in
	// raw mode then, so Ctrl-C is a signal); nil means os.Interrupt.
	Interrupts <-chan os.Signal
	// Footer, if set, returns extra lines printed under a result's footer.
	// It is the hook for the dataset cache's per-query line
	// ("cache: hit daily_revenue (12 partitions, 48.2 MB)").
	Footer func(Result) []string
}

// Result describes one finished statement, for Config.Footer.
type Result struct {
	SQL     string // the statement's text
	Rows    int64  // rows returned (0 for statements without a result set)
	Seconds float64
	// Caches has a line per cache the query hit, built or waited on
	// ("cache: hit daily_revenue (12 partitions, 48.2 MB)").
	Caches []string
}

// DefaultHistoryFile is $XDG_STATE_HOME/quiver/history when XDG_STATE_HOME
// is set, else ~/.quiver_history ("" if there is no home directory either).
func DefaultHistoryFile() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "quiver", "history")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".quiver_history")
}

// shell is one running REPL. Its methods run on the goroutine that called
// Run, except the completer, which readline calls from its own goroutine
// while Run waits in Readline; mu guards what both read.
type shell struct {
	s      *quiver.Session
	out    io.Writer
	errw   io.Writer
	rl     *readline.Instance
	footer func(Result) []string

	interrupts <-chan os.Signal
	progress   bool       // Err is a terminal: show the progress line
	color      bool       // Out is a terminal: style NULL
	width      func() int // the terminal's width in columns, ≤ 0 if unknown
	fd         int        // In's descriptor
	rawState   *readline.State

	mu      sync.Mutex
	pending strings.Builder // lines of an unfinished statement

	format  format.Kind
	maxRows int
	timing  bool
}

// Run runs the shell until \q or Ctrl-D and returns the process exit status.
// ctx ends the shell too; Ctrl-C cancels only the running statement.
func Run(ctx context.Context, cfg Config) int {
	if cfg.Session == nil || cfg.In == nil || cfg.Out == nil || cfg.Err == nil {
		panic("repl: Config needs Session, In, Out and Err")
	}
	sh := &shell{
		s:          cfg.Session,
		out:        cfg.Out,
		errw:       cfg.Err,
		footer:     cfg.Footer,
		interrupts: cfg.Interrupts,
		format:     cfg.Format,
		maxRows:    cfg.MaxRows,
		timing:     true,
		fd:         int(cfg.In.Fd()),
		progress:   isTerminal(cfg.Err),
		color:      isTerminal(cfg.Out),
	}
	if sh.format == "" {
		sh.format = format.Table
	}
	if sh.interrupts == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		defer signal.Stop(ch)
		sh.interrupts = ch
	}
	outFd := sh.fd
	if f, ok := cfg.Out.(*os.File); ok && isTerminal(f) {
		outFd = int(f.Fd())
	}
	sh.width = func() int {
		w, _, err := readline.GetSize(outFd)
		if err != nil {
			return 0
		}
		return w
	}

	hist := cfg.HistoryFile
	if hist == "" {
		hist = DefaultHistoryFile()
	}
	if hist == "-" {
		hist = ""
	}
	if hist != "" {
		if err := os.MkdirAll(filepath.Dir(hist), 0o755); err != nil {
			fmt.Fprintf(sh.errw, "warning: history will not be saved: %v\n", err)
			hist = ""
		}
	}
	stdin := readline.NewCancelableStdin(cfg.In)
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 Prompt,
		HistoryFile:            hist,
		HistoryLimit:           5000,
		DisableAutoSaveHistory: true, // a statement is saved whole, once complete
		HistorySearchFold:      true,
		AutoComplete:           &completer{sh: sh},
		InterruptPrompt:        "^C",
		EOFPrompt:              "\n",
		Stdin:                  stdin,
		Stdout:                 cfg.Out,
		Stderr:                 cfg.Err,
		FuncIsTerminal:         func() bool { return readline.IsTerminal(sh.fd) },
		FuncMakeRaw:            sh.makeRaw,
		FuncExitRaw:            sh.exitRaw,
		FuncGetWidth:           sh.width,
	})
	if err != nil {
		fmt.Fprintln(sh.errw, "quiver: cannot start the shell:", err)
		return 1
	}
	sh.rl = rl
	defer rl.Close()

	fmt.Fprintln(sh.out, `Quiver SQL shell. End statements with ';'. \? for help, \q (or Ctrl-D) quits.`)
	if cfg.Demo {
		fmt.Fprint(sh.out, demoHint)
	}
	if quit := sh.runInit(ctx, cfg.InitFile); quit {
		return 0
	}
	for ctx.Err() == nil {
		sh.mu.Lock()
		empty := sh.pending.Len() == 0
		sh.mu.Unlock()
		if empty {
			rl.SetPrompt(Prompt)
		} else {
			rl.SetPrompt(ContinuePrompt)
		}
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			// Ctrl-C at the prompt discards the line and any unfinished statement.
			if empty && strings.TrimSpace(line) == "" {
				fmt.Fprintln(sh.errw, `(\q or Ctrl-D quits)`)
			}
			sh.mu.Lock()
			sh.pending.Reset()
			sh.mu.Unlock()
			continue
		case errors.Is(err, io.EOF):
			return 0
		case err != nil:
			fmt.Fprintln(sh.errw, "quiver:", err)
			return 1
		}
		if quit := sh.feed(ctx, &sh.pending, line, true); quit {
			return 0
		}
	}
	return 0
}

const demoHint = `TPC-H SF 0.01 is loaded: customer, lineitem, nation, orders, part, partsupp, region, supplier.
Try:
  SELECT l_returnflag, count(*) AS n, sum(l_extendedprice) AS revenue
  FROM lineitem GROUP BY l_returnflag ORDER BY l_returnflag;
  CACHE TABLE big_orders AS SELECT * FROM orders WHERE o_totalprice > 300000;
`

func (sh *shell) makeRaw() error {
	st, err := readline.MakeRaw(sh.fd)
	if err != nil {
		return err
	}
	sh.rawState = st
	return nil
}

func (sh *shell) exitRaw() error {
	if sh.rawState == nil {
		return nil
	}
	st := sh.rawState
	sh.rawState = nil
	return readline.Restore(sh.fd, st)
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && readline.IsTerminal(int(f.Fd()))
}

// feed takes one input line: a meta-command when no statement is pending,
// else a line of SQL, run once the pending text ends in a complete
// statement. pending is the interactive buffer or a script's own. It
// returns true when the shell should quit.
func (sh *shell) feed(ctx context.Context, pending *strings.Builder, line string, interactive bool) (quit bool) {
	sh.mu.Lock()
	empty := pending.Len() == 0
	sh.mu.Unlock()
	trimmed := strings.TrimSpace(line)
	if empty {
		if trimmed == "" {
			return false
		}
		if strings.HasPrefix(trimmed, `\`) {
			if interactive {
				sh.saveHistory(trimmed)
			}
			return sh.meta(ctx, trimmed)
		}
	}
	sh.mu.Lock()
	pending.WriteString(line)
	pending.WriteByte('\n')
	text := pending.String()
	state := statementState(text)
	if state != incomplete {
		pending.Reset()
	}
	sh.mu.Unlock()
	switch state {
	case complete:
		if interactive {
			sh.saveHistory(text)
		}
		sh.runSQL(ctx, text)
	case blank:
		if interactive && strings.TrimSpace(text) != ";" {
			sh.saveHistory(text)
		}
	}
	return false
}

func (sh *shell) saveHistory(text string) {
	if sh.rl == nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	sh.rl.SaveHistory(strings.Join(lines, " "))
}

// inputState is how far the pending text is.
type inputState int

const (
	incomplete inputState = iota // more lines are needed
	complete                     // it ends with a ';' that ends a statement
	blank                        // it has no statement at all (comments, stray ';')
)

// probe is appended to the pending text to find out whether it ends at a
// statement boundary: sql.Split reports the probe as a statement of its own
// exactly when the text before it ended with a top-level ';' outside quotes,
// comments and parentheses.
const probe = "quiver_repl_probe"

func statementState(text string) inputState {
	srcs, err := sql.Split(text + "\n" + probe)
	if err != nil {
		// An unterminated quote or comment: read on. Anything else the
		// lexer rejects is reported when the statement runs.
		if strings.Contains(err.Error(), "unterminated") {
			return incomplete
		}
		return complete
	}
	if len(srcs) == 0 || srcs[len(srcs)-1].Text != probe {
		return incomplete
	}
	if len(srcs) == 1 {
		return blank
	}
	return complete
}

// runInit runs the startup file; it returns true if the file said \q.
func (sh *shell) runInit(ctx context.Context, name string) bool {
	if name == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return false
		}
		name = filepath.Join(home, ".quiverrc")
		if _, err := os.Stat(name); err != nil {
			return false
		}
	}
	return sh.runFile(ctx, name)
}

// runFile runs the statements and meta-commands of a file, as if typed,
// reporting each error and going on; it returns true on \q.
func (sh *shell) runFile(ctx context.Context, name string) bool {
	data, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintf(sh.errw, "Error: \\i: %v\n", err)
		return false
	}
	var pending strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if ctx.Err() != nil {
			return true
		}
		if sh.feed(ctx, &pending, strings.TrimSuffix(line, "\r"), false) {
			return true
		}
	}
	// A last statement without its ';' still runs.
	if rest := pending.String(); statementState(rest+";") == complete {
		sh.runSQL(ctx, rest)
	}
	return false
}
