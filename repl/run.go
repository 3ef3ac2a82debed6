package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/qerr"
)

// runSQL runs the statements of text in order, printing each result; Ctrl-C
// cancels the one running. The first error stops the rest and is printed.
func (sh *shell) runSQL(ctx context.Context, text string) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := sh.cancelOnInterrupt(qctx, cancel)
	start := time.Now()
	// A statement the scheduler lost (it restarted) runs once more: show
	// prints nothing before a statement's result is complete.
	err := sh.s.ScriptRetry(qctx, text, func(df *quiver.DataFrame) error {
		err := sh.show(qctx, df, start)
		start = time.Now()
		return err
	}, func(err error) {
		fmt.Fprintf(sh.errw, "%v; retrying once.\n", err)
		start = time.Now()
	})
	interrupted := stop()
	if err == nil {
		return
	}
	if interrupted && ctx.Err() == nil && (qerr.KindOf(err) == qerr.Canceled || errors.Is(err, context.Canceled)) {
		fmt.Fprintln(sh.errw, "Query canceled.")
		return
	}
	sh.printError(text, err)
}

// cancelOnInterrupt cancels the query on Ctrl-C until stop is called; stop
// reports whether Ctrl-C came. Its goroutine exits when stop is called.
func (sh *shell) cancelOnInterrupt(ctx context.Context, cancel context.CancelFunc) (stop func() bool) {
	// A Ctrl-C that came while no query ran is not meant for this one.
	for drained := false; !drained; {
		select {
		case <-sh.interrupts:
		default:
			drained = true
		}
	}
	done := make(chan struct{})
	var hit atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-sh.interrupts:
			hit.Store(true)
			cancel()
		case <-done:
		case <-ctx.Done():
		}
	}()
	return func() bool {
		close(done)
		wg.Wait()
		return hit.Load()
	}
}

// show runs one statement's DataFrame and prints its result and footer.
func (sh *shell) show(ctx context.Context, df *quiver.DataFrame, start time.Time) error {
	if !df.ReturnsRows() {
		sh.printFooter(Result{Seconds: time.Since(start).Seconds()}, "OK")
		return nil
	}
	var info quiver.QueryInfo
	batches, err := sh.collect(ctx, df, &info)
	if err != nil {
		return err
	}
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	var n int64
	for _, b := range batches {
		n += b.NumRows()
	}
	opt := format.Options{
		MaxRows:      sh.maxRows,
		Width:        sh.width(),
		Color:        sh.color,
		HideRowCount: true,
	}
	if err := format.Write(sh.out, sh.format, df.Schema(), batches, opt); err != nil {
		return qerr.IOf("print result: %w", err)
	}
	res := Result{Rows: n, Seconds: time.Since(start).Seconds()}
	for _, c := range info.Caches {
		res.Caches = append(res.Caches, c.String())
	}
	count := plural(n, "row")
	if sh.format == format.Table && sh.maxRows > 0 && n > int64(sh.maxRows) {
		count += fmt.Sprintf(" (%d shown)", sh.maxRows)
	}
	sh.printFooter(res, count)
	return nil
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// printFooter prints "WHAT in X.XXX s" (or WHAT alone with \timing off) and
// the lines of the Config.Footer hook.
func (sh *shell) printFooter(res Result, what string) {
	if sh.timing {
		fmt.Fprintf(sh.out, "%s in %.3f s\n", what, res.Seconds)
	} else {
		fmt.Fprintln(sh.out, what)
	}
	// A line per cache the query hit, built or waited on.
	for _, l := range res.Caches {
		fmt.Fprintln(sh.out, l)
	}
	if sh.footer != nil {
		for _, l := range sh.footer(res) {
			fmt.Fprintln(sh.out, l)
		}
	}
}

// collect runs the query, keeping its batches (the caller releases them),
// and shows the progress line while it runs.
func (sh *shell) collect(ctx context.Context, df *quiver.DataFrame, info *quiver.QueryInfo) ([]arrow.RecordBatch, error) {
	var rows atomic.Int64
	var job atomic.Pointer[quiver.JobProgress]
	info.OnProgress = func(p quiver.JobProgress) { job.Store(&p) }
	stop := sh.startProgress(&rows, &job)
	defer stop()
	var out []arrow.RecordBatch
	fail := func(err error) ([]arrow.RecordBatch, error) {
		for _, b := range out {
			b.Release()
		}
		return nil, err
	}
	for b, err := range df.StreamInfo(ctx, info) {
		if err != nil {
			return fail(err)
		}
		b.Retain()
		out = append(out, b)
		rows.Add(b.NumRows())
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	return out, nil
}

// Progress line timing: it appears only for queries slower than
// progressDelay, and is redrawn every progressEvery.
const (
	progressDelay = 300 * time.Millisecond
	progressEvery = 100 * time.Millisecond
)

// startProgress draws "running… 1.2 s, stages 1/3, tasks 4/9, 34 rows" on
// Err while a query runs, if Err is a terminal. stop erases the line and
// waits for its goroutine.
func (sh *shell) startProgress(rows *atomic.Int64, job *atomic.Pointer[quiver.JobProgress]) (stop func()) {
	if !sh.progress {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		drawn := false
		defer func() {
			if drawn {
				io.WriteString(sh.errw, "\r\x1b[K")
			}
		}()
		delay := time.NewTimer(progressDelay)
		defer delay.Stop()
		select {
		case <-done:
			return
		case <-delay.C:
		}
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		spin := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		for i := 0; ; i++ {
			stages := ""
			if p := job.Load(); p != nil {
				stages = fmt.Sprintf("stages %d/%d, tasks %d/%d, ", p.StagesDone, p.StagesTotal, p.TasksDone, p.TasksTotal)
			}
			fmt.Fprintf(sh.errw, "\r\x1b[K%s running… %.1f s, %s%s received (Ctrl-C cancels)",
				spin[i%len(spin)], time.Since(start).Seconds(), stages, plural(rows.Load(), "row"))
			drawn = true
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// printError prints err; an error located in the SQL text also shows the
// offending line with a caret under the column.
func (sh *shell) printError(text string, err error) {
	fmt.Fprintln(sh.errw, "Error:", err)
	var qe *qerr.Error
	if !errors.As(err, &qe) || qe.Line <= 0 {
		return
	}
	lines := strings.Split(text, "\n")
	if qe.Line > len(lines) {
		return
	}
	fmt.Fprint(sh.errw, caret(qe.Line, lines[qe.Line-1], qe.Column))
}

// caret renders "LINE n: text" and a "^" under byte column col (1-based) of
// text, counting terminal columns so wide characters and tabs line up.
func caret(n int, text string, col int) string {
	prefix := fmt.Sprintf("LINE %d: ", n)
	col = min(max(col, 1), len(text)+1)
	var pad strings.Builder
	pad.WriteString(strings.Repeat(" ", len(prefix)))
	for _, r := range text[:col-1] {
		if r == '\t' {
			pad.WriteByte('\t')
			continue
		}
		pad.WriteString(strings.Repeat(" ", format.TextWidth(string(r))))
	}
	return prefix + text + "\n" + pad.String() + "^\n"
}
