// Package memcheck gives tests a checked Arrow allocator that fails the
// test unless every byte it handed out was freed by the time the test
// ends. It imports nothing of this module, so every package's tests (the
// ones exec/exectest depends on included) can use it.
package memcheck

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// New returns a checked allocator over the default one and registers a
// cleanup that fails t unless all were freed.
func New(t testing.TB) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // lists each leaked allocation with where it was made
	return mem
}
