package quiver

import (
	"context"
	"errors"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/quiverdb/quiver/arrowpb"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// CacheInfo describes one cache entry of a session (SHOW CACHES).
type CacheInfo struct {
	Name    string // the CACHE TABLE name, "" for df.Cache()
	CacheID string
	// State is lazy (declared, not built), pending, materialized, or stale
	// (materialized, kept with consistency 'snapshot' after a source
	// changed: Stale says which).
	State string
	Stale string
	// Shared counts the other caches (of any session) holding the same
	// data: one copy on disk, deleted with the last holder.
	Shared int
	// Scope is session or global (OPTIONS ('scope' 'global')): a global
	// entry outlives its session; Global is set for one of the tenant's
	// global name space, kept after the session that made it closed.
	Scope      string
	Global     bool
	Partitions int
	Rows       int64
	Bytes      int64
	Executors  []string
	Hits       int64
	Created    time.Time
	LastHit    time.Time
}

// CacheEvent is what one query did with one cache it read.
type CacheEvent struct {
	Name    string
	CacheID string
	// Outcome is hit, miss (built by this query), pending (waited for
	// another's build), stale (a source changed: rebuilt by this query),
	// partial (partitions lost with an executor: only those rebuilt by this
	// query, or the one it waited for) or dropped (its data went with a
	// session the scheduler closed).
	Outcome    string
	Partitions int
	Bytes      int64
	// Reason says why: for stale, the tables that changed ("lineitem
	// changed"); for partial, the partitions lost; for a hit on a snapshot entry whose sources changed,
	// "stale snapshot: ...".
	Reason string
}

func (e CacheEvent) String() string {
	name := e.Name
	if name == "" {
		name = e.CacheID
	}
	if e.Outcome == "dropped" {
		return fmt.Sprintf("cache: dropped %s (%s)", name, e.Reason)
	}
	if e.Outcome == "stale" {
		return fmt.Sprintf("cache: stale %s (%s; rebuilt: %d partitions, %s)", name, e.Reason, e.Partitions, physical.FormatBytes(e.Bytes))
	}
	if e.Outcome == "partial" {
		return fmt.Sprintf("cache: partial %s (%s; those rebuilt: %d partitions, %s)", name, e.Reason, e.Partitions, physical.FormatBytes(e.Bytes))
	}
	line := fmt.Sprintf("cache: %s %s (%d partitions, %s)", e.Outcome, name, e.Partitions, physical.FormatBytes(e.Bytes))
	if e.Reason != "" {
		line += " " + e.Reason
	}
	return line
}

// CacheStats are the scheduler's cache counters (over all sessions).
type CacheStats struct {
	Hits, Misses, Materializations, Aborts int64
	Invalidations                          map[string]int64 // by cause: executor_lost, session_closed, uncache, evicted, fetch_failed
	BytesRead                              int64
	// Partials counts entries an executor loss left partial; Repairs the
	// builds of only their lost partitions that made them whole again.
	Partials, Repairs int64
}

func (st CacheStats) String() string {
	causes := make([]string, 0, len(st.Invalidations))
	for c, n := range st.Invalidations {
		causes = append(causes, fmt.Sprintf("%s=%d", c, n))
	}
	sort.Strings(causes)
	return fmt.Sprintf("hits=%d misses=%d materializations=%d aborts=%d invalidations[%s] bytes_read=%d partials=%d repairs=%d",
		st.Hits, st.Misses, st.Materializations, st.Aborts, strings.Join(causes, " "), st.BytesRead, st.Partials, st.Repairs)
}

// CacheStats returns the scheduler's cache counters.
func (s *Session) CacheStats(ctx context.Context) (CacheStats, error) {
	_, st, err := s.listCaches(ctx)
	return st, err
}

// validateCacheOptions checks CACHE TABLE's OPTIONS against the cache's one
// list (cache.Options).
func validateCacheOptions(name string, opts map[string]string) error {
	for k, v := range opts {
		check, ok := cache.Options[strings.ToLower(k)]
		if !ok {
			return qerr.Planf("CACHE TABLE %s: unknown option %q (known: %s)", name, k, cache.OptionNames())
		}
		if err := check(map[string]string{strings.ToLower(k): v}); err != nil {
			return qerr.Planf("CACHE TABLE %s: option %s: %w", name, k, err)
		}
	}
	return nil
}

// checkSortBy checks that the sort_by option (cache.SortByOption), if
// any, names columns of schema, the cache's.
func checkSortBy(what string, opts map[string]string, schema *arrow.Schema) error {
	for k, v := range opts {
		if !strings.EqualFold(k, cache.SortByOption) {
			continue
		}
		cols, err := cache.SortBy(map[string]string{cache.SortByOption: v})
		if err != nil {
			return qerr.Planf("%s: %w", what, err)
		}
		names := make([]string, schema.NumFields())
		for i, f := range schema.Fields() {
			names[i] = f.Name
		}
		for _, c := range cols {
			if _, err := cache.SortColumnIndex(c.Name, names); err != nil {
				return qerr.Planf("%s: %w", what, err)
			}
		}
	}
	return nil
}

func (s *Session) needScheduler(what string) error {
	if s.remote == nil {
		return qerr.NotImplementedf("%s: the dataset cache lives on the scheduler, and this session runs locally (WithLocalExecution)", what)
	}
	return nil
}

// cacheTable runs CACHE [LAZY] TABLE. Eager caching builds the entry now; if
// that fails, nothing is left: no cache mark, no view, no entry.
func (s *Session) cacheTable(ctx context.Context, st *sql.CacheTable) (*DataFrame, error) {
	if err := s.needScheduler("CACHE TABLE"); err != nil {
		return nil, err
	}
	if err := validateCacheOptions(st.Name, st.Options); err != nil {
		return nil, err
	}
	s.sweepOrphans(ctx)
	if _, ok := s.cat.Cached(st.Name); ok {
		return nil, qerr.Planf("table %q is already cached; UNCACHE TABLE it first", st.Name)
	}
	var input logical.Plan
	ownsView := false
	switch {
	case st.Plan != nil:
		if err := s.cat.RegisterView(&catalog.View{Name: st.Name, SQL: st.SQL, Schema: st.Plan.Schema().Arrow()}, false); err != nil {
			return nil, err
		}
		ownsView = true
		input = logical.NewSubqueryAlias(st.Plan, st.Name)
	default:
		if t, ok := s.cat.Table(st.Name); ok {
			input = logical.NewScan(t, t.Name)
		} else if _, ok := s.cat.View(st.Name); ok {
			s.mu.Lock()
			p, err := s.planner.PlanQuery("SELECT * FROM " + quoteIdent(st.Name))
			s.mu.Unlock()
			if err != nil {
				return nil, err
			}
			input = p
		} else {
			return nil, qerr.Planf("CACHE TABLE: table %q not found", st.Name)
		}
	}
	if err := checkSortBy("CACHE TABLE "+st.Name, st.Options, input.Schema().Arrow()); err != nil {
		if ownsView {
			s.cat.DropView(st.Name, true)
		}
		return nil, err
	}
	node := &logical.Cache{CacheID: uuid.NewString(), SessionID: s.id, Input: input, Options: st.Options, Name: st.Name}
	undo := func() {
		s.cat.RemoveCached(st.Name)
		if ownsView {
			s.cat.DropView(st.Name, true)
		}
	}
	if err := s.cat.SetCached(&catalog.Cached{Name: st.Name, CacheID: node.CacheID, Plan: node, Lazy: st.Lazy, OwnsView: ownsView,
		Deps: st.Deps, SQL: st.SQL, Options: st.Options}); err != nil {
		undo()
		return nil, err
	}
	if st.Lazy {
		return s.done(), nil
	}
	// Build it now: a count over the cache materializes it and reads little back.
	count, err := logical.NewAggregate(node, nil, []logical.Expr{&logical.AggExpr{Func: logical.AggCount}})
	if err == nil {
		_, err = s.newFrame(count).Count(ctx)
	}
	if err != nil {
		undo()
		s.forgetEntry(ctx, node.CacheID) // in case the build left a pending or partial entry
		return nil, err
	}
	return s.done(), nil
}

// uncacheID removes an entry on the scheduler, deleting its files. When ctx
// ends first, the error is ctx's.
func (s *Session) uncacheID(ctx context.Context, id string) (bool, error) {
	return s.removeEntry(ctx, id, false)
}

// removeEntry removes an entry on the scheduler; rebuild keeps its id
// usable (REFRESH CACHE), otherwise the scheduler retires the id.
func (s *Session) removeEntry(ctx context.Context, id string, rebuild bool) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := s.remote.client.Uncache(cctx, &rpc.UncacheRequest{SessionId: s.id, CacheId: id, Rebuild: rebuild})
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, qerr.IOf("uncache: %w", err)
	}
	return resp.Removed, nil
}

