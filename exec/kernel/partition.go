package kernel

import "github.com/apache/arrow-go/v18/arrow"

// HashPartitioner assigns the rows of a batch to n partitions by
// hash(keys) % n and groups their indices by partition with a counting
// sort. The in-memory exchange and the shuffle writer both use it, so a row
// lands in the same partition whichever way an exchange runs (the planner's
// partition-disjoint columns rely on that). Its scratch is reused from one
// batch to the next; a HashPartitioner is used by one goroutine at a time.
type HashPartitioner struct {
	hashes []uint64
	bounds []int   // partition t's rows are perm[bounds[t]:bounds[t+1]]
	perm   []int32 // row indices grouped by partition, in input order within each
	pos    []int
}

// Split hashes the key columns of one batch of rows rows and groups the
// row indices by target partition among n (n ≥ 1).
func (p *HashPartitioner) Split(keys []arrow.Array, rows, n int) {
	p.hashes = Resize(p.hashes, rows)
	HashColumns(keys, p.hashes)
	p.bounds = Resize(p.bounds, n+1)
	for _, h := range p.hashes {
		p.bounds[h%uint64(n)+1]++
	}
	for i := 1; i <= n; i++ {
		p.bounds[i] += p.bounds[i-1]
	}
	p.perm = Resize(p.perm, rows)
	p.pos = append(p.pos[:0], p.bounds[:n]...)
	for i, h := range p.hashes {
		t := h % uint64(n)
		p.perm[p.pos[t]] = int32(i)
		p.pos[t]++
	}
}

// Rows returns the indices of partition t's rows in the batch last split,
// in input order. The slice is valid until the next Split.
func (p *HashPartitioner) Rows(t int) []int32 {
	return p.perm[p.bounds[t]:p.bounds[t+1]]
}
