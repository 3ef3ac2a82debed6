//go:build linux

package execop

import "syscall"

// mapAnon returns size bytes of zeroed, page-aligned memory outside the Go
// heap, or nil if the system refuses.
func mapAnon(size int) []byte {
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return b
}

// unmapAnon returns memory from mapAnon to the system.
func unmapAnon(b []byte) { _ = syscall.Munmap(b) }

const offHeapSupported = true