// cleanupCtx is for removing entries nobody will use again (a failed build,
// a dropped table): it outlives a canceled statement, so that its cache
// files do not stay behind, but not a dead scheduler.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

func (s *Session) uncacheTable(ctx context.Context, st *sql.UncacheTable) (*DataFrame, error) {
	if err := s.needScheduler("UNCACHE TABLE"); err != nil {
		return nil, err
	}
	s.sweepOrphans(ctx)
	ct, ok := s.cat.Cached(st.Name)
	if !ok {
		g, found, err := s.globalCache(ctx, st.Name)
		if err != nil {
			return nil, err
		}
		if found && st.Explain {
			return s.table([]string{"name", "cache_id", "removes"}, [][]string{{g.Name, g.CacheID, "global cache"}})
		}
		if found {
			if _, err := s.uncacheID(ctx, g.CacheID); err != nil {
				return nil, err
			}
			return s.done(), nil
		}
		if st.IfExists {
			return s.done(), nil
		}
		return nil, qerr.Planf("UNCACHE TABLE: %q is not cached", st.Name)
	}
	deps := s.cat.Dependents(st.Name)
	if len(deps) > 0 && !st.Cascade && !st.Explain {
		names := make([]string, len(deps))
		for i, d := range deps {
			names[i] = d.Name
		}
		return nil, qerr.Planf("UNCACHE TABLE %s: the caches %s read it; UNCACHE TABLE %s CASCADE removes them too",
			st.Name, strings.Join(names, ", "), st.Name)
	}
	// What goes: the readers first (they hold the entry's data in their
	// own plans), then the table itself.
	victims := append(deps, ct)
	if st.Explain {
		rows := make([][]string, len(victims))
		for i, v := range victims {
			what := "cache"
			if v.OwnsView {
				what = "cache and its view"
			}
			rows[i] = []string{v.Name, v.CacheID, what}
		}
		return s.table([]string{"name", "cache_id", "removes"}, rows)
	}
	// The names go first, all of them: the catalog is the one map from
	// names to entries, so once it has let go no query reads them, and an
	// entry the scheduler then fails to drop is an orphan the session
	// removes later (cache_names.go).
	for _, v := range victims {
		s.cat.RemoveCached(v.Name)
		if v.OwnsView {
			// CACHE TABLE t AS query made the view t: it goes with the
			// cache, so that CACHE TABLE t AS ... can run again.
			s.cat.DropView(v.Name, true)
		}
	}
	var errs []error
	for _, v := range victims {
		if err := s.forgetEntry(ctx, v.CacheID); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, qerr.IOf("UNCACHE TABLE %s: uncached, but the scheduler did not confirm deleting the files (the session retries with its next cache statement): %w",
			st.Name, errors.Join(errs...))
	}
	return s.done(), nil
}

