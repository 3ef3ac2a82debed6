package executor_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/executor"
)

// TestRegisterSweepsOrphans: an executor started on a work dir deletes the
// job directories the scheduler does not name live, and does so again when
// it registers anew (after being lost, its cleanups were missed).
func TestRegisterSweepsOrphans(t *testing.T) {
	s := newFakeScheduler()
	s.live = []string{"kept-job"}
	addr := startScheduler(t, s)
	work := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(work, p), 0o755); err != nil {
			t.Fatal(err)
		}
		for q := p; q != "."; q = filepath.Dir(q) {
			if err := os.Chtimes(filepath.Join(work, q), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("old-job/1/0")
	mk("kept-job/2/0")
	startExecutor(t, addr, memcheck.New(t), func(c *executor.Config) { c.WorkDir = work })
	if _, err := os.Stat(filepath.Join(work, "old-job")); !os.IsNotExist(err) {
		t.Errorf("old-job survived the start: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "kept-job", "2", "0")); err != nil {
		t.Errorf("kept-job: %v", err)
	}
	// Lost and back: the scheduler now names nothing live.
	mk("missed-cleanup/1/0")
	s.mu.Lock()
	s.live, s.reregister = nil, true
	s.mu.Unlock()
	<-s.registered // the start's
	select {
	case <-s.registered:
	case <-time.After(10 * time.Second):
		t.Fatal("no re-registration")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, e1 := os.Stat(filepath.Join(work, "missed-cleanup"))
		_, e2 := os.Stat(filepath.Join(work, "kept-job"))
		if os.IsNotExist(e1) && os.IsNotExist(e2) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after re-registration: %v %v", e1, e2)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
