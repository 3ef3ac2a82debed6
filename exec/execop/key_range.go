package execop

import (
	"sync"

	"github.com/quiverdb/quiver/physical"
)

// KeyRange is what a hash join's finished build side tells a scan below its
// probe side: every probe row that can meet a build row has, in output
// column Col of the scan, an integer value in [Min, Max]; Empty means no
// build row has a non-NULL key, so no probe row meets one.
type KeyRange struct {
	Col      int
	Min, Max int64
	Empty    bool
}

// KeyRanges collects the KeyRanges published for one scan node. A scan may
// read them at any time: ranges published after it started only prune less.
type KeyRanges struct {
	mu     sync.Mutex
	ranges []KeyRange
}

type keyRangesKey struct{ scan *physical.Scan }

// ScanKeyRanges returns the one KeyRanges of scan in this task, which joins
// publish to and the scan's partitions read.
func (tc *TaskContext) ScanKeyRanges(scan *physical.Scan) *KeyRanges {
	return tc.Shared(keyRangesKey{scan}, func() any { return &KeyRanges{} }).(*KeyRanges)
}

// Publish adds r.
func (k *KeyRanges) Publish(r KeyRange) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ranges = append(k.ranges, r)
}

// Snapshot returns the ranges published so far (the caller must not modify it).
func (k *KeyRanges) Snapshot() []KeyRange {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ranges[:len(k.ranges):len(k.ranges)]
}
