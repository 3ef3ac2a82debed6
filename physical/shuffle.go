package physical

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// ExecutorMeta identifies an executor and where its Flight service listens.
type ExecutorMeta struct {
	ID         string
	Host       string
	FlightPort int
}

// PartitionLocation is one shuffle file: the output partition
// OutputPartition written by map task MapPartition of stage StageID of job
// JobID, held by Executor. The file's path is rebuilt from these fields
// ({work_dir}/{job_id}/{stage_id}/{output_partition}/data-{map_partition}.arrow),
// never shipped.
type PartitionLocation struct {
	JobID           string
	StageID         int
	OutputPartition int
	MapPartition    int
	Executor        ExecutorMeta
	Rows            int64
	Batches         int64
	Bytes           int64
	// Ticket is the scheduler's signed Flight ticket for the file (package
	// auth), which a reader on another executor or a client presents to
	// fetch it; "" where the scheduler has not signed one yet.
	Ticket string
	// Stats is what the pinned (cache) writer saw of the file's rows, one
	// entry per column; nil: unknown (ordinary shuffle files).
	Stats []ColumnStats
	// Inline is the whole file, an Arrow IPC stream, when its writer kept it
	// in memory because it was small (ShuffleWriter.InlineLimit): no file
	// exists then, and readers decode these bytes instead of fetching.
	Inline []byte
}

func (l PartitionLocation) String() string {
	return fmt.Sprintf("%s/%d/%d/data-%d@%s", l.JobID, l.StageID, l.OutputPartition, l.MapPartition, l.Executor.ID)
}

// JobIDSyntax says in words what ValidJobID accepts, for error messages.
const JobIDSyntax = "1 to 64 of A-Z, a-z, 0-9, '_' and '-'"

// ValidJobID reports whether id has the agreed shape of a job id (see
// JobIDSyntax). Shuffle file paths are built from job ids, so every place
// that receives one from the network or builds a path from it checks it
// here: anything else must never get near a path.
func ValidJobID(id string) bool {
	if len(id) < 1 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Compression is a shuffle file's IPC body compression.
type Compression string

// Shuffle compressions: LZ4 frame (the default), zstd, or none.
const (
	CompressLZ4  Compression = "lz4"
	CompressZstd Compression = "zstd"
	CompressNone Compression = "none"
)

// Compressions lists every shuffle compression, the default first. It is
// the one list: the setting quiver.shuffle_compression offers these values.
var Compressions = []Compression{CompressLZ4, CompressZstd, CompressNone}

// ParseCompression checks a shuffle compression name ("" is the default,
// lz4); any other name is an error.
func ParseCompression(s string) (Compression, error) {
	if s == "" {
		return CompressLZ4, nil
	}
	for _, c := range Compressions {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(Compressions))
	for i, c := range Compressions {
		names[i] = string(c)
	}
	return "", qerr.Planf("shuffle compression %q: want one of %s", s, strings.Join(names, ", "))
}

// ShuffleWriter is the root of a stage: it runs partition p of Input (map
// partition p) and writes its rows to Arrow IPC stream files, one per output
// partition: by hash of Keys into N output partitions (HashColumns % N, as
// the in-memory Repartition); with no Keys and N == 1 all rows go to output
// partition 0 (a coalesce); with no Keys and N == 0 it is passthrough (map
// partition p writes output partition p). Pinned marks a cache
// materialization, whose files cleanup keeps. Its own output (as an
// operator) is one batch of ShuffleWriteStatsSchema rows.
type ShuffleWriter struct {
	Input       Plan
	JobID       string
	StageID     int
	Keys        []Expr
	N           int
	Compression Compression
	Pinned      bool
	// InlineLimit, when positive, lets a writer with one output file keep
	// an output of at most this many bytes in memory and return it with
	// its location instead of writing a file (never for Pinned writers).
	InlineLimit int64
}

// MaxInlineBytes bounds ShuffleWriter.InlineLimit and the bytes a location
// carries inline; the scheduler shares it among a final stage's partitions,
// so that a job's result travels in one message well under the RPC limit.
const MaxInlineBytes = 4 << 20

// ShuffleWriteStatsSchema is the schema of the batch a ShuffleWriter
// operator returns: one row per output partition it wrote.
var ShuffleWriteStatsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "output_partition", Type: arrow.PrimitiveTypes.Int64},
	{Name: "rows", Type: arrow.PrimitiveTypes.Int64},
	{Name: "batches", Type: arrow.PrimitiveTypes.Int64},
	{Name: "bytes", Type: arrow.PrimitiveTypes.Int64},
	// col_stats: EncodeColumnStats of what a pinned writer saw of the
	// file's rows; NULL for ordinary shuffle files.
	{Name: "col_stats", Type: arrow.BinaryTypes.Binary, Nullable: true},
	// inline: the file's bytes when the writer kept it in memory
	// (ShuffleWriter.InlineLimit); NULL when it is a file.
	{Name: "inline", Type: arrow.BinaryTypes.Binary, Nullable: true},
}, nil)