// globalCache finds the tenant's global entry of a name this session
// does not cache (UNCACHE TABLE of it removes that entry).
func (s *Session) globalCache(ctx context.Context, name string) (CacheInfo, bool, error) {
	infos, _, err := s.listCaches(ctx)
	if err != nil {
		return CacheInfo{}, false, err
	}
	for _, c := range infos {
		if c.Global && strings.EqualFold(c.Name, name) {
			return c, true, nil
		}
	}
	return CacheInfo{}, false, nil
}

// Uncache removes the cache entry df.Cache() made (deleting its files on
// the executors). df must be a DataFrame returned by Cache. If ctx ends
// before the scheduler answers, Uncache returns ctx's error and the session
// still names the entry, so that Uncache can be called again.
func (s *Session) Uncache(ctx context.Context, df *DataFrame) error {
	if err := s.needScheduler("Uncache"); err != nil {
		return err
	}
	if df.err != nil {
		return df.err
	}
	c, ok := df.plan.(*logical.Cache)
	if !ok {
		return qerr.Planf("Uncache: the DataFrame is not cached (use the DataFrame Cache returned)")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := s.uncacheID(ctx, c.CacheID); err != nil {
		return err
	}
	for _, ct := range s.cat.AllCached() {
		if ct.CacheID == c.CacheID {
			s.cat.RemoveCached(ct.Name)
		}
	}
	return nil
}

// ClearCache removes every cache entry of the session (CLEAR CACHE).
func (s *Session) ClearCache(ctx context.Context) error {
	if err := s.needScheduler("CLEAR CACHE"); err != nil {
		return err
	}
	var ids []string
	for _, ct := range s.cat.AllCached() {
		s.cat.RemoveCached(ct.Name)
		ids = append(ids, ct.CacheID)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if keep := s.segmentIDs(); len(keep) > 0 {
		return s.clearCachesKeepingTables(cctx, keep)
	}
	if _, err := s.remote.client.ClearCaches(cctx, &rpc.ClearCachesRequest{SessionId: s.id}); err != nil {
		s.addOrphans(ids...)
		return qerr.IOf("clear cache: %w", err)
	}
	s.clearOrphans()
	return nil
}

// Caches lists the session's cache entries: built or being built on the
// scheduler, and CACHE LAZY TABLE names not built yet (state lazy).
func (s *Session) Caches(ctx context.Context) ([]CacheInfo, error) {
	out, _, err := s.listCaches(ctx)
	return out, err
}

func (s *Session) listCaches(ctx context.Context) ([]CacheInfo, CacheStats, error) {
	if err := s.needScheduler("SHOW CACHES"); err != nil {
		return nil, CacheStats{}, err
	}
	s.sweepOrphans(ctx)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := s.remote.client.ListCaches(cctx, &rpc.ListCachesRequest{SessionId: s.id})
	if err != nil {
		return nil, CacheStats{}, qerr.IOf("list caches: %w", err)
	}
	var stats CacheStats
	if st := resp.Stats; st != nil {
		stats = CacheStats{Hits: st.Hits, Misses: st.Misses, Materializations: st.Materializations, Aborts: st.Aborts, Invalidations: st.Invalidations, BytesRead: st.BytesRead,
			Partials: st.Partials, Repairs: st.Repairs}
	}
	// Names come from the catalog: a cache's own, or for a segment of a
	// memory table held on the executors the table's. The scheduler's name
	// of an entry is a label for its logs and events, except for a global
	// entry: the tenant's global name space is the scheduler's.
	names := map[string]string{}
	for _, ct := range s.cat.AllCached() {
		names[ct.CacheID] = ct.Name
	}
	tables, isView := s.cat.Names()
	for i, n := range tables {
		if t, ok := s.cat.Table(n); ok && !isView[i] && t.OnExecutors {
			for _, id := range t.Segments {
				names[id] = n
			}
		}
	}
	orphans := s.orphanSet()
	seen := map[string]bool{}
	var out []CacheInfo
	for _, c := range resp.Caches {
		if orphans[c.CacheId] {
			continue // no longer named, being removed
		}
		info := CacheInfo{
			Name: names[c.CacheId], CacheID: c.CacheId, State: c.State, Partitions: int(c.Partitions), Rows: c.Rows,
			Bytes: c.Bytes, Executors: c.Executors, Hits: c.Hits, Stale: c.Stale, Shared: int(c.Shared),
			Scope: c.Scope,
		}
		_, info.Global = cache.GlobalTenant(c.SessionId)
		if info.Name == "" && info.Global {
			info.Name = c.Name
		}
		if c.State == "materialized" && (c.Stale != "" || c.Check == "stale") {
			// A snapshot entry marked stale, or one whose files changed
			// since (a strict one is rebuilt by the next query).
			info.State = "stale"
			if info.Stale == "" {
				info.Stale = c.Reason
			}
		}
		if c.CreatedUnixMs > 0 {
			info.Created = time.UnixMilli(c.CreatedUnixMs)
		}
		if c.LastHitUnixMs > 0 {
			info.LastHit = time.UnixMilli(c.LastHitUnixMs)
		}
		seen[c.CacheId] = true
		out = append(out, info)
	}
	for _, ct := range s.cat.AllCached() {
		if !seen[ct.CacheID] {
			opts := map[string]string{}
			for k, v := range ct.Options {
				opts[strings.ToLower(k)] = v
			}
			scope, _ := cache.Scope(opts)
			out = append(out, CacheInfo{Name: ct.Name, CacheID: ct.CacheID, State: "lazy", Scope: scope})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, stats, nil
}

// showCaches is SHOW CACHES: a row per entry, then a "totals" row whose
// executors column carries the scheduler's counters.
func (s *Session) showCaches(ctx context.Context) (*DataFrame, error) {
	infos, stats, err := s.listCaches(ctx)
	if err != nil {
		return nil, err
	}
	ts := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	rows := make([][]any, len(infos))
	for i, c := range infos {
		rows[i] = []any{c.Name, c.CacheID, c.State, int64(c.Partitions), c.Rows, c.Bytes, strings.Join(c.Executors, ","), c.Hits, ts(c.Created), ts(c.LastHit), int64(c.Shared), c.Scope}
	}
	var bytes int64
	for _, c := range infos {
		bytes += c.Bytes
	}
	rows = append(rows, []any{nil, nil, "totals", nil, nil, bytes, stats.String(), stats.Hits, nil, nil, nil, nil})
	return s.typedTable([]logical.Field{
		{Name: "name", Type: logical.String, Nullable: true}, {Name: "cache_id", Type: logical.String, Nullable: true}, {Name: "state", Type: logical.String},
		{Name: "partitions", Type: logical.Int64, Nullable: true}, {Name: "rows", Type: logical.Int64, Nullable: true}, {Name: "bytes", Type: logical.Int64},
		{Name: "executors", Type: logical.String}, {Name: "hits", Type: logical.Int64},
		{Name: "created", Type: logical.String, Nullable: true}, {Name: "last_hit", Type: logical.String, Nullable: true},
		{Name: "shared", Type: logical.Int64, Nullable: true}, {Name: "scope", Type: logical.String, Nullable: true},
	}, rows)
}

// typedTable returns a DataFrame over literal rows (nil is NULL).
func (s *Session) typedTable(fields []logical.Field, rows [][]any) (*DataFrame, error) {
	vals := make([][]logical.Expr, len(rows))
	for i, r := range rows {
		vals[i] = make([]logical.Expr, len(r))
		for j, v := range r {
			if v == nil {
				vals[i][j] = &logical.Literal{Type: fields[j].Type}
			} else {
				vals[i][j] = logical.Lit(v)
			}
		}
	}
	v, err := logical.NewValues(logical.NewSchema(fields...), vals)
	if err != nil {
		return nil, err
	}
	return s.newFrame(v), nil
}

// cacheStates maps cache ids to their registry state for EXPLAIN.
func (s *Session) cacheStates(ctx context.Context) map[string]*rpc.CacheInfo {
	out := map[string]*rpc.CacheInfo{}
	if s.remote == nil {
		return out
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := s.remote.client.ListCaches(cctx, &rpc.ListCachesRequest{SessionId: s.id})
	if err != nil {
		return out
	}
	return cacheInfos(resp.Caches, resp.Removed)
}

// cacheInfos indexes a session's entries by cache id; a live entry wins
// over a removed one of the same id.
func cacheInfos(live, removed []*rpc.CacheInfo) map[string]*rpc.CacheInfo {
	out := map[string]*rpc.CacheInfo{}
	for _, c := range removed {
		out[c.CacheId] = c
	}
	for _, c := range live {
		out[c.CacheId] = c
	}
	return out
}

// markCaches appends each Cache line of an indented plan with what a query
// would do with it now, after the checks the query makes (live executors,
// changed files): hit, pending (being built), stale (a source changed:
// rebuilt, or served as it is with consistency 'snapshot') or miss, with
// the reason when it is not a hit.
func markCaches(plan string, states map[string]*rpc.CacheInfo) string {
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		j := strings.Index(l, "Cache: ")
		k := strings.Index(l, "id=")
		if j < 0 || k < 0 {
			continue
		}
		id := strings.Fields(l[k+3:])[0]
		info := states[id]
		mark := info.GetCheck()
		reason := info.GetReason()
		if mark == "" {
			mark, reason = "miss", "never built"
		}
		if reason != "" {
			mark += ": " + reason
		}
		lines[i] = l + " [" + mark + "]"
	}
	return strings.Join(lines, "\n")
}

// planGlobalCache plans src again when planning it failed with planErr
// because a name is unknown and the session's tenant has a global cache of
// that name (each unknown name in turn, up to maxGlobalRefs): the session's
// own tables, views and caches always win, so a global entry is only the
// last resort of a query or its EXPLAIN (never of DDL or DML). Otherwise it
// returns planErr as it was.
func (s *Session) planGlobalCache(ctx context.Context, src sql.Source, planErr error) (sql.Statement, error) {
	if s.remote == nil {
		return nil, planErr
	}
	var refs []*logical.Cache
	err := planErr
	for len(refs) < maxGlobalRefs {
		var unknown *sql.UnknownTableError
		if !errors.As(err, &unknown) {
			return nil, planErr
		}
		name := unknown.Name
		ref, ok := s.globalCacheRef(ctx, name)
		if !ok {
			return nil, planErr
		}
		refs = append(refs, ref)
		var stmt sql.Statement
		if stmt, err = s.planWithRefs(src, refs); err == nil {
			switch stmt.(type) {
			case *sql.Query, *sql.Explain:
				return stmt, nil
			}
			return nil, planErr
		}
	}
	return nil, planErr
}

// maxGlobalRefs bounds the global caches one statement reads by name.
const maxGlobalRefs = 16

// planWithRefs plans src with refs marked as cached names. The marks live
// only while it is planned, so a table or view the session creates later
// under such a name is never shadowed by one.
func (s *Session) planWithRefs(src sql.Source, refs []*logical.Cache) (sql.Statement, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	var set []string
	defer func() {
		for _, name := range set {
			s.cat.RemoveCached(name)
		}
	}()
	for _, ref := range refs {
		if err := s.cat.SetCached(&catalog.Cached{Name: ref.Name, CacheID: ref.CacheID, Plan: ref}); err != nil {
			return nil, err
		}
		set = append(set, ref.Name)
	}
	return s.planner.Plan(src)
}

// globalCacheRef returns a Cache node reading the tenant's global cache
// name (case-insensitive) by its key; its input only carries the schema
// and is never run: the scheduler reads the entry or fails the query.
func (s *Session) globalCacheRef(ctx context.Context, name string) (*logical.Cache, bool) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := s.remote.client.ListCaches(cctx, &rpc.ListCachesRequest{SessionId: s.id})
	if err != nil {
		return nil, false
	}
	for _, c := range resp.GetCaches() {
		if _, global := cache.GlobalTenant(c.GetSessionId()); !global || !strings.EqualFold(c.GetName(), name) || len(c.GetSchema()) == 0 {
			continue
		}
		as, err := arrowpb.DecodeSchema(c.GetSchema())
		if err != nil {
			return nil, false
		}
		return &logical.Cache{CacheID: c.GetCacheId(), SessionID: c.GetSessionId(), Name: c.GetName(),
			Input: logical.NewEmptyRelation(false, logical.FromArrow(c.GetName(), as))}, true
	}
	return nil, false
}
