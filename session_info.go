package quiver

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
)

// TableInfo describes a registered table or view for people and tools (the
// REPL's \d and its tab completion).
type TableInfo struct {
	Name    string
	Kind    string // "table" or "view"
	Columns []ColumnInfo
}

// ColumnInfo is one column of a TableInfo.
type ColumnInfo struct {
	Name     string
	Type     string // the type as EXPLAIN and DESCRIBE print it, e.g. "Decimal128(15, 2)"
	Nullable bool
}

// Tables lists the session's tables and views, sorted by name. It reads a
// snapshot of the catalog: a table dropped concurrently may be missing.
func (s *Session) Tables() []TableInfo {
	names, _ := s.cat.Names()
	out := make([]TableInfo, 0, len(names))
	for _, n := range names {
		if ti, err := s.Describe(n); err == nil {
			out = append(out, ti)
		}
	}
	return out
}

// Describe returns the columns of the table or view name (case-insensitive).
func (s *Session) Describe(name string) (TableInfo, error) {
	if t, ok := s.cat.Table(name); ok {
		return TableInfo{Name: t.Name, Kind: "table", Columns: columnInfos(t.Schema)}, nil
	}
	if v, ok := s.cat.View(name); ok {
		return TableInfo{Name: v.Name, Kind: "view", Columns: columnInfos(v.Schema)}, nil
	}
	return TableInfo{}, qerr.Planf("describe: table or view %q not found", name)
}

func columnInfos(schema *arrow.Schema) []ColumnInfo {
	cols := make([]ColumnInfo, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = ColumnInfo{Name: f.Name, Type: logical.TypeString(f.Type), Nullable: f.Nullable}
	}
	return cols
}
