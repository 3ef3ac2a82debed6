package cache

import (
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quiverdb/quiver/physical"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "l_orderkey", Type: arrow.PrimitiveTypes.Int64},
	{Name: "l_price", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}, Nullable: true},
	{Name: "l_shipdate", Type: arrow.FixedWidthTypes.Date32},
}, nil)

// locs builds the output of (job, stage): one location per output partition,
// partition p on executors[p % len(executors)], with 10 rows and 100 bytes.
func locs(job string, stage int, executors ...string) [][]physical.PartitionLocation {
	out := make([][]physical.PartitionLocation, len(executors))
	for p, ex := range executors {
		out[p] = []physical.PartitionLocation{{
			JobID: job, StageID: stage, OutputPartition: p, MapPartition: 0,
			Executor: physical.ExecutorMeta{ID: ex, Host: "127.0.0.1", FlightPort: 50050 + p},
			Rows:     10, Batches: 1, Bytes: 100,
			// what the pinned writer saw: the durable store keeps it
			Stats: []physical.ColumnStats{{Bounded: true, Lo: -3, Hi: int64(p) + 7, NoNulls: true, Distinct: 9}, {LongestAtLeast: 12}},
		}}
	}
	return out
}

func key(s, c string) Key { return Key{SessionID: s, CacheID: c} }

// fakeClock is a settable clock for WithClock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func jobName(i int) string { return fmt.Sprintf("job-%d", i) }
