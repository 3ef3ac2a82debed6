package exec

import "sync"

// sharedState holds per-node state shared by the partitions of one query.
type sharedState struct {
	mu sync.Mutex
	m  map[any]any
}

// Metrics collects per-node execution metrics for EXPLAIN ANALYZE.
type Metrics struct {
	mu sync.Mutex
}
