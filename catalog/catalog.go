package catalog

import (
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// Format is how a table's data is stored.
type Format string

// Table formats.
const (
	Parquet Format = "parquet"
	CSV     Format = "csv"
	Arrow   Format = "arrow"
	Memory  Format = "memory"
)

// Table is a registered table. It is immutable once registered.
type Table struct {
	Name     string
	Schema   *arrow.Schema
	Format   Format
	Location string // the path given at registration; empty for Memory
	// Locations are all the paths (files, directories, globs) given at
	// registration; Location is the first. Only the registering process
	// knows them (they do not travel in plans).
	Locations []string
	Files     []string          // the data files, one partition each, sorted
	Options   map[string]string // format options, lower-case keys (delimiter, has_header, ...)
	// Partitions holds a Memory table's batches, one slice per partition. The
	// catalog owns one reference to each batch and releases it on Drop.
	Partitions [][]arrow.RecordBatch
	// OnExecutors marks a Memory table whose rows are held on a cluster's
	// executors rather than in Partitions: Segments are the cache ids of the
	// pinned outputs (one per write) that together hold its rows.
	OnExecutors bool
	Segments    []string
	// Rows is the total row count if known from metadata, else -1.
	Rows int64
	// RowGroupRows, for Parquet, parallels Files: the row count of each of
	// a file's row groups, read from the footers at registration. It lets
	// the planner split one big file into several scan partitions. Nil when
	// unknown (other formats, or a table decoded from a plan: see
	// ParquetRowGroups).
	RowGroupRows [][]int64
	// RowGroupRanges, for Parquet, parallels RowGroupRows: each row
	// group's KeyRange of each column, from the footers (a file's entry is
	// nil when unknown). PartitionRanges, for Memory, parallels Partitions:
	// each partition's KeyRange of each column. Both serve only the
	// planner's search for partition-disjoint columns; nil: none known.
	RowGroupRanges  [][][]KeyRange
	PartitionRanges [][]KeyRange
	// Distinct parallels Schema's fields: an upper bound on the number of
	// distinct values of each column, 0 when unknown (nil: none known). It
	// comes from file statistics and serves only cardinality estimates.
	Distinct []int64
	// Bounds parallels Schema's fields: the smallest and largest non-NULL
	// value of each integer-like column (a decimal's unscaled value), from
	// file statistics, Known only where every file gave them (nil: none
	// known). Like Distinct it serves only cardinality estimates.
	Bounds []KeyRange
	// Version changes with every write to the table (INSERT, DELETE,
	// TRUNCATE, CREATE OR REPLACE, BumpVersion): the catalog registers the
	// new contents under a version it has not given that name before, so
	// anything built on an older version (a cache) knows it is stale.
	Version uint64
}

// NumPartitions is the number of partitions a scan of the table produces.
func (t *Table) NumPartitions() int {
	if t.Format == Memory {
		return max(1, len(t.Partitions))
	}
	return max(1, len(t.Files))
}

// View is a named query; the session re-plans SQL at each use.
type View struct {
	Name   string
	SQL    string
	Schema *arrow.Schema
	// Plan, when set instead of SQL, is the view's logical plan (a
	// DataFrame registered with CreateView; any because catalog cannot
	// import logical): it is used as it is, not re-planned.
	Plan any
}

// Catalog holds a session's tables and views. Names are case-insensitive.
// It is safe for concurrent use.
type Catalog struct {
	mu     sync.RWMutex
	tables map[string]*Table
	views  map[string]*View
	cached map[string]*Cached
	// versions is the last Table.Version given per name; it survives a
	// drop, so a re-registered name never repeats a version.
	versions map[string]uint64
}

// Cached marks a table or view as cached by CACHE TABLE: queries naming it
// read Plan (a logical plan whose root is a Cache node; any because catalog
// cannot import logical) instead of its definition.
type Cached struct {
	Name    string
	CacheID string
	Plan    any
	Lazy    bool // declared LAZY: not built until first used
	// OwnsView is set when CACHE TABLE ... AS query created the view Name.
	OwnsView bool
	// Deps are the lower-cased names of the tables, views and cached names
	// the cached plan reads (through views): replacing or dropping one of
	// them invalidates this cache.
	Deps []string
	// SQL is the query of CACHE TABLE ... AS query ("" otherwise), kept
	// so that the cache can be planned again when a dependency changes.
	SQL     string
	Options map[string]string
}

// Dependents returns the cache marks that read name (directly or through
// other cache marks), sorted by name, name's own mark excluded.
func (c *Catalog) Dependents(name string) []*Cached {
	c.mu.RLock()
	defer c.mu.RUnlock()
	seen := map[string]bool{key(name): true}
	frontier := []string{key(name)}
	var out []*Cached
	for len(frontier) > 0 {
		n := frontier[0]
		frontier = frontier[1:]
		for k, ct := range c.cached {
			if seen[k] || !slices.Contains(ct.Deps, n) {
				continue
			}
			seen[k] = true
			out = append(out, ct)
			frontier = append(frontier, k)
		}
	}
	slices.SortFunc(out, func(a, b *Cached) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// MarkAllLazy marks every cache declaration lazy (its data is gone: it is
// built again on first use) and returns those that were not, sorted.
func (c *Catalog) MarkAllLazy() []*Cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Cached
	for _, ct := range c.cached {
		if !ct.Lazy {
			ct.Lazy = true
			out = append(out, ct)
		}
	}
	slices.SortFunc(out, func(a, b *Cached) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// BumpVersion gives the memory table name a new version (every write calls
// it) and returns it; false if name is not a table.
func (c *Catalog) BumpVersion(name string) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tables[key(name)]
	if !ok {
		return 0, false
	}
	c.versions[key(name)]++
	t.Version = c.versions[key(name)]
	return t.Version, true
}

// New returns an empty catalog.
func New() *Catalog {
	return &Catalog{tables: map[string]*Table{}, views: map[string]*View{}, cached: map[string]*Cached{}, versions: map[string]uint64{}}
}

// SetCached marks c.Name as cached; it errors if the name is already cached.
func (c *Catalog) SetCached(ct *Cached) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.cached[key(ct.Name)]; ok {
		return qerr.Planf("table %q is already cached; UNCACHE TABLE it first", ct.Name)
	}
	c.cached[key(ct.Name)] = ct
	return nil
}

// Cached returns the cache mark of a name.
func (c *Catalog) Cached(name string) (*Cached, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ct, ok := c.cached[key(name)]
	return ct, ok
}

// RemoveCached removes a name's cache mark and returns it.
func (c *Catalog) RemoveCached(name string) (*Cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, ok := c.cached[key(name)]
	delete(c.cached, key(name))
	return ct, ok
}

// AllCached returns every cache mark, sorted by name.
func (c *Catalog) AllCached() []*Cached {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*Cached, 0, len(c.cached))
	for _, ct := range c.cached {
		out = append(out, ct)
	}
	slices.SortFunc(out, func(a, b *Cached) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func key(name string) string { return strings.ToLower(name) }

// RegisterTable adds t; it errors if a table or view of that name exists,
// unless replace is set.
func (c *Catalog) RegisterTable(t *Table, replace bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(t.Name)
	if _, ok := c.views[k]; ok {
		return qerr.Planf("a view named %q already exists", t.Name)
	}
	if old, ok := c.tables[k]; ok {
		if !replace {
			return qerr.Planf("table %q already exists", t.Name)
		}
		releaseTable(old)
	}
	c.versions[k] = max(c.versions[k]+1, t.Version)
	t.Version = c.versions[k]
	c.tables[k] = t
	return nil
}

// RegisterView adds v; it errors if a table or view of that name exists, unless replace is set.
func (c *Catalog) RegisterView(v *View, replace bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key(v.Name)
	if _, ok := c.tables[k]; ok {
		return qerr.Planf("a table named %q already exists", v.Name)
	}
	if _, ok := c.views[k]; ok && !replace {
		return qerr.Planf("view %q already exists", v.Name)
	}
	c.views[k] = v
	return nil
}

// Table returns a table by name.
func (c *Catalog) Table(name string) (*Table, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[key(name)]
	return t, ok
}

// View returns a view by name.
func (c *Catalog) View(name string) (*View, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.views[key(name)]
	return v, ok
}

// DropTable removes a table; it errors if absent unless ifExists.
func (c *Catalog) DropTable(name string, ifExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.tables[key(name)]
	if !ok {
		if ifExists {
			return nil
		}
		if _, isView := c.views[key(name)]; isView {
			return qerr.Planf("%q is a view; use DROP VIEW", name)
		}
		return qerr.Planf("table %q not found", name)
	}
	delete(c.tables, key(name))
	releaseTable(t)
	return nil
}

// DropView removes a view; it errors if absent unless ifExists.
func (c *Catalog) DropView(name string, ifExists bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.views[key(name)]; !ok {
		if ifExists {
			return nil
		}
		if _, isTable := c.tables[key(name)]; isTable {
			return qerr.Planf("%q is a table; use DROP TABLE", name)
		}
		return qerr.Planf("view %q not found", name)
	}
	delete(c.views, key(name))
	return nil
}

// Names returns the sorted names of all tables and views, and whether each is a view.
func (c *Catalog) Names() (names []string, isView []bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	type entry struct {
		name string
		view bool
	}
	var es []entry
	for _, t := range c.tables {
		es = append(es, entry{t.Name, false})
	}
	for _, v := range c.views {
		es = append(es, entry{v.Name, true})
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for _, e := range es {
		names = append(names, e.name)
		isView = append(isView, e.view)
	}
	return names, isView
}

// RetainPartitions returns a memory table's partitions with one new
// reference on every batch, taken under the catalog's lock so that a
// concurrent drop cannot free them first; the caller releases each batch.
// It reports false when name is not a table.
func (c *Catalog) RetainPartitions(name string) ([][]arrow.RecordBatch, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t, ok := c.tables[key(name)]
	if !ok {
		return nil, false
	}
	out := make([][]arrow.RecordBatch, len(t.Partitions))
	for i, p := range t.Partitions {
		out[i] = make([]arrow.RecordBatch, len(p))
		for j, b := range p {
			b.Retain()
			out[i][j] = b
		}
	}
	return out, true
}

// Close releases every memory table.
func (c *Catalog) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, t := range c.tables {
		releaseTable(t)
		delete(c.tables, k)
	}
}

func releaseTable(t *Table) {
	for _, p := range t.Partitions {
		for _, b := range p {
			b.Release()
		}
	}
	t.Partitions = nil
}
