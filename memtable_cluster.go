package quiver

import (
	"context"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"
	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/sql"
)

// Memory tables on a cluster of separate processes. The executors cannot
// read this process's memory, so a memory table's rows live on them: every
// write (CREATE TABLE AS, INSERT, DELETE) runs as a job whose output stays
// pinned on the executors as a cache entry marked cache.TableOption (a
// segment), partitioned as the job's output; the catalog's table lists its
// segments (catalog.Table.Segments), and a query reads it as the union of
// its segments' entries. The scheduler knows where each partition lives,
// keeps the entries with its cache registry (durable with --state-dir), and
// fails a read of a segment lost with its executor, naming the table. Every
// write registers the table anew with its Version one higher, as in
// process, so caches built on it go stale.

// tablesOnExecutors reports whether this session's memory tables live on
// the executors: on a cluster of other processes, not in standalone mode,
// whose executors read this process's tables directly.
func (s *Session) tablesOnExecutors() bool { return s.remote != nil && !s.remote.standalone }

// segmentOptions are the entry options of one of table name's segments:
// marked as table data, never expiring.
func segmentOptions(name string) map[string]string {
	return map[string]string{cache.TableOption: name, cache.TTLOption: "0"}
}

// writeSegment runs plan (rows for table name of schema) as a job whose
// output stays on the executors as a new segment, and returns the
// segment's cache id and its row count. On error no segment is left.
func (s *Session) writeSegment(ctx context.Context, name string, schema *arrow.Schema, plan logical.Plan) (string, int64, error) {
	in := plan.Schema()
	if in.Len() != schema.NumFields() {
		return "", 0, qerr.Internalf("write to %q: %d columns for a table of %d", name, in.Len(), schema.NumFields())
	}
	exprs := make([]logical.Expr, in.Len())
	for i, f := range in.Fields {
		exprs[i] = &logical.Alias{Expr: &logical.Column{Qualifier: f.Qualifier, Name: f.Name}, Name: schema.Field(i).Name}
	}
	p, err := logical.NewProjection(plan, exprs)
	if err != nil {
		return "", 0, err
	}
	node := &logical.Cache{CacheID: uuid.NewString(), SessionID: s.id, Input: p, Options: segmentOptions(name), Name: name}
	count, err := logical.NewAggregate(node, nil, []logical.Expr{&logical.AggExpr{Func: logical.AggCount}})
	if err != nil {
		return "", 0, err
	}
	n, err := s.newFrame(count).scalarInt(ctx)
	if err != nil {
		s.dropSegments([]string{node.CacheID})
		return "", 0, err
	}
	return node.CacheID, n, nil
}

// scalarInt runs a query of one BIGINT row and returns its value.
func (df *DataFrame) scalarInt(ctx context.Context) (int64, error) {
	bs, err := df.Collect(ctx)
	if err != nil {
		return 0, err
	}
	defer releaseBatches(bs)
	for _, b := range bs {
		if b.NumRows() > 0 {
			if c, ok := b.Column(0).(*array.Int64); ok {
				return c.Value(0), nil
			}
		}
	}
	return 0, qerr.Internalf("count of a write: no BIGINT row in the result")
}

// dropSegments removes segments from the executors (best effort: a
// scheduler that cannot be reached keeps them until the session closes).
func (s *Session) dropSegments(ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := cleanupCtx(context.Background())
	defer cancel()
	for _, id := range ids {
		s.uncacheID(ctx, id)
	}
}

// executorTable is a memory table held on the executors.
func executorTable(name string, schema *arrow.Schema, segments []string, rows int64, version uint64) *catalog.Table {
	return &catalog.Table{Name: name, Schema: schema, Format: catalog.Memory, OnExecutors: true, Segments: segments, Rows: rows, Version: version}
}

// readTablesOnExecutors replaces every scan of a memory table held on the
// executors by the union of its segments (each a Cache node the scheduler
// lowers to a reader of the pinned entry), under the scan's pushed-down
// filters, projection and fetch. A scan of an older version of a table
// reads the current one, as stampVersions does for files.
func (s *Session) readTablesOnExecutors(lp logical.Plan) (logical.Plan, error) {
	if !s.tablesOnExecutors() {
		return lp, nil
	}
	out, _, err := logical.TransformUp(lp, func(p logical.Plan) (logical.Plan, bool, error) {
		sc, ok := p.(*logical.Scan)
		if !ok || sc.Table == nil || sc.Table.Format != catalog.Memory {
			return p, false, nil
		}
		t := sc.Table
		if cur, ok := s.cat.Table(t.Name); ok && cur.OnExecutors && cur.Schema.Equal(t.Schema) {
			t = cur
		}
		if !t.OnExecutors {
			return p, false, nil
		}
		r, err := s.segmentsScan(sc, t)
		return r, err == nil, err
	})
	return out, err
}

