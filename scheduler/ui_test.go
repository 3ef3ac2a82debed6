package scheduler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/chromedp/chromedp"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/rpc"
)

// chromium finds a Chromium or Chrome binary, or skips the test saying
// what is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on PATH (looked for chromium, chromium-browser, google-chrome, headless-shell): " +
		"the web UI test drives a real browser; install one (Debian: apt-get install chromium) to run it")
	return ""
}

// browser is a headless Chromium page; step runs actions and, when they
// fail, saves a screenshot under the test's temp dir and fails the test.
type browser struct {
	t    *testing.T
	ctx  context.Context
	shot string // screenshot directory
}

func newBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // tests may run as root, where Chromium's sandbox refuses to start
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium keeps its singleton socket under TMPDIR, beside the
		// profile: give it one the test removes.
		chromedp.Env("TMPDIR="+t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start Chromium %s: %v", path, err)
	}
	return &browser{t: t, ctx: ctx, shot: t.TempDir()}
}

func (b *browser) step(name string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fail(name, err)
	}
}

// text is the visible text of the first element sel matches.
func (b *browser) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fail("read "+sel, err)
	}
	return s
}

// fail saves a screenshot of the page under the test's temp dir and fails.
func (b *browser) fail(name string, err error) {
	b.t.Helper()
	file := filepath.Join(b.shot, strings.NewReplacer(" ", "-", "/", "-").Replace(name)+".png")
	sctx, scancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer scancel()
	if png, serr := chromedp.Run(sctx, chromedp.FullScreenshot(90)); serr == nil {
		os.WriteFile(file, png, 0o644)
	} else {
		file = "(no screenshot: " + serr.Error() + ")"
	}
	html, _ := chromedp.Run(sctx, chromedp.OuterHTML(chromedp.CSS("main")))
	b.t.Fatalf("%s: %v\nscreenshot: %s\nmain: %s", name, err, file, html)
}

