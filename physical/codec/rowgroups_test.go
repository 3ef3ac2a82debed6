package codec

import (
	"fmt"
	"testing"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// TestScanRowGroupsRoundTrip: a split Parquet scan keeps its row-group
// ranges, its disjoint columns and its user options through Encode/Decode,
// with or without options.
func TestScanRowGroupsRoundTrip(t *testing.T) {
	s := testSchema()
	for _, opts := range []map[string]string{nil, {"k": "v"}} {
		scan := &physical.Scan{Table: "lineitem", Format: physical.FormatParquet, FileSchema: s,
			Partitions: [][]string{{"/d/a.parquet"}, {"/d/a.parquet", "/d/b.parquet"}},
			RowGroups:  [][]physical.RowGroupRange{{{Start: 0, End: 3}}, {{Start: 3, End: 6}, {Start: 0, End: 2}}},
			Options:    opts, Fetch: -1, Disjoint: []int{0}}
		got := roundTrip(t, scan).(*physical.Scan)
		if fmt.Sprint(got.Partitions, got.RowGroups, got.Options, got.Disjoint) != fmt.Sprint(scan.Partitions, scan.RowGroups, scan.Options, scan.Disjoint) {
			t.Fatalf("round trip: got %v %v %v %v, want %v %v %v %v", got.Partitions, got.RowGroups, got.Options, got.Disjoint,
				scan.Partitions, scan.RowGroups, scan.Options, scan.Disjoint)
		}
		if len(scan.Options) != len(opts) {
			t.Fatalf("encoding changed the plan's options: %v", scan.Options)
		}
	}
}

func TestScanRowGroupsDecodeRejects(t *testing.T) {
	rg := func(pairs ...int32) *rpc.RowGroupRanges {
		m := &rpc.RowGroupRanges{}
		for i := 0; i < len(pairs); i += 2 {
			m.Ranges = append(m.Ranges, &rpc.RowGroupRange{Start: pairs[i], End: pairs[i+1]})
		}
		return m
	}
	for _, bad := range [][]*rpc.RowGroupRanges{
		{rg(0, 1)},                 // one partition's ranges for two partitions
		{rg(0, 1), rg()},           // a partition without its file's range
		{rg(0, 1), rg(3, 2)},       // end before start
		{rg(0, 1), rg(-1, 2)},      // negative start
		{rg(0, 1, 1, 2), rg(2, 3)}, // two ranges for one file
	} {
		s := &physical.Scan{Table: "t", Partitions: [][]string{{"a"}, {"a"}}}
		if err := decodeRowGroups(s, bad); err == nil {
			t.Errorf("%v: decoded as %v, want an error", bad, s.RowGroups)
		}
	}
}
