//go:build linux

package repl_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/repl"
	"github.com/quiverdb/quiver/tpch"
	"go.uber.org/goleak"
)

// The pty tests run the shell in a child process (this test binary, told so
// by QUIVER_REPL_CHILD) whose controlling terminal is a pseudo-terminal the
// test types into, so line editing, raw mode and Ctrl-C are the real thing.

func TestMain(m *testing.M) {
	if os.Getenv("QUIVER_REPL_CHILD") != "" {
		os.Exit(childMain())
	}
	goleak.VerifyTestMain(m)
}

// childMain is the shell under test: the TPC-H SF 0.01 tables, a small
// table with NULLs and wide values, and the environment's settings.
func childMain() int {
	ctx := context.Background()
	s, err := quiver.NewSession(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	defer s.Close()
	if err := tpch.RegisterDir(ctx, s, os.Getenv("QUIVER_REPL_DATA")); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	maxRows, _ := strconv.Atoi(os.Getenv("QUIVER_REPL_MAXROWS"))
	return repl.Run(ctx, repl.Config{
		Session:  s,
		In:       os.Stdin,
		Out:      os.Stdout,
		Err:      os.Stderr,
		MaxRows:  maxRows,
		InitFile: os.Getenv("QUIVER_REPL_INIT"),
		Demo:     true,
	})
}

// term is a running shell behind a pseudo-terminal.
type term struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the child's exit error, set before exited closes

	mu   sync.Mutex
	out  strings.Builder // everything the shell wrote, escape sequences removed
	seen int             // how far expect has matched
	eof  bool
}

type childOpts struct {
	state   string // XDG_STATE_HOME (history lives there); a fresh one if ""
	init    string // --init file
	maxRows int
}

