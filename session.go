package quiver

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/logical/optimizer"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/settings"
	"github.com/quiverdb/quiver/sql"
)

// Option configures a Session.
type Option func(*config)

type config struct {
	mem        memory.Allocator
	settings   settings.Values
	settingErr error      // the first bad setting an option gave
	standalone int        // executors of an in-process cluster; 0 runs queries directly
	token      auth.Token // sent to a cluster's scheduler and executors (WithAuthToken)
	tls        auth.TLS   // the transport to a cluster (WithTLS)
}

// set records a setting an option gave; NewSession reports the first bad one.
func (c *config) set(st *settings.Setting, value string) {
	v, err := c.settings.With(st.Name, value)
	if err != nil {
		if c.settingErr == nil {
			c.settingErr = err
		}
		return
	}
	c.settings = v
}

// WithStandaloneCluster runs the session's queries as jobs on a scheduler
// and n executors started inside this process on loopback ports (the
// distributed path, with shuffle files in a temporary work dir). This is
// the default, with one executor.
func WithStandaloneCluster(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.standalone = n
		}
	}
}

// WithLocalExecution runs the session's queries directly in this process,
// without a scheduler: one job of in-memory exchanges, no shuffle files. It
// is the single-node engine the cluster's executors are built from.
func WithLocalExecution() Option { return func(c *config) { c.standalone = 0 } }

// WithAllocator makes every query of the session allocate from mem (tests
// pass a memory.CheckedAllocator).
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// WithTargetPartitions sets quiver.target_partitions, how many partitions
// a query runs in parallel (n <= 0: the default, the scheduler's executors'
// cores, or GOMAXPROCS under local execution). NewSession rejects n > 1024.
func WithTargetPartitions(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.set(settings.TargetPartitions, strconv.Itoa(n))
		}
	}
}

// WithBatchSize sets quiver.batch_size, the target rows per batch (n <= 0:
// the default). NewSession rejects n > 1048576.
func WithBatchSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.set(settings.BatchSize, strconv.Itoa(n))
		}
	}
}

// WithExchangeMode sets quiver.exchange_mode: ExchangeAuto (the default)
// or ExchangeShuffle. NewSession rejects any other value.
func WithExchangeMode(mode string) Option {
	return func(c *config) { c.set(settings.ExchangeMode, mode) }
}

// WithMemoryLimit sets quiver.memory_limit, the memory one query may use
// (0: no limit). NewSession rejects a negative limit.
func WithMemoryLimit(bytes int64) Option {
	return func(c *config) { c.set(settings.MemoryLimit, strconv.FormatInt(bytes, 10)) }
}

// Session is a connection to the engine: a catalog of tables and views,
// settings, and the queries run in it. It is safe for concurrent use.
type Session struct {
	id  string
	mem memory.Allocator
	cat *catalog.Catalog
	opt *optimizer.Optimizer
	// inputs holds the optimized input of each cached plan (cache_optimize.go).
	inputs cacheInputMemo

	mu       sync.Mutex // guards planner (its TiDB parser is single-goroutine), settings, closed
	planner  *sql.Planner
	settings settings.Values // what SET and the options gave; see settings.go
	closed   bool
	writeMu  sync.Mutex // serializes writes to tables (tables.go)

	// remote, when set, runs queries as jobs on a scheduler (Connect or a standalone cluster).
	remote  *remote
	workDir string // a standalone cluster's temporary work dir, removed on Close
	// standaloneExecutors is how many executors the session's own
	// standalone cluster has (0: none; local execution or Connect).
	standaloneExecutors int

	// built holds the cache ids the scheduler materialized for this
	// session (seen in its queries' cache events), so that a re-opened
	// session can say which caches lost their data (session_resume.go).
	builtMu sync.Mutex
	built   map[string]bool

	// orphans are the cache ids whose names the catalog dropped but whose
	// removal the scheduler did not confirm (cache_names.go).
	orphanMu sync.Mutex
	orphans  map[string]bool
}

