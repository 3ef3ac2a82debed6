package quiver_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/quiverdb/quiver"

// allowed lists, per package, the packages of this module it may depend on
// (transitively), from ARCHITECTURE.md §1.
var allowed = map[string][]string{
	"qerr":                          {},
	"functions":                     {"qerr"},
	"catalog":                       {"qerr"},
	"format":                        {"qerr"},
	"logical":                       {"catalog", "functions", "qerr"},
	"logical/optimizer":             {"logical", "catalog", "functions", "qerr"},
	"sql":                           {"logical", "catalog", "functions", "qerr"},
	"physical":                      {"qerr"},
	"physical/planner":              {"logical", "physical", "catalog", "functions", "qerr"},
	"exec":                          {"physical", "exec/...", "format", "functions", "qerr"},
	"exec/aggregate":                {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "exec/hashtable", "exec/spill", "functions", "qerr"},
	"exec/join":                     {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "exec/hashtable", "exec/spill", "functions", "qerr"},
	"exec/scan":                     {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "exec/scan/parquet", "functions", "qerr"},
	"exec/scan/parquet":             {"physical", "exec/execop", "exec/filemap", "qerr"},
	"exec/shuffle":                  {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "functions", "qerr"},
	"exec/sort":                     {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "exec/spill", "functions", "qerr"},
	"exec/spill":                    {"physical", "exec/execop", "exec/filemap", "functions", "qerr"},
	"exec/write":                    {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "exec/hashtable", "format", "functions", "qerr"},
	"exec/window":                   {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "exec/sort", "exec/spill", "functions", "qerr"},
	"exec/expand":                   {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "functions", "qerr"},
	"exec/hashtable":                {"physical", "exec/eval", "exec/execop", "exec/filemap", "exec/kernel", "functions", "qerr"},
	"exec/kernel":                   {"physical", "exec/eval", "exec/execop", "exec/filemap", "functions", "qerr"},
	"exec/execop":                   {"physical", "exec/filemap", "qerr"},
	"exec/filemap":                  {"qerr"},
	"exec/memcheck":                 {},
	"exec/scan/parquet/parquettest": {},
	"exec/eval":                     {"physical", "exec/filemap", "functions", "qerr"},
	"settings":                      {"physical", "qerr"},
	"cache":                         {"physical", "settings", "qerr"},
	"logical/codec":                 {"logical", "catalog", "rpc", "arrowpb", "wire", "functions", "qerr"},
	"physical/codec":                {"physical", "rpc", "arrowpb", "wire", "qerr"},
	"wire":                          {"qerr"},
	"arrowpb":                       {"rpc", "qerr"},
	"physical/stage":                {"physical", "qerr"},
	"rpc":                           {},
	"auth":                          {"qerr"},
	"internal/fngen":                {"functions", "qerr"},
	"executor":                      {"exec", "exec/...", "format", "physical", "physical/codec", "wire", "arrowpb", "rpc", "settings", "auth", "functions", "qerr"},
	"scheduler":                     {"physical", "physical/planner", "physical/stage", "physical/codec", "logical", "logical/codec", "wire", "arrowpb", "catalog", "cache", "rpc", "settings", "auth", "functions", "qerr"},
}

// everywhere are leaf packages every package may import: the calendar and
// the text forms of date and time values are one rule for the SQL front end,
// the kernels, file readers and result formatting alike.
var everywhere = []string{"temporal"}

// forbiddenExternal are modules a package must not link, even indirectly:
// an executor never links the TiDB parser.
var forbiddenExternal = map[string][]string{
	"exec":      {"github.com/pingcap/tidb"},
	"physical":  {"github.com/pingcap/tidb"},
	"logical":   {"github.com/pingcap/tidb"},
	"catalog":   {"github.com/pingcap/tidb"},
	"executor":  {"github.com/pingcap/tidb"},
	"scheduler": {"github.com/pingcap/tidb"},
}

func TestImportRules(t *testing.T) {
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-deps", module+"/"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		allow := map[string]bool{pkg: true}
		for _, a := range everywhere {
			allow[a] = true
		}
		for _, a := range ok {
			allow[a] = true
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, bad := range forbiddenExternal[pkg] {
				if strings.HasPrefix(dep, bad) {
					t.Errorf("%s depends on %s, which ARCHITECTURE.md §1 forbids", pkg, dep)
				}
			}
			if dep == module {
				t.Errorf("%s depends on the root package", pkg)
				continue
			}
			rel, ours := strings.CutPrefix(dep, module+"/")
			if ours && !permits(allow, rel) {
				t.Errorf("%s depends on %s; allowed: %v", pkg, rel, ok)
			}
		}
	}
}

// permits reports whether rel is in allow, directly or under an entry
// "dir/..." (a package tree, for packages that wire all of it together).
func permits(allow map[string]bool, rel string) bool {
	if allow[rel] {
		return true
	}
	for a := range allow {
		if dir, ok := strings.CutSuffix(a, "/..."); ok && strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}
