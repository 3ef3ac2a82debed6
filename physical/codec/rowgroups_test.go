package codec

import (
	"fmt"
	"testing"

	"github.com/quiverdb/quiver/physical"
)

// TestScanRowGroupsRoundTrip: a split Parquet scan keeps its row-group
// ranges and its user options through Encode/Decode, with or without options.
func TestScanRowGroupsRoundTrip(t *testing.T) {
	s := testSchema()
	for _, opts := range []map[string]string{nil, {"k": "v"}} {
		scan := &physical.Scan{Table: "lineitem", Format: physical.FormatParquet, FileSchema: s,
			Partitions: [][]string{{"/d/a.parquet"}, {"/d/a.parquet", "/d/b.parquet"}},
			RowGroups:  [][]physical.RowGroupRange{{{Start: 0, End: 3}}, {{Start: 3, End: 6}, {Start: 0, End: 2}}},
			Options:    opts, Fetch: -1}
		got := roundTrip(t, scan).(*physical.Scan)
		if fmt.Sprint(got.Partitions, got.RowGroups, got.Options) != fmt.Sprint(scan.Partitions, scan.RowGroups, scan.Options) {
			t.Fatalf("round trip: got %v %v %v, want %v %v %v", got.Partitions, got.RowGroups, got.Options,
				scan.Partitions, scan.RowGroups, scan.Options)
		}
		if len(scan.Options) != len(opts) {
			t.Fatalf("encoding changed the plan's options: %v", scan.Options)
		}
	}
}

func TestScanRowGroupsDecodeRejects(t *testing.T) {
	s := &physical.Scan{Table: "t", Partitions: [][]string{{"a"}, {"a"}}}
	for _, enc := range []string{"0-1", "0-1;", "0-1;2", "0-1;3-2", "0-1;x-2", "0-1,1-2;2-3"} {
		s.Options = map[string]string{rowGroupsKey: enc}
		s.RowGroups = nil
		if err := decodeScanRowGroups(s); err == nil {
			t.Errorf("%q: decoded as %v, want an error", enc, s.RowGroups)
		}
	}
}
