package cache

import (
	"strings"

	"github.com/quiverdb/quiver/qerr"
)

// SortByOption is the entry option (CACHE TABLE ... OPTIONS ('sort_by'
// 'a, b DESC')) that sorts each partition of the cache by those columns
// before it is written, so that its zone maps bound narrow ranges
// (docs/design/cache-files.md).
const SortByOption = "sort_by"

// SortColumn is one column of a sort_by option.
type SortColumn struct {
	Name string
	Desc bool
}

// SortBy parses opts' sort_by option: a comma-separated list of column
// names, each optionally followed by ASC or DESC; nil when unset.
func SortBy(opts map[string]string) ([]SortColumn, error) {
	v, ok := opts[SortByOption]
	if !ok {
		return nil, nil
	}
	var out []SortColumn
	for _, part := range strings.Split(v, ",") {
		f := strings.Fields(part)
		if len(f) == 0 || len(f) > 2 {
			return nil, qerr.Planf("cache: option %s: %q is not \"column [ASC|DESC]\"", SortByOption, strings.TrimSpace(part))
		}
		c := SortColumn{Name: strings.Trim(f[0], `"`)}
		if len(f) == 2 {
			switch strings.ToUpper(f[1]) {
			case "ASC":
			case "DESC":
				c.Desc = true
			default:
				return nil, qerr.Planf("cache: option %s: %q is not \"column [ASC|DESC]\"", SortByOption, strings.TrimSpace(part))
			}
		}
		if c.Name == "" {
			return nil, qerr.Planf("cache: option %s: an empty column name", SortByOption)
		}
		out = append(out, c)
	}
	return out, nil
}

// SortColumnIndex finds name among names (exactly, else ignoring case):
// its position, or a plan error naming the column and the choices.
func SortColumnIndex(name string, names []string) (int, error) {
	for i, n := range names {
		if n == name {
			return i, nil
		}
	}
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i, nil
		}
	}
	return -1, qerr.Planf("cache: option %s: unknown column %q (columns: %s)", SortByOption, name, strings.Join(names, ", "))
}
