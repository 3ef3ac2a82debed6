package sort_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/exectest"
	sortpkg "github.com/quiverdb/quiver/exec/sort"
	"github.com/quiverdb/quiver/exec/spill"
	"github.com/quiverdb/quiver/physical"
)

var topkSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "g", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "h", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "o", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

type topkRow struct {
	id   int64
	g, o *int64
	h    *string
}

type topkSpec struct {
	partKeys   int // 0, 1 (g) or 2 (g, h)
	desc       bool
	nullsFirst bool
	k          int64
	mode       physical.TopKMode
}

func (s topkSpec) keys() []physical.SortKey {
	col := func(i int) physical.Expr {
		f := topkSchema.Field(i)
		return &physical.Column{Index: i, Name: f.Name, Type: f.Type}
	}
	var keys []physical.SortKey
	for i := range s.partKeys {
		keys = append(keys, physical.SortKey{Expr: col(1 + i), Asc: true})
	}
	return append(keys, physical.SortKey{Expr: col(3), Asc: !s.desc, NullsFirst: s.nullsFirst})
}

func cmpNullable[T cmp.Ordered](a, b *T, nullsFirst bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		if nullsFirst {
			return -1
		}
		return 1
	case b == nil:
		if nullsFirst {
			return 1
		}
		return -1
	}
	return cmp.Compare(*a, *b)
}

// reference keeps, of rows stably sorted by the spec's keys, each
// partition's rows whose row number, rank or dense rank is at most k.
func (s topkSpec) reference(rows []topkRow) []topkRow {
	part := func(a, b topkRow) int {
		c := 0
		if s.partKeys > 0 {
			c = cmpNullable(a.g, b.g, false)
		}
		if c == 0 && s.partKeys > 1 {
			c = cmpNullable(a.h, b.h, false)
		}
		return c
	}
	order := func(a, b topkRow) int {
		c := cmpNullable(a.o, b.o, s.nullsFirst != s.desc)
		if s.desc {
			c = -c
		}
		return c
	}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b topkRow) int {
		if c := part(a, b); c != 0 {
			return c
		}
		return order(a, b)
	})
	var out []topkRow
	var n, rank, dense int64
	for i, r := range sorted {
		if i == 0 || part(sorted[i-1], r) != 0 {
			n, rank, dense = 1, 1, 1
		} else {
			n++
			if order(sorted[i-1], r) != 0 {
				rank, dense = n, dense+1
			}
		}
		v := map[physical.TopKMode]int64{physical.TopKRows: n, physical.TopKTies: rank, physical.TopKDistinct: dense}[s.mode]
		if v <= s.k {
			out = append(out, r)
		}
	}
	return out
}

func topkJSON(rows []topkRow) string {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = map[string]any{"id": r.id, "g": r.g, "h": r.h, "o": r.o}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func randomTopkRows(r *rand.Rand, n int) []topkRow {
	opt := func(nullOneIn int, hi int64) *int64 {
		if r.IntN(nullOneIn) == 0 {
			return nil
		}
		v := r.Int64N(hi)
		return &v
	}
	groups := 1 + r.Int64N(6)
	values := 1 + r.Int64N(30)
	out := make([]topkRow, n)
	for i := range out {
		var h *string
		if r.IntN(7) != 0 {
			s := fmt.Sprintf("h%d", r.IntN(3))
			h = &s
		}
		out[i] = topkRow{id: int64(i), g: opt(9, groups), h: h, o: opt(6, values)}
	}
	return out
}

// TestSortPartitionLimit checks the per-partition top-k of a sort against
// a full stable sort cut per partition, for the three modes, K below and
// above the partitions' sizes, NULL partition keys and ORDER BY values,
// and several partition keys or none; at batch size 1 the compactions,
// the drop on arrival and the switch to a full sort all run.
func TestSortPartitionLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for c := range 36 {
		rows := randomTopkRows(r, 1+r.IntN(300))
		s := topkSpec{
			partKeys: r.IntN(3), desc: r.IntN(2) == 0, nullsFirst: r.IntN(2) == 0,
			k: 1 + r.Int64N(int64(3+c*2)), mode: physical.TopKMode(c % 3),
		}
		// Counting rows keeps the first of tied rows in input order, which
		// only one input partition fixes.
		parts := 1
		if s.mode != physical.TopKRows {
			parts = 1 + r.IntN(3)
		}
		order := exectest.Ordered
		if parts > 1 {
			order = exectest.Unordered
		}
		name := fmt.Sprintf("case%d/%s/k=%d/keys=%d/parts=%d", c, s.mode, s.k, s.partKeys, parts)
		exectest.Run(t, exectest.Case{
			Name:   name,
			Inputs: []exectest.Input{{Name: "t", Schema: topkSchema, Rows: topkJSON(rows), Partitions: parts}},
			Plan: func(sc []physical.Plan) physical.Plan {
				return &physical.Sort{Input: sc[0], Keys: s.keys(), Fetch: -1,
					PartitionLimit: &physical.PartitionLimit{Keys: s.partKeys, K: s.k, Mode: s.mode}}
			},
			Want:  topkJSON(s.reference(rows)),
			Order: order,
		})
	}
}

