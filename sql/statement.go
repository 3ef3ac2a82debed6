package sql

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
)

// Statement is one planned SQL statement. The set is closed (sealed by an
// unexported method); the session executes it.
type Statement interface{ isStatement() }

// Query is SELECT, WITH, VALUES or a UNION.
type Query struct{ Plan logical.Plan }

// CreateExternalTable is CREATE [OR REPLACE] EXTERNAL TABLE [IF NOT EXISTS].
type CreateExternalTable struct {
	Name                   string
	Columns                []arrow.Field // nil if not given
	Format                 catalog.Format
	Options                map[string]string // lower-case keys
	Location               string
	IfNotExists, OrReplace bool
}

// CreateView is CREATE [OR REPLACE] VIEW name AS query.
type CreateView struct {
	Name, SQL string // SQL is the query text
	Plan      logical.Plan
	OrReplace bool
}

// DropTable is DROP TABLE [IF EXISTS] name.
type DropTable struct {
	Name     string
	IfExists bool
}

// DropView is DROP VIEW [IF EXISTS] name.
type DropView struct {
	Name     string
	IfExists bool
}

// ShowTables is SHOW TABLES.
type ShowTables struct{}

// Describe is DESCRIBE name (or DESC name, SHOW COLUMNS FROM name), or
// DESCRIBE query when Plan is set: the columns the query returns.
type Describe struct {
	Name string
	Plan logical.Plan
}

// Explain is EXPLAIN [ANALYZE] [VERBOSE] [DISTRIBUTED] query.
type Explain struct {
	Analyze, Verbose, Distributed bool
	Plan                          logical.Plan
}

// Set is SET name = value; Name is lower-cased, Value unquoted.
type Set struct{ Name, Value string }

// ShowSetting is SHOW name (a setting); Name is lower-cased.
type ShowSetting struct{ Name string }

// ShowAll is SHOW ALL: every setting.
type ShowAll struct{}

// CacheTable is CACHE [LAZY] TABLE name [OPTIONS (...)] [[AS] query].
type CacheTable struct {
	Name    string
	Lazy    bool
	Options map[string]string
	Plan    logical.Plan // nil: cache the existing table or view Name
	SQL     string       // the query's text when Plan is set
	// Deps are the lower-cased names of the tables, views and cached names
	// the cached query reads, through views (Name itself when Plan is nil):
	// replacing or dropping one of them invalidates the cache.
	Deps []string
}

// UncacheTable is [EXPLAIN] UNCACHE TABLE [IF EXISTS] name [CASCADE].
type UncacheTable struct {
	Name     string
	IfExists bool
	// Cascade also removes the caches that read this one; without it
	// UNCACHE refuses while any does.
	Cascade bool
	// Explain lists what the statement would remove and removes nothing.
	Explain bool
}

// RefreshCache is REFRESH CACHE name: rebuild the cache now.
type RefreshCache struct{ Name string }

// ClearCache is CLEAR CACHE.
type ClearCache struct{}

// ShowCaches is SHOW CACHES.
type ShowCaches struct{}

func (*Query) isStatement()               {}
func (*CreateExternalTable) isStatement() {}
func (*CreateView) isStatement()          {}
func (*DropTable) isStatement()           {}
func (*DropView) isStatement()            {}
func (*ShowTables) isStatement()          {}
func (*Describe) isStatement()            {}
func (*Explain) isStatement()             {}
func (*Set) isStatement()                 {}
func (*ShowSetting) isStatement()         {}
func (*ShowAll) isStatement()             {}
func (*CacheTable) isStatement()          {}
func (*UncacheTable) isStatement()        {}
func (*ClearCache) isStatement()          {}
func (*ShowCaches) isStatement()          {}
func (*RefreshCache) isStatement()        {}
