package logical

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/qerr"
)

// WriteOptions say how a Write lays out its files.
type WriteOptions struct {
	Format       string // parquet, csv, json or arrow
	PartitionBy  []int  // input columns written as key=value/ directories (Hive style)
	Compression  string // "" for the format's default
	RowGroupSize int64  // Parquet; 0 for the default
	Delimiter    rune   // CSV
	Header       bool   // CSV
}

// Write stores its input's rows in files at Target and yields one row, the
// number of rows written. Tasks write their partitions' files under
// Staging, a hidden directory beside Target; the
// job's last step moves the files its tasks reported into place, so a
// failed job leaves nothing at Target. Without PartitionBy, Target is one
// file, written by one task. Staging is a hidden sibling of Target
// (physical.CheckWritePaths).
type Write struct {
	Input     Plan
	Target    string
	Staging   string
	Overwrite bool
	Options   WriteOptions
}

// NewWrite checks the partition columns against input (the planner checks
// the paths).
func NewWrite(input Plan, target, staging string, overwrite bool, opts WriteOptions) (*Write, error) {
	if !filepath.IsAbs(target) || !filepath.IsAbs(staging) {
		return nil, qerr.Planf("write: the target %q and staging directory %q must be absolute paths", target, staging)
	}
	n := input.Schema().Len()
	seen := map[int]bool{}
	for _, c := range opts.PartitionBy {
		if c < 0 || c >= n || seen[c] {
			return nil, qerr.Planf("write %s: bad partition column %d", target, c)
		}
		seen[c] = true
	}
	if len(seen) == n {
		return nil, qerr.Planf("write %s: every column is a partition column; nothing would be left to write in the files", target)
	}
	return &Write{Input: input, Target: target, Staging: staging, Overwrite: overwrite, Options: opts}, nil
}

// WriteSchema is a Write's output: the rows written.
var WriteSchema = NewSchema(Field{Name: "count", Type: arrow.PrimitiveTypes.Int64})

func (*Write) isPlan()            {}
func (*Write) Schema() *Schema    { return WriteSchema }
func (w *Write) Children() []Plan { return []Plan{w.Input} }
func (w *Write) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(w, c, 1); err != nil {
		return nil, err
	}
	if c[0].Schema().Len() != w.Input.Schema().Len() {
		return nil, qerr.Internalf("Write.WithChildren: the input changed its columns")
	}
	n := *w
	n.Input = c[0]
	return &n, nil
}
func (*Write) Exprs() []Expr { return nil }
func (w *Write) WithExprs(e []Expr) (Plan, error) {
	if len(e) != 0 {
		return nil, qerr.Internalf("Write.WithExprs: want no expressions")
	}
	return w, nil
}
func (w *Write) String() string {
	s := fmt.Sprintf("Write: %s (%s)", w.Target, w.Options.Format)
	if len(w.Options.PartitionBy) > 0 {
		names := make([]string, len(w.Options.PartitionBy))
		for i, c := range w.Options.PartitionBy {
			names[i] = w.Input.Schema().Field(c).Name
		}
		s += " partition_by=" + strings.Join(names, ",")
	}
	if w.Overwrite {
		s += " overwrite"
	}
	return s
}