// NewSession returns an embedded session: no server is needed.
func NewSession(ctx context.Context, opts ...Option) (*Session, error) {
	s, c, err := newSession(ctx, opts)
	if err != nil {
		return nil, err
	}
	if c.standalone > 0 {
		dir, err := os.MkdirTemp("", "quiver-standalone-")
		if err != nil {
			return nil, qerr.IOf("standalone cluster: %w", err)
		}
		if err := s.startStandalone(ctx, c.standalone, dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.workDir = dir
		s.standaloneExecutors = c.standalone
	} else {
		// Local runs do not share CTEs, so the merged aggregate would run once per reader.
		s.opt = s.opt.Without(optimizer.MergeScalarAggregates{}.Name())
	}
	return s, nil
}

// newSession returns a session with its catalog and settings and nothing
// started: NewSession then starts its standalone cluster, if any; Connect
// dials the cluster's scheduler instead.
func newSession(ctx context.Context, opts []Option) (*Session, config, error) {
	if err := ctx.Err(); err != nil {
		return nil, config{}, err
	}
	c := config{mem: memory.DefaultAllocator, standalone: 1}
	for _, o := range opts {
		o(&c)
	}
	if c.settingErr != nil {
		return nil, config{}, c.settingErr
	}
	cat := catalog.New()
	s := &Session{
		id:       uuid.NewString(),
		mem:      c.mem,
		cat:      cat,
		opt:      optimizer.New(),
		planner:  sql.NewPlanner(cat),
		settings: c.settings,
	}
	return s, c, nil
}

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// Close frees the session's resources (its in-memory tables). It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.remote != nil {
		err = s.remote.close()
	}
	if s.workDir != "" {
		os.RemoveAll(s.workDir)
	}
	s.cat.Close()
	return err
}

func (s *Session) check() error {
	if s.closed {
		return qerr.Planf("session is closed")
	}
	return nil
}

// SQL plans one statement. Queries are lazy (they run on Collect, Stream,
// Count or Show); DDL, SET and the other statements run at once and return
// a DataFrame with their result rows, if any.
func (s *Session) SQL(ctx context.Context, query string) (*DataFrame, error) {
	srcs, err := sql.Split(query)
	if err != nil {
		return nil, err
	}
	if len(srcs) != 1 {
		return nil, qerr.Planf("SQL takes exactly one statement, got %d (use Script for several)", len(srcs))
	}
	return s.run(ctx, srcs[0])
}

// Script runs the statements of script in order, calling each with the
// DataFrame of each statement (queries not yet run); it stops at the first
// error, from a statement or from each.
func (s *Session) Script(ctx context.Context, script string, each func(df *DataFrame) error) error {
	srcs, err := sql.Split(script)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		df, err := s.run(ctx, src)
		if err != nil {
			return err
		}
		if err := each(df); err != nil {
			return err
		}
	}
	return nil
}

// ScriptRetry is Script, but a statement that fails with a retryable
// error (qerr.Retryable: the scheduler was unreachable or restarted before
// the statement delivered a row or changed anything) runs once more, after
// retrying is called with the error. The shell and `quiver -c` use it; each
// must not have shown anything of a statement before its error.
func (s *Session) ScriptRetry(ctx context.Context, script string, each func(df *DataFrame) error, retrying func(err error)) error {
	srcs, err := sql.Split(script)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		for attempt := 0; ; attempt++ {
			err := s.runEach(ctx, src, each)
			if err == nil {
				break
			}
			if attempt > 0 || !qerr.Retryable(err) || ctx.Err() != nil {
				return err
			}
			if retrying != nil {
				retrying(err)
			}
		}
	}
	return nil
}

// runEach runs one statement and hands its frame to each.
func (s *Session) runEach(ctx context.Context, src sql.Source, each func(df *DataFrame) error) error {
	df, err := s.run(ctx, src)
	if err != nil {
		return err
	}
	return each(df)
}

func (s *Session) plan(src sql.Source) (sql.Statement, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	s.planner.SetTimeZone(s.settings.Text(settings.TimeZone))
	return s.planner.Plan(src)
}

