package eval

import (
	"testing"

	"github.com/quiverdb/quiver/functions"
)

// TestKernelsMatchRegistry: every scalar function of the registry that the
// SQL front end does not lower away has a kernel here, and every kernel
// belongs to such a function.
func TestKernelsMatchRegistry(t *testing.T) {
	want := map[string]bool{}
	for _, f := range functions.All() {
		if f.Kind == functions.Scalar && !f.Lowered {
			want[f.Name] = true
			if kernels[f.Name] == nil {
				t.Errorf("scalar function %s has no kernel", f.Name)
			}
		}
	}
	for name := range kernels {
		if !want[name] {
			t.Errorf("kernel %s belongs to no registered scalar function", name)
		}
	}
}
