//go:build !linux

package execop

// mapAnon is not available here: the off-heap allocator falls back to the
// Go heap.
func mapAnon(int) []byte { return nil }

func unmapAnon([]byte) {}

const offHeapSupported = false
