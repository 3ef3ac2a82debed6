package tpch

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the benchmark and dashboard runs leave no goroutine
// running: the sessions they open, and their standalone clusters, must be
// closed when a run ends, also when it fails.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
