package join_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The grace join drains its build side's partitions in goroutines of its
// own: none may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