// click clicks the element sel names, in the page, so that a redraw of
// the page between finding and clicking it cannot make it stale.
func click(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; `+
			`e.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true})); return true; })()`, sel)
		ok, err := chromedp.Evaluate[bool](js)(ctx, t)
		if err != nil {
			return chromedp.Void{}, err
		}
		if !ok {
			return chromedp.Void{}, fmt.Errorf("nothing to click at %s", sel)
		}
		return chromedp.Void{}, nil
	}
}

// count waits until sel matches exactly n elements.
func count(sel string, n int) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			got, err := chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))(ctx, t)
			if err != nil {
				return chromedp.Void{}, err
			}
			if got == n {
				return chromedp.Void{}, nil
			}
			select {
			case <-ctx.Done():
				return chromedp.Void{}, fmt.Errorf("%s matches %d elements, want %d: %w", sel, got, n, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// TestWebUI loads every page of the UI in headless Chromium against a
// running scheduler with two executors: a query submitted meanwhile
// appears in the jobs list by itself (auto-refresh) with its SQL and
// rows; its page draws the stage graph as SVG, one node per stage and one
// arrow per input, with its tasks; a long query is cancelled with its
// button; the executors, caches and sessions pages list what the REST API
// holds.
func TestWebUI(t *testing.T) {
	path := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	c := startCluster(t, ctx, Config{RestAddr: "127.0.0.1:0"}, 2, mem)
	base := "http://" + c.sched.RestAddr()
	sess := c.session(t, ctx, map[string]string{"quiver.target_partitions": "2"})
	b := newBrowser(t, path)

	b.step("open the jobs page", 30*time.Second,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=jobs]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav a.active[data-page=jobs]`)))

	okSQL := "SELECT n_regionkey, count(*) AS n FROM nation GROUP BY n_regionkey"
	okID := c.submitSQL(t, ctx, sess, okSQL, nil)
	if st := c.watch(t, ctx, okID); st.State != rpc.JobState_JOB_SUCCESSFUL {
		t.Fatalf("job %s: %s", st.State, st.Error)
	}
	row := fmt.Sprintf(`tr[data-job=%q]`, okID)
	b.step("see the query appear", 30*time.Second,
		chromedp.WaitVisible(chromedp.CSS(row+`[data-state=successful]`)))
	sqlCell, rowsCell := b.text(row+` td.sql`), b.text(row+` td[data-testid=rows]`)
	if sqlCell != okSQL || rowsCell != "5" {
		t.Errorf("jobs row: sql %q rows %q; want %q and 5", sqlCell, rowsCell, okSQL)
	}

	var job JobInfo
	if code := restCall(t, "GET", base+"/api/job/"+okID, &job); code != 200 {
		t.Fatalf("GET job: %d", code)
	}
	edges := 0
	for _, s := range job.Stages {
		edges += len(s.Inputs)
	}
	if len(job.Stages) < 2 || edges == 0 {
		t.Fatalf("the grouped query on two executors has %d stages and %d edges", len(job.Stages), edges)
	}
	b.step("open the job's graph", 30*time.Second,
		click(row+` a[data-testid=job-link]`),
		chromedp.WaitVisible(chromedp.CSS(`svg[data-testid=stage-graph]`)),
		count(`svg[data-testid=stage-graph] g.node`, len(job.Stages)),
		count(`svg[data-testid=stage-graph] g.node[data-state=successful]`, len(job.Stages)),
		count(`svg[data-testid=stage-graph] path.edge`, edges),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=tasks] tbody tr`)))
	if sqlText := b.text(`pre[data-testid=job-sql]`); sqlText != okSQL {
		t.Errorf("job page SQL %q", sqlText)
	}
	for _, s := range job.Stages {
		for _, in := range s.Inputs {
			b.step("find the edge", 5*time.Second, count(fmt.Sprintf(`path.edge[data-from="%d"][data-to="%d"]`, in, s.ID), 1))
		}
	}
	// Clicking a node shows that stage's plan.
	first := job.Stages[0]
	b.step("select a stage", 10*time.Second,
		click(fmt.Sprintf(`g.node[data-stage="%d"]`, first.ID)),
		count(fmt.Sprintf(`g.node.selected[data-stage="%d"]`, first.ID), 1))
	if plan := b.text(`pre[data-testid=plan]`); plan != first.Plan {
		t.Errorf("stage %d plan shown:\n%s\nwant:\n%s", first.ID, plan, first.Plan)
	}
	// The finished job's stages carry EXPLAIN ANALYZE figures from their
	// tasks: the final aggregate made the 5 result rows, every stage read
	// the 25 nations or what they became, and the page shows the plan
	// with them and the table of operators.
	final := job.Stages[len(job.Stages)-1]
	aggRows := int64(-1)
	for _, o := range final.Operators {
		if strings.HasPrefix(o.Operator, "HashAggregate") {
			aggRows = o.OutputRows
		}
	}
	if aggRows != 5 || !strings.Contains(final.Analyze, "metrics=[output_rows=5,") {
		t.Errorf("final stage's figures: aggregate rows %d, plan:\n%s", aggRows, final.Analyze)
	}
	scanRows := int64(0)
	for _, s := range job.Stages {
		if s.Analyze == "" || len(s.Operators) == 0 {
			t.Errorf("stage %d has no figures", s.ID)
		}
		for _, o := range s.Operators {
			if strings.HasPrefix(o.Operator, "Scan") || strings.HasPrefix(o.Operator, "ParquetScan") {
				scanRows += o.OutputRows
			}
		}
	}
	if scanRows != 25 {
		t.Errorf("the scans' figures add up to %d rows, want the 25 nations", scanRows)
	}
	b.step("see the stage's figures", 10*time.Second,
		chromedp.WaitVisible(chromedp.CSS(`pre[data-testid=plan-analyze]`)),
		count(`[data-testid=operators] tbody tr`, len(first.Operators)))
	if got := b.text(`pre[data-testid=plan-analyze]`); got != strings.TrimSuffix(first.Analyze, "\n") && got != first.Analyze {
		t.Errorf("stage %d plan with metrics shown:\n%s\nwant:\n%s", first.ID, got, first.Analyze)
	}

	longID := c.submitSQL(t, ctx, sess, longSQL, nil)
	longRow := fmt.Sprintf(`tr[data-job=%q]`, longID)
	b.step("cancel the long query with its button", 60*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(chromedp.CSS(longRow+`[data-state=running] button[data-testid=cancel]`)),
		click(longRow+` button[data-testid=cancel]`),
		chromedp.WaitVisible(chromedp.CSS(longRow+`[data-state=cancelled]`)),
		count(longRow+` button[data-testid=cancel]`, 0))
	if st := c.watch(t, ctx, longID); st.State != rpc.JobState_JOB_CANCELLED {
		t.Errorf("after the button: job %s", st.State)
	}

	b.step("executors", 30*time.Second,
		click(`nav a[data-page=executors]`),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-executor="exec-1"]`)),
		count(`[data-testid=executors] tbody tr`, 2),
		count(`[data-testid=executors] td[data-testid=memory]`, 2))
	b.step("caches", 30*time.Second,
		click(`nav a[data-page=caches]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=cache-stats]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=caches]`)))
	b.step("sessions", 30*time.Second,
		click(`nav a[data-page=sessions]`),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-session=%q]`, sess))))
	// A job that does not exist says so instead of failing to draw.
	b.step("unknown job", 30*time.Second,
		chromedp.Navigate(base+"/#/job/nope"),
		chromedp.WaitVisible(chromedp.CSS(`main .empty`)))
	if msg := b.text(`main .empty`); !strings.Contains(msg, "No such job") {
		t.Errorf("unknown job page: %q", msg)
	}
	// The executors' tasks have stopped before the cluster closes.
	waitFor(t, ctx, "the cancelled tasks to stop", func() bool {
		running := 0.0
		for _, e := range c.execs {
			running += gauge(t, e.Registry(), "quiver_executor_tasks_running")
		}
		return running == 0
	})
}

// TestWebUIToken: on a scheduler with a token the page asks for it, and
// once given (typed into its form) shows the jobs.
func TestWebUIToken(t *testing.T) {
	path := chromium(t)
	tok, err := auth.New("ui-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{RestAddr: "127.0.0.1:0", AuthToken: tok})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := newBrowser(t, path)
	b.step("asked for the token", 30*time.Second,
		chromedp.Navigate("http://"+s.RestAddr()+"/#/jobs"),
		chromedp.WaitVisible(chromedp.CSS(`form[data-testid=token-form]`)),
		count(`[data-testid=jobs]`, 0))
	b.step("give the token", 30*time.Second,
		chromedp.SendKeys(chromedp.CSS(`#token`), "ui-test-secret-0123456789"),
		submit(`form[data-testid=token-form]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=jobs]`)))
}

// submit submits the form sel names, as pressing its button does.
func submit(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		ok, err := chromedp.Evaluate[bool](fmt.Sprintf(`(() => { const f = document.querySelector(%q); if (!f) return false; f.requestSubmit(); return true; })()`, sel))(ctx, t)
		if err == nil && !ok {
			err = fmt.Errorf("no form at %s", sel)
		}
		return chromedp.Void{}, err
	}
}
