package memcheck

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that keeps cleanups and failures to itself, so
// the test can run them and see whether New's check fired.
type recorder struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, args...))
}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Log(...any)          {}

func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestNewFailsOnALeak(t *testing.T) {
	r := &recorder{TB: t}
	mem := New(r)
	mem.Allocate(64) // never freed
	r.end()
	if len(r.errors) == 0 {
		t.Fatal("a leaked allocation did not fail the test")
	}
}

func TestNewPassesWhenAllIsFreed(t *testing.T) {
	r := &recorder{TB: t}
	mem := New(r)
	mem.Free(mem.Allocate(64))
	r.end()
	if len(r.errors) != 0 {
		t.Fatalf("all memory freed, yet the check failed: %v", r.errors)
	}
}
