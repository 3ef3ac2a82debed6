package execop

// Fork returns a context for a subtree that a single operator of this
// context builds, runs to the end and closes, possibly many times (the
// terms of a recursive query): it allocates from the same allocator with
// the same settings, readers and metrics, but has its own per-node shared
// state, so exchanges and join build sides are made afresh by each build
// of the subtree, and it builds every partition of the subtree itself
// (SinglePartition is off: no sibling task builds part of it).
func (tc *TaskContext) Fork() *TaskContext {
	return &TaskContext{
		Mem:          tc.Mem,
		BatchSize:    tc.BatchSize,
		SkipPartial:  tc.SkipPartial,
		MemoryTables: tc.MemoryTables,
		WrapSource:   tc.WrapSource,
		WorkDir:      tc.WorkDir,
		ExecutorID:   tc.ExecutorID,
		Fetcher:      tc.Fetcher,
		Maps:         tc.Maps,
		build:        tc.build,
		metrics:      tc.metrics,
	}
}
