//go:build !linux

package executor

// physicalMemory is 0 (unknown) where we do not read it.
func physicalMemory() int64 { return 0 }
