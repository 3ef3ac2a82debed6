package executor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSweepOrphans: job directories nobody owns go; kept jobs, directories
// newer than the cutoff and entries not named like jobs stay.
func TestSweepOrphans(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(p string, mtime time.Time) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p, "data-0.arrow"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		for q := p; q != "."; q = filepath.Dir(q) {
			if err := os.Chtimes(filepath.Join(dir, q), mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("live-job/1/0", old)
	mk("orphan-job/2/0", old)
	mk("cache-orphan/3/1", old)
	mk("new-job/1/0", time.Now().Add(time.Hour))
	mk("not.a.job/1", old)
	if err := os.WriteFile(filepath.Join(dir, "notes"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	removed, err := sweepOrphans(dir, map[string]bool{"live-job": true}, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{"cache-orphan", "orphan-job"}) {
		t.Fatalf("removed %v", removed)
	}
	for _, p := range []string{"live-job/1/0/data-0.arrow", "new-job/1/0/data-0.arrow", "not.a.job/1", "notes"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{"orphan-job", "cache-orphan"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	// No cutoff (a start with nothing live): every job directory goes.
	removed, err = sweepOrphans(dir, nil, time.Time{}, nil)
	if err != nil || !slices.Equal(removed, []string{"live-job", "new-job"}) {
		t.Fatalf("second sweep: %v %v", removed, err)
	}
}