// run plans one statement and executes it if it is not a query.
func (s *Session) run(ctx context.Context, src sql.Source) (*DataFrame, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stmt, err := s.plan(src)
	if err != nil {
		if stmt, err = s.planGlobalCache(ctx, src, err); err != nil {
			return nil, err
		}
	}
	switch st := stmt.(type) {
	case *sql.Query:
		df := s.newFrame(st.Plan)
		df.sqlText = src.Text
		return df, nil
	case *sql.CreateExternalTable:
		df, err := s.createExternalTable(st)
		if err == nil && st.OrReplace {
			s.invalidateCachesOf(ctx, st.Name, true)
		}
		return df, err
	case *sql.CreateView:
		if err := s.cat.RegisterView(&catalog.View{Name: st.Name, SQL: st.SQL, Schema: st.Plan.Schema().Arrow()}, st.OrReplace); err != nil {
			return nil, err
		}
		if st.OrReplace {
			s.invalidateCachesOf(ctx, st.Name, true)
		}
		return s.done(), nil
	case *sql.DropTable:
		old, _ := s.cat.Table(st.Name)
		if err := s.cat.DropTable(st.Name, st.IfExists); err != nil {
			return nil, err
		}
		if old != nil && old.OnExecutors {
			s.dropSegments(old.Segments)
		}
		s.dropCached(st.Name)
		s.invalidateCachesOf(ctx, st.Name, false)
		return s.done(), nil
	case *sql.DropView:
		if err := s.cat.DropView(st.Name, st.IfExists); err != nil {
			return nil, err
		}
		s.dropCached(st.Name)
		s.invalidateCachesOf(ctx, st.Name, false)
		return s.done(), nil
	case *sql.RefreshCache:
		return s.refreshCache(ctx, st)
	case *sql.ShowTables:
		return s.showTables()
	case *sql.Describe:
		if st.Plan != nil {
			return s.describeFields(st.Plan.Schema().Fields)
		}
		return s.describe(st.Name)
	case *sql.Set:
		if err := s.set(st.Name, st.Value); err != nil {
			return nil, err
		}
		return s.done(), nil
	case *sql.ShowSetting:
		return s.show(st.Name)
	case *sql.ShowAll:
		return s.showAll()
	case *sql.Explain:
		return s.explain(ctx, st)
	case *sql.CacheTable:
		return s.cacheTable(ctx, st)
	case *sql.UncacheTable:
		return s.uncacheTable(ctx, st)
	case *sql.ClearCache:
		if err := s.ClearCache(ctx); err != nil {
			return nil, err
		}
		return s.done(), nil
	case *sql.ShowCaches:
		return s.showCaches(ctx)
	}
	if df, ok, err := s.runWrite(ctx, stmt); ok { // tables.go
		return df, err
	}
	return nil, qerr.NotImplementedf("statement %T", stmt)
}

func (s *Session) createExternalTable(st *sql.CreateExternalTable) (*DataFrame, error) {
	if _, ok := s.cat.Table(st.Name); ok && st.IfNotExists {
		return s.done(), nil
	}
	t, err := catalog.OpenTable(st.Name, st.Format, st.Location, st.Options, st.Columns)
	if err != nil {
		return nil, err
	}
	if err := s.cat.RegisterTable(t, st.OrReplace); err != nil {
		return nil, err
	}
	return s.done(), nil
}

// dropCached uncaches a dropped table or view, deleting its cache files.
func (s *Session) dropCached(name string) {
	if ct, ok := s.cat.RemoveCached(name); ok && s.remote != nil {
		s.forgetEntry(context.Background(), ct.CacheID)
	}
}

// RegisterParquet registers the Parquet file or directory at path as table name.
func (s *Session) RegisterParquet(ctx context.Context, name, path string) error {
	return s.register(ctx, name, catalog.Parquet, path, nil)
}

// CSVOption configures RegisterCSV.
type CSVOption func(map[string]string)

// CSVDelimiter sets the field delimiter (default ',').
func CSVDelimiter(d rune) CSVOption { return func(o map[string]string) { o["delimiter"] = string(d) } }

// CSVHeader says whether the first line is a header (default true).
func CSVHeader(has bool) CSVOption {
	return func(o map[string]string) { o["has_header"] = fmt.Sprint(has) }
}

