package cache

import "github.com/quiverdb/quiver/qerr"

// TableOption marks an entry that holds part of a memory table's rows on
// the executors (its value the table's name). Such data is the table
// itself, not a copy of anything: it is never computed again, never stale,
// and never expires (ttl 0); a read finding it lost fails, naming the table.
const TableOption = "memory_table"

// IsTable reports whether opts mark a memory table's entry.
func IsTable(opts map[string]string) bool { return opts[TableOption] != "" }

func checkTableOption(o map[string]string) error {
	if v, ok := o[TableOption]; ok && v == "" {
		return qerr.Planf("cache: option %s needs the table's name", TableOption)
	}
	return nil
}
