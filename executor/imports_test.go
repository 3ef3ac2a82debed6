package executor_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces DESIGN.md §2: an executor never links logical, sql,
// scheduler or the TiDB parser.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/quiverdb/quiver/executor").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/quiverdb/quiver"
	allowed := map[string]bool{"executor": true, "exec": true, "exec/eval": true, "physical": true, "physical/codec": true, "rpc": true, "qerr": true}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/pingcap/tidb") {
			t.Errorf("executor links %s", dep)
		}
		if dep == mod {
			t.Errorf("executor links the root package")
		}
		if rel, ours := strings.CutPrefix(dep, mod+"/"); ours && !allowed[rel] {
			t.Errorf("executor depends on %s", rel)
		}
	}
}
