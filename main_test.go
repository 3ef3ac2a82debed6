package quiver_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the package's tests leave no goroutine running: the
// sessions' standalone clusters, the connections to a cluster's scheduler
// and executors, and the readers of the test clusters' process logs must
// all end by the time the tests do. It then removes the quiver binary the
// cluster tests built (quiverBinary), which outlives any one test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
		os.Exit(code)
	}))
}
