package codec

import (
	"testing"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/rpc"
	"github.com/quiverdb/quiver/sql"
)

// A Write node round-trips with its options; a partition column the input
// lacks and a relative target are refused.
func TestWriteRoundTrip(t *testing.T) {
	q, err := sql.NewPlanner(tpchCatalog(t)).PlanQuery("SELECT n_nationkey, n_name FROM nation")
	if err != nil {
		t.Fatal(err)
	}
	w, err := logical.NewWrite(q, "/d/out", "/d/.out.quiver-tmp-1", true,
		logical.WriteOptions{Format: "parquet", PartitionBy: []int{1}, Compression: "zstd", RowGroupSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, w)
	for name, mutate := range map[string]func(*rpc.LogicalWrite){
		"partition column": func(m *rpc.LogicalWrite) { m.Options.PartitionBy = []int32{2} },
		"every column":     func(m *rpc.LogicalWrite) { m.Options.PartitionBy = []int32{0, 1} },
		"relative target":  func(m *rpc.LogicalWrite) { m.Target = "out" },
		"no options":       func(m *rpc.LogicalWrite) { m.Options = nil },
	} {
		m, err := EncodePlan(w)
		if err != nil {
			t.Fatal(err)
		}
		mutate(m.GetWrite())
		if _, err := DecodePlan(m); err == nil {
			t.Errorf("%s: decoded a bad write", name)
		}
	}
}