// UnresolvedShuffle stands for the output of stage StageID until that stage
// completes; the scheduler then replaces it with a ShuffleReader.
type UnresolvedShuffle struct {
	StageID    int
	OutSchema  *arrow.Schema
	Partitions int
}

// ShuffleReader reads shuffle files: output partition i reads every
// location in Locations[i] (from its own work dir when the file is local,
// else over Arrow Flight from the executor holding it). A failed fetch is
// a fetch failure naming the location, so the scheduler can re-run the map
// task that wrote it.
type ShuffleReader struct {
	StageID   int
	OutSchema *arrow.Schema
	Locations [][]PartitionLocation
}

// CacheKey identifies a cache entry: (session, cache id).
type CacheKey struct {
	SessionID string
	CacheID   string
}

// CacheReader reads a materialized cache entry's pinned shuffle files, like
// a ShuffleReader, but is its own node: stage rollback never turns it into
// an UnresolvedShuffle, and its fetch failures invalidate the entry instead
// of rolling back a stage.
type CacheReader struct {
	Key       CacheKey
	Name      string
	OutSchema *arrow.Schema
	Locations [][]PartitionLocation
	// Disjoint lists the columns whose values never occur in two cache
	// partitions: DisjointColumns of the plan that built the entry, whose
	// output partitions are the cache's.
	Disjoint []int
	// Predicate, when set, is a filter over the output that the reader's
	// consumer applies anyway: a hint that lets the reader skip batches
	// whose zone maps show no row can satisfy it (never a filter itself).
	Predicate Expr
}

func (*ShuffleWriter) isPlan()     {}
func (*UnresolvedShuffle) isPlan() {}
func (*ShuffleReader) isPlan()     {}
func (*CacheReader) isPlan()       {}

func (w *ShuffleWriter) Schema() *arrow.Schema     { return ShuffleWriteStatsSchema }
func (u *UnresolvedShuffle) Schema() *arrow.Schema { return u.OutSchema }
func (r *ShuffleReader) Schema() *arrow.Schema     { return r.OutSchema }
func (c *CacheReader) Schema() *arrow.Schema       { return c.OutSchema }

func (w *ShuffleWriter) Children() []Plan   { return []Plan{w.Input} }
func (*UnresolvedShuffle) Children() []Plan { return nil }
func (*ShuffleReader) Children() []Plan     { return nil }
func (*CacheReader) Children() []Plan       { return nil }

func (w *ShuffleWriter) WithChildren(c []Plan) Plan   { n := *w; n.Input = c[0]; return &n }
func (u *UnresolvedShuffle) WithChildren([]Plan) Plan { return u }
func (r *ShuffleReader) WithChildren([]Plan) Plan     { return r }
func (c *CacheReader) WithChildren([]Plan) Plan       { return c }

// OutputPartitions of a ShuffleWriter is its input's: one task per input partition.
func (w *ShuffleWriter) OutputPartitions() int     { return w.Input.OutputPartitions() }
func (u *UnresolvedShuffle) OutputPartitions() int { return max(1, u.Partitions) }
func (r *ShuffleReader) OutputPartitions() int     { return max(1, len(r.Locations)) }
func (c *CacheReader) OutputPartitions() int       { return max(1, len(c.Locations)) }

// OutputN is the number of output partitions the writer produces.
func (w *ShuffleWriter) OutputN() int {
	if len(w.Keys) == 0 && w.N == 0 {
		return w.Input.OutputPartitions()
	}
	return w.N
}

func (w *ShuffleWriter) String() string {
	part := "passthrough"
	if len(w.Keys) == 0 && w.N == 1 {
		part = "single"
	}
	if len(w.Keys) > 0 {
		part = fmt.Sprintf("Hash([%s], %d)", exprList(w.Keys), w.N)
	}
	s := fmt.Sprintf("ShuffleWriterExec: job=%s stage=%d partitioning=%s", w.JobID, w.StageID, part)
	if w.Pinned {
		s += " pinned"
	}
	return s
}
func (u *UnresolvedShuffle) String() string {
	return fmt.Sprintf("UnresolvedShuffleExec: stage=%d partitions=%d", u.StageID, u.Partitions)
}
func (r *ShuffleReader) String() string {
	return fmt.Sprintf("ShuffleReaderExec: stage=%d partitions=%d files=%d", r.StageID, len(r.Locations), countLocs(r.Locations))
}
func (c *CacheReader) String() string {
	name := c.Name
	if name == "" {
		name = c.Key.CacheID
	}
	execs := map[string]bool{}
	for _, p := range c.Locations {
		for _, l := range p {
			execs[l.Executor.ID] = true
		}
	}
	ids := make([]string, 0, len(execs))
	for id := range execs {
		ids = append(ids, id)
	}
	s := fmt.Sprintf("CacheReaderExec: %s partitions=%d files=%d executors=%d", strings.TrimSpace(name), len(c.Locations), countLocs(c.Locations), len(ids))
	return s + disjointSuffix(c.OutSchema, c.Disjoint)
}

func countLocs(ls [][]PartitionLocation) int {
	n := 0
	for _, p := range ls {
		n += len(p)
	}
	return n
}