// segmentsScan is what scan sc of t reads on the executors.
func (s *Session) segmentsScan(sc *logical.Scan, t *catalog.Table) (logical.Plan, error) {
	full := logical.NewScan(t, sc.Qualifier)
	reads := make([]logical.Plan, len(t.Segments))
	for i, id := range t.Segments {
		reads[i] = &logical.Cache{CacheID: id, SessionID: s.id, Input: full, Options: segmentOptions(t.Name), Name: t.Name}
	}
	var p logical.Plan
	var err error
	switch len(reads) {
	case 0:
		p = logical.NewEmptyRelation(false, full.Schema())
	case 1:
		p = reads[0]
	default:
		if p, err = logical.NewUnion(reads); err != nil {
			return nil, err
		}
	}
	if len(sc.Filters) > 0 {
		if p, err = logical.NewFilter(p, logical.And(sc.Filters...)); err != nil {
			return nil, err
		}
	}
	if sc.Projection != nil {
		exprs := make([]logical.Expr, len(sc.Projection))
		for i, c := range sc.Projection {
			f := full.Schema().Fields[c]
			exprs[i] = &logical.Column{Qualifier: f.Qualifier, Name: f.Name}
		}
		if p, err = logical.NewProjection(p, exprs); err != nil {
			return nil, err
		}
	}
	if sc.Fetch >= 0 {
		p = &logical.Limit{Input: p, Fetch: sc.Fetch}
	}
	return p, nil
}

func (s *Session) createTableOnExecutors(ctx context.Context, st *sql.CreateTable) (*DataFrame, error) {
	var schema *arrow.Schema
	var segs []string
	var rows int64
	if st.Plan != nil {
		schema = st.Plan.Schema().Arrow()
		id, n, err := s.writeSegment(ctx, st.Name, schema, st.Plan)
		if err != nil {
			return nil, err
		}
		segs, rows = []string{id}, n
	} else {
		schema = arrow.NewSchema(st.Columns, nil)
	}
	version := uint64(1)
	old, hadOld := s.cat.Table(st.Name)
	if hadOld {
		version = old.Version + 1
	}
	t := executorTable(st.Name, schema, segs, rows, version)
	if err := s.cat.RegisterTable(t, st.OrReplace); err != nil {
		s.dropSegments(segs)
		return nil, err
	}
	if hadOld && old.OnExecutors {
		s.dropSegments(old.Segments)
	}
	s.invalidateCachesOf(ctx, st.Name, true)
	if st.Plan != nil {
		return s.countResult(rows)
	}
	return s.done(), nil
}

// replaceOnExecutors registers nt in place of t, unless t was dropped or
// replaced meanwhile (then the segments added are removed again), and
// removes the segments of t that nt no longer lists.
func (s *Session) replaceOnExecutors(ctx context.Context, t, nt *catalog.Table, added []string) error {
	if cur, ok := s.cat.Table(t.Name); !ok || cur != t {
		s.dropSegments(added)
		return qerr.Planf("table %q was dropped or replaced during the write", t.Name)
	}
	if err := s.cat.RegisterTable(nt, true); err != nil {
		s.dropSegments(added)
		return err
	}
	var gone []string
	for _, id := range t.Segments {
		if !slices.Contains(nt.Segments, id) {
			gone = append(gone, id)
		}
	}
	s.dropSegments(gone)
	s.invalidateCachesOf(ctx, t.Name, true)
	return nil
}

func (s *Session) insertOnExecutors(ctx context.Context, t *catalog.Table, plan logical.Plan) (*DataFrame, error) {
	id, n, err := s.writeSegment(ctx, t.Name, t.Schema, plan)
	if err != nil {
		return nil, err
	}
	nt := executorTable(t.Name, t.Schema, append(slices.Clone(t.Segments), id), t.Rows+n, t.Version+1)
	if err := s.replaceOnExecutors(ctx, t, nt, []string{id}); err != nil {
		return nil, err
	}
	return s.countResult(n)
}

func (s *Session) deleteOnExecutors(ctx context.Context, t *catalog.Table, keep logical.Plan) (*DataFrame, error) {
	id, n, err := s.writeSegment(ctx, t.Name, t.Schema, keep)
	if err != nil {
		return nil, err
	}
	nt := executorTable(t.Name, t.Schema, []string{id}, n, t.Version+1)
	if err := s.replaceOnExecutors(ctx, t, nt, []string{id}); err != nil {
		return nil, err
	}
	return s.countResult(t.Rows - n)
}

func (s *Session) truncateOnExecutors(t *catalog.Table) (*DataFrame, error) {
	nt := executorTable(t.Name, t.Schema, nil, 0, t.Version+1)
	if err := s.replaceOnExecutors(context.Background(), t, nt, nil); err != nil {
		return nil, err
	}
	return s.done(), nil
}

// segmentIDs are the cache ids of every segment of the session's tables.
func (s *Session) segmentIDs() map[string]bool {
	ids := map[string]bool{}
	names, isView := s.cat.Names()
	for i, n := range names {
		if isView[i] {
			continue
		}
		if t, ok := s.cat.Table(n); ok && t.OnExecutors {
			for _, id := range t.Segments {
				ids[id] = true
			}
		}
	}
	return ids
}

// clearCachesKeepingTables removes the session's cache entries one by one,
// all but its memory tables' segments (CLEAR CACHE removes caches, never
// a table's rows).
func (s *Session) clearCachesKeepingTables(ctx context.Context, keep map[string]bool) error {
	infos, _, err := s.listCaches(ctx)
	if err != nil {
		return err
	}
	for _, in := range infos {
		if in.State == "lazy" || keep[in.CacheID] {
			continue
		}
		if _, err := s.uncacheID(ctx, in.CacheID); err != nil {
			return qerr.IOf("clear cache: %w", err)
		}
	}
	return nil
}