func start(t *testing.T, o childOpts) *term {
	t.Helper()
	data, err := filepath.Abs("../tpch/sf0.01")
	if err != nil {
		t.Fatal(err)
	}
	if o.state == "" {
		o.state = t.TempDir()
	}
	if o.maxRows == 0 {
		o.maxRows = repl.DefaultMaxRows
	}
	master, tty, err := openPTY(100)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		"QUIVER_REPL_CHILD=1",
		"QUIVER_REPL_DATA="+data,
		"QUIVER_REPL_INIT="+o.init,
		"QUIVER_REPL_MAXROWS="+strconv.Itoa(o.maxRows),
		"HOME="+t.TempDir(),
		// The cleanup below kills a shell the test left running, which
		// then cannot remove its session's work dir: the test does.
		"TMPDIR="+t.TempDir(),
		"XDG_STATE_HOME="+o.state,
		"TERM=xterm",
	)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		master.Close()
		tty.Close()
		t.Fatal(err)
	}
	tty.Close() // the child holds it now; its exit ends our reads
	tm := &term{t: t, master: master, cmd: cmd, exited: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // owner: this term; exits when the child closes the tty or master closes
		defer wg.Done()
		tm.read()
	}()
	go func() { // exits when the child does
		defer wg.Done()
		tm.err = cmd.Wait()
		close(tm.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.exited:
		default:
			cmd.Process.Kill()
			<-tm.exited
		}
		master.Close()
		wg.Wait()
		if strings.Contains(tm.output(), "WARNING: DATA RACE") {
			t.Error("the shell (built with -race) reported a data race")
		}
		if t.Failed() {
			t.Logf("shell output:\n%s", tm.output())
		}
	})
	tm.expect(`quiver> `)
	return tm
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\r`)

// rawOffset returns the offset in raw just past its first n bytes that are
// not part of an escape sequence.
func rawOffset(raw string, n int) int {
	esc := escapes.FindAllStringIndex(raw, -1)
	off, kept := 0, 0
	for _, e := range esc {
		if kept+(e[0]-off) >= n {
			break
		}
		kept += e[0] - off
		off = e[1]
	}
	return off + (n - kept)
}

func (tm *term) read() {
	buf := make([]byte, 4096)
	for {
		n, err := tm.master.Read(buf)
		tm.mu.Lock()
		tm.out.WriteString(string(buf[:n]))
		if err != nil {
			tm.eof = true
		}
		tm.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// output is what the shell wrote so far, without escape sequences.
func (tm *term) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return escapes.ReplaceAllString(tm.out.String(), "")
}

// expect waits until the output after the last match matches the regular
// expression re, and returns the match.
func (tm *term) expect(re string) string {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(60 * time.Second)
	for {
		tm.mu.Lock()
		raw := tm.out.String()
		eof := tm.eof
		seen := tm.seen
		tm.mu.Unlock()
		// Match on the cleaned text, tracking the position in raw bytes.
		clean := escapes.ReplaceAllString(raw[seen:], "")
		if loc := rx.FindStringIndex(clean); loc != nil {
			off := seen + rawOffset(raw[seen:], loc[1])
			tm.mu.Lock()
			tm.seen = off
			tm.mu.Unlock()
			return clean[loc[0]:loc[1]]
		}
		if eof || time.Now().After(deadline) {
			tm.t.Fatalf("shell output never matched %q; after the last match it printed:\n%s", re, clean)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reject fails if the output since the last match (up to now) matches re.
func (tm *term) reject(re string, upto string) {
	tm.t.Helper()
	got := tm.expectRaw(upto)
	if m := regexp.MustCompile(re).FindString(got); m != "" {
		tm.t.Errorf("shell printed %q, which it should not have:\n%s", m, got)
	}
}

// expectRaw is expect returning all the text from the last match to the end of this one.
func (tm *term) expectRaw(re string) string {
	tm.t.Helper()
	tm.mu.Lock()
	from := tm.seen
	tm.mu.Unlock()
	tm.expect(re)
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return escapes.ReplaceAllString(tm.out.String()[from:tm.seen], "")
}

// send types s once the shell is reading a line (the tty is in raw mode);
// typed earlier, the terminal would echo and buffer it in cooked mode.
func (tm *term) send(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !isRaw(tm.master) {
		if time.Now().After(deadline) {
			tm.t.Fatal("the shell never started reading a line")
		}
		time.Sleep(time.Millisecond)
	}
	tm.sendNow(s)
}

// sendNow types s at once (Ctrl-C while a query runs).
func (tm *term) sendNow(s string) {
	tm.t.Helper()
	if _, err := tm.master.WriteString(s); err != nil {
		tm.t.Fatal(err)
	}
}

// line types one line and Enter.
func (tm *term) line(s string) { tm.send(s + "\r") }

// wait waits for the child to exit and returns its status; any but 0 fails the test.
func (tm *term) wait() int {
	tm.t.Helper()
	select {
	case <-tm.exited:
	case <-time.After(30 * time.Second):
		tm.t.Fatal("shell did not exit")
	}
	var ee *exec.ExitError
	if errors.As(tm.err, &ee) {
		tm.t.Errorf("shell exited with status %d", ee.ExitCode())
		return ee.ExitCode()
	}
	if tm.err != nil {
		tm.t.Fatal(tm.err)
	}
	return 0
}

func TestStartupHintAndQuit(t *testing.T) {
	tm := start(t, childOpts{})
	out := tm.output()
	for _, want := range []string{"Quiver SQL shell", "lineitem", "CACHE TABLE"} {
		if !strings.Contains(out, want) {
			t.Errorf("startup text lacks %q:\n%s", want, out)
		}
	}
	tm.line(`\q`)
	if code := tm.wait(); code != 0 {
		t.Errorf(`\q: exit status %d`, code)
	}
}

func TestMultiLineQuery(t *testing.T) {
	tm := start(t, childOpts{})
	tm.line("SELECT count(*) AS n,")
	tm.expect(regexp.QuoteMeta(repl.ContinuePrompt))
	tm.line("  'a;b' AS s -- a ; in a comment")
	tm.expect(regexp.QuoteMeta(repl.ContinuePrompt))
	tm.line("FROM lineitem;")
	tm.expect(`│ +60175 │ a;b │`)
	tm.expect(`1 row in \d+\.\d{3} s`)
	tm.expect(`quiver> `)
	tm.send("\x04") // Ctrl-D on an empty line exits
	if code := tm.wait(); code != 0 {
		t.Errorf("Ctrl-D: exit status %d", code)
	}
}

func TestMetaCommands(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "answer.sql")
	if err := os.WriteFile(script, []byte("-- a script\nSELECT 40 +\n  2 AS answer;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := start(t, childOpts{})

	tm.line(`\?`)
	tm.expect(`\\maxrows N +show at most N rows`)
	tm.expect(`quiver> `)

	tm.line(`\d`)
	tm.expect(`│ lineitem +│ table │ 16 +│`)
	tm.expect(`8 rows in`)

	tm.line(`\d orders`)
	tm.expect(`│ o_totalprice +│ Decimal128\(15, 2\) │`)
	tm.expect(`9 rows in`)

	tm.line(`\d nosuch`)
	tm.expect(`Error: .*"nosuch" not found`)

	tm.line(`\timing off`)
	tm.expect(`Timing is off\.`)
	tm.line(`SELECT 1 AS one;`)
	tm.reject(` in \d+\.\d+ s`, `\n1 row\n`)
	tm.line(`\timing`)
	tm.expect(`Timing is on\.`)

	tm.line(`\format csv`)
	tm.expect(`Output format is csv\.`)
	tm.line(`SELECT r_regionkey, r_name FROM region ORDER BY r_regionkey LIMIT 2;`)
	tm.expect(`r_regionkey,r_name\n0,AFRICA\n1,AMERICA\n2 rows in`)
	tm.line(`\format table`)
	tm.expect(`Output format is table\.`)

	tm.line(`\maxrows 4`)
	tm.expect(`at most 4 rows`)
	tm.line(`SELECT r_regionkey FROM region ORDER BY r_regionkey;`)
	tm.expect(`│ +0 │\n│ +1 │\n│ …  +│\n│ +3 │\n│ +4 │\n└─+┘\n5 rows \(4 shown\) in`)

	tm.line(`\caches`)
	// The cache is not built yet: the shell must show SHOW CACHES' own answer, error or table.
	tm.expect(`Error: .*SHOW CACHES|│ name`)

	tm.line(`\i ` + script)
	tm.expect(`│ +42 │`)

	tm.line(`\explain SELECT count(*) FROM nation WHERE n_regionkey = 1`)
	tm.expect(`logical_plan:`)
	tm.expect(`physical_plan:`)

	tm.line(`\nope`)
	tm.expect(`unknown command \\nope; the commands are .*\\caches`)

	tm.line(`\q`)
	if code := tm.wait(); code != 0 {
		t.Errorf(`\q: exit status %d`, code)
	}
}

func TestCompletion(t *testing.T) {
	tm := start(t, childOpts{})
	// A keyword in the case typed, a table name, a column after "alias.",
	// and a column of a table the statement named earlier.
	tm.send("sel\t")
	tm.expect(`select`)
	tm.send(" count(*) from linei\t")
	tm.expect(`from lineitem`)
	tm.send(" l where l.l_shipm\t")
	tm.expect(`l\.l_shipmode`)
	tm.send(" = 'AIR' and l_retu\t")
	tm.expect(`and l_returnflag`)
	tm.line(" = 'R';")
	tm.expect(`│ +\d+ │\n└─+┘\n1 row in`)
	tm.line(`\q`)
	tm.wait()
}

func TestCtrlC(t *testing.T) {
	tm := start(t, childOpts{})

	// On an empty line: a hint, and the shell stays.
	tm.send("\x03")
	tm.expect(`\\q or Ctrl-D quits`)
	tm.expect(`quiver> `)

	// On a partial statement: it is discarded.
	tm.line("SELECT 'discarded'")
	tm.expect(regexp.QuoteMeta(repl.ContinuePrompt))
	tm.send("\x03")
	tm.expect(`quiver> `)
	tm.line("SELECT 2 AS two;")
	tm.reject(`discarded`, `1 row in`)

	// While a long query runs: the query is cancelled and the prompt returns.
	tm.line("SELECT count(*) FROM lineitem a, lineitem b WHERE a.l_quantity + b.l_quantity > 1000;")
	tm.expect(`running… \d+\.\d s`) // the progress line: stderr is a terminal
	began := time.Now()
	tm.sendNow("\x03")
	tm.expect(`Query canceled\.`)
	tm.expect(`quiver> `)
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("cancelling took %v", d)
	}
	tm.line("SELECT 3 AS three;")
	tm.expect(`│ +3 │`)
	tm.line(`\q`)
	tm.wait()
}

func TestSyntaxErrorCaret(t *testing.T) {
	tm := start(t, childOpts{})
	tm.line("SELECT l_orderkey")
	tm.expect(regexp.QuoteMeta(repl.ContinuePrompt))
	tm.line("  FRM lineitem;")
	tm.expect(`Error: planning error at line 2, column 7: .*\n`)
	// "LINE 2: " is 8 columns, then 6 more to column 7.
	tm.expect(`LINE 2:   FRM lineitem;\n {14}\^\n`)
}

func TestElidedTable(t *testing.T) {
	tm := start(t, childOpts{maxRows: 6})
	tm.line("SELECT n_nationkey, n_name, NULL AS nothing, n_comment FROM nation ORDER BY n_nationkey;")
	got := tm.expectRaw(`25 rows \(6 shown\) in \d+\.\d{3} s\n`)
	for _, want := range []string{
		"│           0 │ ALGERIA", // numbers right-aligned under their header
		"│ …           │ …",       // the elided middle
		"│          24 │ UNITED STATES",
		"│ NULL    │",
		"fina… │", // comments are cut to fit the 100-column terminal
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !strings.HasPrefix(l, "│") {
			continue // the echo of the typed line
		}
		if w := len([]rune(l)); w > 100 {
			t.Errorf("line is %d columns wide, the terminal 100: %q", w, l)
		}
	}
	if strings.Contains(got, "ARGENTINA") == false || strings.Contains(got, "CHINA") {
		t.Errorf("want rows 0-2 and 22-24 only:\n%s", got)
	}
}

func TestHistorySurvivesRestart(t *testing.T) {
	state := t.TempDir()
	tm := start(t, childOpts{state: state})
	tm.line("SELECT 7 AS seven,")
	tm.expect(regexp.QuoteMeta(repl.ContinuePrompt))
	tm.line("  8 AS eight;")
	tm.expect(`1 row in`)
	tm.expect(`quiver> `)
	tm.send("\x04") // Ctrl-D, so that the statement stays the last entry
	tm.wait()

	data, err := os.ReadFile(filepath.Join(state, "quiver", "history"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "SELECT 7 AS seven, 8 AS eight;") {
		t.Errorf("history file lacks the statement (as one line):\n%s", data)
	}

	tm = start(t, childOpts{state: state})
	tm.send("\x1b[A") // Up: the last statement comes back, then Enter runs it
	tm.expect(`SELECT 7 AS seven, 8 AS eight;`)
	tm.send("\r")
	tm.expect(`│ +7 │ +8 │`)
	tm.line(`\q`)
	tm.wait()
}

func TestInitFile(t *testing.T) {
	init := filepath.Join(t.TempDir(), "init.sql")
	if err := os.WriteFile(init, []byte("\\timing off\nCREATE VIEW answer AS\n  SELECT 42 AS a;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tm := start(t, childOpts{init: init})
	tm.line("SELECT a FROM answer;")
	tm.expect(`│ 42 │`)
	tm.expect(`\n1 row\n`) // \timing off came from the file
	tm.line(`\q`)
	tm.wait()
}
