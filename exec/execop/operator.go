package execop

import (
	"context"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/physical"
)

// Operator is a pull-based, vectorized operator producing one partition of a
// physical node's output.
//
// Call order: Open once, then Next until it returns io.EOF or an error, then
// Close. Ownership: each batch Next returns carries one reference that moves
// to the caller, who must Release it exactly once (or hand it on). Close is
// idempotent, safe after a failed Open or mid-stream, and releases everything
// the operator holds (including its inputs). An Operator is used by one
// goroutine at a time; Next checks ctx once per batch.
type Operator interface {
	Open(ctx context.Context) error
	Next(ctx context.Context) (arrow.RecordBatch, error)
	Close() error
}

// DefaultBatchSize is the number of rows operators aim to put in one batch.
const DefaultBatchSize = 8192

// SkipPartial: after ProbeRows input rows, a partial hash aggregate whose
// groups exceed Percent % of them passes later rows through as partial
// states; Percent 0 or 100 never.
type SkipPartial struct {
	Percent   int
	ProbeRows int64
}

// TaskContext is what every operator of one query (or task) shares. It is
// passed explicitly to Build, never through context.Value.
type TaskContext struct {
	// Mem is the query's allocator; every Arrow buffer the query makes comes from it.
	Mem memory.Allocator
	// BatchSize is the target rows per batch (DefaultBatchSize if 0).
	BatchSize int
	// SkipPartial says when a partial hash aggregate stops aggregating
	// and passes rows through (the zero value: never).
	SkipPartial SkipPartial
	// MemoryTables resolves a FormatMemory scan's table name to its partitions.
	// Every batch it returns carries one reference for the caller, who
	// releases each one: a table dropped meanwhile keeps its
	// data until the scans reading it are done, which matters for tables
	// held outside the Go heap.
	MemoryTables func(name string) ([][]arrow.RecordBatch, bool)
	// WrapSource, if set, wraps the operator of every scan partition before
	// Build instruments it. Tests use it to deliver source batches from
	// another goroutine with a delay, or to inject errors and panics.
	WrapSource func(n *physical.Scan, partition int, op Operator) Operator
	// WorkDir is the executor's work directory: shuffle writers write under
	// it and shuffle readers read local files from it. Empty outside a task.
	WorkDir string
	// ExecutorID is the executor running the task; a location held by this
	// executor is read from WorkDir, any other through Fetcher.
	ExecutorID string
	// SinglePartition says this context runs one task of a stage: each node
	// builds exactly one of its partitions here (the others run as other
	// tasks, maybe elsewhere), so state shared "across partitions" — a
	// CollectLeft join's build side — is per task.
	SinglePartition bool
	// Fetcher reads shuffle files held by other executors (over Flight).
	Fetcher ShuffleFetcher
	// Maps, if set, keeps local cache files mapped from one CacheReader to
	// the next (the executor's registry, shared by all its tasks); nil means
	// each read maps its file afresh. Plain shuffle files, read once, never
	// go through it.
	Maps *filemap.FileMaps
	// build builds the operators of plan nodes (exec.Build).
	build BuildFunc
	// shared holds per-node state shared across partitions (exchanges, join
	// build sides), created on first use by any partition.
	shared sharedState
	// metrics, if non-nil, collects rows, batches and time per physical node.
	metrics *Metrics
	// untracked counts Grow/Shrink bytes when Mem is not an AccountingAllocator.
	untracked atomic.Int64
}

// ShuffleFetcher reads a shuffle file held by another executor. The
// executor package implements it over Arrow Flight; exec only calls it.
type ShuffleFetcher interface {
	// Fetch returns an unopened operator streaming the batches of the file at
	// loc. The caller Opens, drains and Closes it as any Operator. Errors
	// reaching the file are returned from Open or Next.
	Fetch(ctx context.Context, loc physical.PartitionLocation) (Operator, error)
}

// FetchError is a shuffle reader's failure to read one location (the file
// is gone or its executor unreachable). The task runner reports it as a
// fetch failure so the scheduler can re-run the map task that wrote it.
type FetchError struct {
	Location physical.PartitionLocation
	Err      error
}

func (e *FetchError) Error() string {
	return "exec: fetching shuffle file " + e.Location.String() + ": " + e.Err.Error()
}

func (e *FetchError) Unwrap() error { return e.Err }