// TestSortPartitionLimitBadPlan: a limit over more keys than the sort has,
// or beside a fetch, is refused when the operator is built.
func TestSortPartitionLimitBadPlan(t *testing.T) {
	keys := topkSpec{partKeys: 1}.keys()
	for _, n := range []*physical.Sort{
		{Keys: keys, Fetch: -1, PartitionLimit: &physical.PartitionLimit{Keys: 3, K: 1}},
		{Keys: keys, Fetch: -1, PartitionLimit: &physical.PartitionLimit{Keys: 1, K: 0}},
		{Keys: keys, Fetch: 5, PartitionLimit: &physical.PartitionLimit{Keys: 1, K: 1}},
	} {
		if _, err := sortpkg.NewSort(nil, n, 0); err == nil {
			t.Errorf("%s: built", n)
		}
	}
}

// TestSortPartitionLimitSpills: a limit that cuts too little (350 of each
// partition's ~400 rows) makes the sort give up on it and sort fully; under
// a memory limit that sort spills, and the merged runs are still cut to the
// limit's rows.
func TestSortPartitionLimitSpills(t *testing.T) {
	rows, js := spillData(16000, 3)
	const k = 350
	var want []spillRow
	seen := map[int64]int{}
	for _, r := range rows { // in i order
		key := r.k
		if r.null {
			key = -1
		}
		if seen[key]++; seen[key] < k+1 {
			want = append(want, r)
		}
	}
	slices.SortStableFunc(want, func(a, b spillRow) int {
		switch {
		case a.null && b.null:
			return 0
		case a.null:
			return 1
		case b.null:
			return -1
		}
		return cmp.Compare(a.k, b.k)
	})
	var wb strings.Builder
	wb.WriteByte('[')
	for i, row := range want {
		if i > 0 {
			wb.WriteByte(',')
		}
		key := fmt.Sprint(row.k)
		if row.null {
			key = "null"
		}
		fmt.Fprintf(&wb, `{"k":%s,"i":%d,"s":%q}`, key, row.i, row.s)
	}
	wb.WriteByte(']')
	for _, mode := range []physical.TopKMode{physical.TopKRows, physical.TopKTies, physical.TopKDistinct} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := exectest.Allocator(t)
			rec, _, err := array.RecordFromJSON(mem, spillSchema, strings.NewReader(js))
			if err != nil {
				t.Fatal(err)
			}
			tables := exectest.Tables{"t": {exectest.Split(rec, exectest.RandomSplits(rand.New(rand.NewPCG(5, 6)), 16000, 300))}}
			rec.Release()
			defer tables.Release()
			acct := execop.NewAccountingAllocator(mem, 1<<20)
			tc := exec.NewTaskContext(acct, 256)
			tc.MemoryTables = tables.Lookup
			tc.WorkDir = t.TempDir()
			tc.EnableMetrics()
			plan := &physical.Sort{Input: exectest.MemoryScan("t", spillSchema, 1), Fetch: -1, Keys: []physical.SortKey{
				{Expr: &physical.Column{Index: 0, Name: "k", Type: arrow.PrimitiveTypes.Int64}, Asc: true},
				{Expr: &physical.Column{Index: 1, Name: "i", Type: arrow.PrimitiveTypes.Int64}, Asc: true},
			}, PartitionLimit: &physical.PartitionLimit{Keys: 1, K: k, Mode: mode}}
			got := exectest.Collect(t, context.Background(), tc, plan)
			exectest.Compare(t, got, exectest.RowsFromJSON(t, mem, spillSchema, wb.String()), exectest.Ordered)
			if tc.NodeMetrics(plan).SpilledBytes.Load() == 0 {
				t.Error("no spill under a 1 MiB limit")
			}
			left, _ := filepath.Glob(filepath.Join(tc.WorkDir, spill.DirName, "*"))
			if len(left) > 0 {
				t.Errorf("spill files left: %v", left)
			}
		})
	}
}
