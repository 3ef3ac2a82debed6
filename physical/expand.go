package physical

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Grouping-set column names (the same as logical's, which this package
// may not import).
const (
	GroupingSetColumn = "__quiver_grouping_set"
	GroupingRowColumn = "__quiver_gs_row"
)

// Expand emits each input row once per grouping set (see logical.Expand):
// the input's columns, then Keys (named KeyNames; NULL where the set does
// not group by the key), then GroupingSetColumn (Int32, the set's ordinal
// in Sets), then, when a set is empty, GroupingRowColumn (TRUE; NULL on
// the one filler row per empty set that partition 0 emits at its end,
// whose other columns are all NULL). Partitioning is the input's; a hash
// repartition above it on the keys and the ordinal keeps every group of
// every set in one partition.
type Expand struct {
	Input    Plan
	Keys     []Expr
	KeyNames []string
	Sets     [][]int
}

// HasEmptySet reports whether a set groups by no key.
func (e *Expand) HasEmptySet() bool {
	for _, s := range e.Sets {
		if len(s) == 0 {
			return true
		}
	}
	return false
}

func (*Expand) isPlan() {}

func (e *Expand) Schema() *arrow.Schema {
	fs := append([]arrow.Field(nil), e.Input.Schema().Fields()...)
	for i, k := range e.Keys {
		fs = append(fs, arrow.Field{Name: e.KeyNames[i], Type: k.DataType(), Nullable: true})
	}
	fs = append(fs, arrow.Field{Name: GroupingSetColumn, Type: arrow.PrimitiveTypes.Int32})
	if e.HasEmptySet() {
		fs = append(fs, arrow.Field{Name: GroupingRowColumn, Type: arrow.FixedWidthTypes.Boolean, Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}
func (e *Expand) Children() []Plan           { return []Plan{e.Input} }
func (e *Expand) WithChildren(c []Plan) Plan { n := *e; n.Input = c[0]; return &n }
func (e *Expand) OutputPartitions() int      { return e.Input.OutputPartitions() }
func (e *Expand) String() string {
	parts := make([]string, len(e.Sets))
	for i, s := range e.Sets {
		ks := make([]string, len(s))
		for j, k := range s {
			ks[j] = fmt.Sprint(k)
		}
		parts[i] = "(" + strings.Join(ks, ", ") + ")"
	}
	return fmt.Sprintf("ExpandExec: keys=[%s], sets=[%s]", exprList(e.Keys), strings.Join(parts, ", "))
}
