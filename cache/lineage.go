package cache

import (
	"slices"
	"strings"

	"github.com/quiverdb/quiver/qerr"
)

// Source is one input an entry was built from, with the fingerprint it had
// when the build was claimed: a file of a file table (path, size,
// modification time, and for a Parquet file its footer's length and row
// count, which tell a file rewritten in place apart even when its size and
// modification time come out the same), or a memory table (its version). The lineage of an
// entry is every source of its plan, through views and the inputs of the
// caches it reads, so a change under a nested cache makes the outer one
// stale too.
type Source struct {
	// Table is the name of the table the source belongs to, for messages.
	Table string `json:"table"`
	// Path is the file's path; "" for a memory table.
	Path string `json:"path,omitempty"`
	// Size and ModTime (Unix nanoseconds) are the file's; Missing is set
	// when the file could not be stat'ed.
	Size    int64 `json:"size,omitempty"`
	ModTime int64 `json:"mod_time,omitempty"`
	Missing bool  `json:"missing,omitempty"`
	// FooterLen and Rows are a Parquet file's footer length and the row
	// count its footer gives (Rows -1 when the footer does not decode);
	// both 0 for other files.
	FooterLen int64 `json:"footer_len,omitempty"`
	Rows      int64 `json:"rows,omitempty"`
	// Version is a memory table's version.
	Version uint64 `json:"version,omitempty"`
}

// same reports whether s and o fingerprint the same data.
func (s Source) same(o Source) bool { return s == o }

// Changed compares an entry's recorded lineage with the current one and
// returns the names of the tables whose sources differ (a changed, added or
// removed file, or a new memory version), sorted; nil if nothing changed.
func Changed(recorded, current []Source) []string {
	id := func(s Source) string { return s.Table + "\x00" + s.Path }
	rec := make(map[string]Source, len(recorded))
	for _, s := range recorded {
		rec[id(s)] = s
	}
	var out []string
	seen := make(map[string]bool, len(current))
	for _, s := range current {
		seen[id(s)] = true
		if r, ok := rec[id(s)]; !ok || !r.same(s) {
			out = append(out, s.Table)
		}
	}
	for _, s := range recorded {
		if !seen[id(s)] {
			out = append(out, s.Table)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// StaleReason renders changed tables as the reason a cache line gives:
// "lineitem changed", "a, b changed".
func StaleReason(tables []string) string {
	if len(tables) == 0 {
		return ""
	}
	return strings.Join(tables, ", ") + " changed"
}

// ConsistencyOption is the entry option that says what a hit does when a
// source changed: ConsistencyStrict (the default) invalidates and rebuilds
// the entry; ConsistencySnapshot keeps serving the data it holds and marks
// the entry stale.
const (
	ConsistencyOption   = "consistency"
	ConsistencyStrict   = "strict"
	ConsistencySnapshot = "snapshot"
)

// Consistency returns opts' consistency option (strict when unset), or an
// error naming the allowed values.
func Consistency(opts map[string]string) (string, error) {
	v, ok := opts[ConsistencyOption]
	if !ok {
		return ConsistencyStrict, nil
	}
	switch strings.ToLower(v) {
	case ConsistencyStrict:
		return ConsistencyStrict, nil
	case ConsistencySnapshot:
		return ConsistencySnapshot, nil
	}
	return "", qerr.Planf("cache: option %s must be %q or %q, got %q", ConsistencyOption, ConsistencyStrict, ConsistencySnapshot, v)
}

// Options are the entry options a cache accepts, each with its check: the
// one list CACHE TABLE and the scheduler validate against.
var Options = map[string]func(map[string]string) error{
	TTLOption: func(o map[string]string) error { _, _, err := ParseTTL(o); return err },
	ConsistencyOption: func(o map[string]string) error {
		_, err := Consistency(o)
		return err
	},
	ScopeOption: func(o map[string]string) error {
		_, err := Scope(o)
		return err
	},
	TableOption: checkTableOption,
	SortByOption: func(o map[string]string) error {
		_, err := SortBy(o)
		return err
	},
}

// OptionNames lists Options' keys, sorted, for error messages.
func OptionNames() string {
	names := make([]string, 0, len(Options))
	for k := range Options {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
