package scan

import "sync"

// scans counts scan partitions built per table name in this process. It
// lets tests prove that a cache hit did not run the cached input (the scans
// under it) without timing anything.
var scans struct {
	mu    sync.Mutex
	n     map[string]int64
	files map[string]int64 // files opened per table
	byKey map[string]int64 // row groups skipped by a join's key range, per table
}

func countScan(table string) {
	scans.mu.Lock()
	defer scans.mu.Unlock()
	if scans.n == nil {
		scans.n = map[string]int64{}
	}
	scans.n[table]++
}

// ScanCount returns how many scan partitions of table this process has built.
func ScanCount(table string) int64 {
	scans.mu.Lock()
	defer scans.mu.Unlock()
	return scans.n[table]
}

func countFile(table string) {
	scans.mu.Lock()
	defer scans.mu.Unlock()
	if scans.files == nil {
		scans.files = map[string]int64{}
	}
	scans.files[table]++
}

// FilesOpened returns how many data files scans of table have opened in
// this process (tests prove partition pruning with it).
func FilesOpened(table string) int64 {
	scans.mu.Lock()
	defer scans.mu.Unlock()
	return scans.files[table]
}

func countKeyRangeSkip(table string) {
	scans.mu.Lock()
	defer scans.mu.Unlock()
	if scans.byKey == nil {
		scans.byKey = map[string]int64{}
	}
	scans.byKey[table]++
}

// RowGroupsSkippedByKeyRange returns how many Parquet row groups scans of
// table in this process skipped because a hash join's build keys ruled them
// out (tests prove the join-to-scan key range works with it).
func RowGroupsSkippedByKeyRange(table string) int64 {
	scans.mu.Lock()
	defer scans.mu.Unlock()
	return scans.byKey[table]
}