// RegisterCSV registers the CSV file or directory at path as table name,
// inferring its schema from a sample.
func (s *Session) RegisterCSV(ctx context.Context, name, path string, opts ...CSVOption) error {
	o := map[string]string{}
	for _, f := range opts {
		f(o)
	}
	return s.register(ctx, name, catalog.CSV, path, o)
}

func (s *Session) register(ctx context.Context, name string, f catalog.Format, path string, opts map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := catalog.OpenTable(name, f, path, opts, nil)
	if err != nil {
		return err
	}
	return s.cat.RegisterTable(t, false)
}

// RegisterRecords registers batches as an in-memory table of one partition.
// The session retains the batches; the caller keeps its own references.
func (s *Session) RegisterRecords(name string, schema *arrow.Schema, batches []arrow.RecordBatch) error {
	var rows int64
	for i, b := range batches {
		if !b.Schema().Equal(schema) {
			return qerr.Planf("RegisterRecords %q: batch %d has schema %s, want %s", name, i, b.Schema(), schema)
		}
		rows += b.NumRows()
	}
	part := make([]arrow.RecordBatch, len(batches))
	for i, b := range batches {
		b.Retain()
		part[i] = b
	}
	t := &catalog.Table{Name: name, Schema: schema, Format: catalog.Memory, Partitions: [][]arrow.RecordBatch{part}, Rows: rows}
	if err := s.cat.RegisterTable(t, false); err != nil {
		for _, b := range part {
			b.Release()
		}
		return err
	}
	return nil
}

// Table returns a DataFrame reading a registered table or view.
func (s *Session) Table(ctx context.Context, name string) (*DataFrame, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if t, ok := s.cat.Table(name); ok {
		return s.newFrame(logical.NewScan(t, t.Name)), nil
	}
	if _, ok := s.cat.View(name); ok {
		s.mu.Lock()
		p, err := s.planner.PlanQuery("SELECT * FROM " + quoteIdent(name))
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return s.newFrame(p), nil
	}
	return nil, qerr.Planf("table %q not found", name)
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (s *Session) showTables() (*DataFrame, error) {
	names, views := s.cat.Names()
	rows := make([][]string, len(names))
	for i, n := range names {
		kind := "table"
		if views[i] {
			kind = "view"
		} else if t, ok := s.cat.Table(n); ok && t.Format == catalog.Memory {
			kind = "memory"
		}
		rows[i] = []string{n, kind}
	}
	return s.table([]string{"table_name", "table_type"}, rows)
}

func (s *Session) describe(name string) (*DataFrame, error) {
	var schema *arrow.Schema
	if t, ok := s.cat.Table(name); ok {
		schema = t.Schema
	} else if v, ok := s.cat.View(name); ok {
		schema = v.Schema
	} else {
		return nil, qerr.Planf("table %q not found", name)
	}
	fields := make([]logical.Field, schema.NumFields())
	for i, f := range schema.Fields() {
		fields[i] = logical.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
	}
	return s.describeFields(fields)
}

// describeFields is DESCRIBE's result: each column's name, type and
// nullability.
func (s *Session) describeFields(fields []logical.Field) (*DataFrame, error) {
	rows := make([][]string, len(fields))
	for i, f := range fields {
		rows[i] = []string{f.Name, logical.TypeString(f.Type), map[bool]string{true: "YES", false: "NO"}[f.Nullable]}
	}
	return s.table([]string{"column_name", "data_type", "is_nullable"}, rows)
}

// table returns a DataFrame over a small table of strings.
func (s *Session) table(cols []string, rows [][]string) (*DataFrame, error) {
	fields := make([]logical.Field, len(cols))
	for i, c := range cols {
		fields[i] = logical.Field{Name: c, Type: logical.String}
	}
	vals := make([][]logical.Expr, len(rows))
	for i, r := range rows {
		vals[i] = make([]logical.Expr, len(r))
		for j, v := range r {
			vals[i][j] = logical.Lit(v)
		}
	}
	v, err := logical.NewValues(logical.NewSchema(fields...), vals)
	if err != nil {
		return nil, err
	}
	return s.newFrame(v), nil
}

// done is the DataFrame of a statement that returns no rows.
func (s *Session) done() *DataFrame {
	return &DataFrame{s: s, plan: logical.NewEmptyRelation(false, nil), noRows: true}
}
