package quiver_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/quiverdb/quiver"

// allowed lists, per package, the packages of this module it may depend on
// (transitively), from DESIGN.md §2.
var allowed = map[string][]string{
	"qerr":              {},
	"catalog":           {"qerr"},
	"format":            {"qerr"},
	"logical":           {"catalog", "qerr"},
	"logical/optimizer": {"logical", "catalog", "qerr"},
	"sql":               {"logical", "catalog", "qerr"},
	"physical":          {"qerr"},
	"physical/planner":  {"logical", "physical", "catalog", "qerr"},
	"exec":              {"physical", "exec/eval", "qerr"},
	"exec/eval":         {"physical", "qerr"},
	"settings":          {"physical", "qerr"},
	"cache":             {"physical", "settings", "qerr"},
	"logical/codec":     {"logical", "catalog", "rpc", "arrowpb", "qerr"},
	"physical/codec":    {"physical", "rpc", "arrowpb", "qerr"},
	"arrowpb":           {"rpc", "qerr"},
	"physical/stage":    {"physical", "qerr"},
	"rpc":               {},
	"executor":          {"exec", "exec/eval", "physical", "physical/codec", "arrowpb", "rpc", "settings", "qerr"},
	"scheduler":         {"physical", "physical/planner", "physical/stage", "physical/codec", "logical", "logical/codec", "arrowpb", "catalog", "cache", "rpc", "settings", "qerr"},
}

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
		for _, a := range ok {
			allow[a] = true
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, bad := range forbiddenExternal[pkg] {
				if strings.HasPrefix(dep, bad) {
					t.Errorf("%s depends on %s, which DESIGN.md §2 forbids", pkg, dep)
				}
			}
			if dep == module {
				t.Errorf("%s depends on the root package", pkg)
				continue
			}
			rel, ours := strings.CutPrefix(dep, module+"/")
			if ours && !allow[rel] {
				t.Errorf("%s depends on %s; allowed: %v", pkg, rel, ok)
			}
		}
	}
}
