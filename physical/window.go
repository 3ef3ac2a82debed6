package physical

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/temporal"
)

// WindowFunc mirrors logical.WindowFunc.
type WindowFunc int

// Window functions (see logical.WindowFunc).
const (
	WinAggregate WindowFunc = iota
	WinRowNumber
	WinRank
	WinDenseRank
	WinPercentRank
	WinCumeDist
	WinNtile
	WinLag
	WinLead
	WinFirstValue
	WinLastValue
	WinNthValue
)

func (f WindowFunc) String() string {
	return [...]string{"aggregate", "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value"}[f]
}

// FrameUnit mirrors logical.FrameUnit.
type FrameUnit int

// Frame units.
const (
	FrameRows FrameUnit = iota
	FrameRange
	FrameGroups
)

// BoundKind mirrors logical.BoundKind.
type BoundKind int

// Frame bound kinds.
const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset for Preceding and Following,
// with Scale and IsInterval/Interval as in logical.FrameBound.
type FrameBound struct {
	Kind       BoundKind
	Offset     int64
	Scale      int32
	IsInterval bool
	Interval   arrow.MonthDayNanoInterval
}

// WindowFrame is a window function's frame, both ends inclusive.
type WindowFrame struct {
	Unit       FrameUnit
	Start, End FrameBound
}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case Preceding:
		return b.offsetString() + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case Following:
		return b.offsetString() + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

// offsetString writes the offset as logical.FrameBound.OffsetString does.
func (b FrameBound) offsetString() string {
	if b.IsInterval {
		return "INTERVAL '" + temporal.FormatInterval(b.Interval) + "'"
	}
	return decimal128.FromI64(b.Offset).ToString(max(b.Scale, 0))
}

func (f WindowFrame) String() string {
	return fmt.Sprintf("%s BETWEEN %s AND %s", [...]string{"ROWS", "RANGE", "GROUPS"}[f.Unit], f.Start, f.End)
}

// WindowFuncExpr is one function of a Window node. Args as in
// logical.WindowExpr (constants included); Type is the result type and
// Name the output column's.
type WindowFuncExpr struct {
	Func  WindowFunc
	Agg   AggFunc // for WinAggregate
	Args  []Expr
	Frame WindowFrame
	Type  arrow.DataType
	Name  string
	// IgnoreNulls, Distinct and Order (array_agg's and string_agg's
	// ORDER BY: the last len(Order) Args are its keys) as in
	// logical.WindowExpr.
	IgnoreNulls bool
	Distinct    bool
	Order       []AggOrder
}

func (f WindowFuncExpr) String() string {
	name := f.Func.String()
	if f.Func == WinAggregate {
		name = f.Agg.String()
	}
	n := len(f.Args) - len(f.Order)
	args := exprList(f.Args[:n])
	for i, o := range f.Order {
		sep := ", "
		if i == 0 {
			sep = " ORDER BY "
		}
		args += sep + f.Args[n+i].String()
		if o.Desc {
			args += " DESC"
		}
		if o.NullsFirst {
			args += " NULLS FIRST"
		} else {
			args += " NULLS LAST"
		}
	}
	if f.Func == WinAggregate && len(f.Args) == 0 {
		args = "*"
	}
	if f.Distinct {
		args = "DISTINCT " + args
	}
	out := fmt.Sprintf("%s(%s)", name, args)
	if f.IgnoreNulls {
		out += " IGNORE NULLS"
	}
	switch f.Func {
	case WinAggregate, WinFirstValue, WinLastValue, WinNthValue:
		out += " " + f.Frame.String()
	}
	return out
}

// Window computes window functions over each input partition. Contract on
// its input: every window partition (the rows equal on PartitionBy, NULLs
// equal) lies within one input partition, and each input partition is
// sorted by PartitionBy then OrderBy (the planner puts a hash Repartition
// on PartitionBy, or a single partition, and a Sort below it). Output: the
// input rows in input order, then one column per function; partitioning
// and order are the input's.
type Window struct {
	Input       Plan
	PartitionBy []Expr
	OrderBy     []SortKey
	Funcs       []WindowFuncExpr
}

func (*Window) isPlan() {}

func (w *Window) Schema() *arrow.Schema {
	fs := append([]arrow.Field(nil), w.Input.Schema().Fields()...)
	for _, f := range w.Funcs {
		nullable := true
		switch f.Func {
		case WinRowNumber, WinRank, WinDenseRank, WinPercentRank, WinCumeDist, WinNtile:
			nullable = false
		case WinAggregate:
			nullable = f.Agg != AggCount
		}
		fs = append(fs, arrow.Field{Name: f.Name, Type: f.Type, Nullable: nullable})
	}
	return arrow.NewSchema(fs, nil)
}
func (w *Window) Children() []Plan           { return []Plan{w.Input} }
func (w *Window) WithChildren(c []Plan) Plan { n := *w; n.Input = c[0]; return &n }
func (w *Window) OutputPartitions() int      { return w.Input.OutputPartitions() }
func (w *Window) String() string {
	fs := make([]string, len(w.Funcs))
	for i, f := range w.Funcs {
		fs[i] = f.String()
	}
	return fmt.Sprintf("WindowAggExec: partition_by=[%s], order_by=[%s], funcs=[%s]", exprList(w.PartitionBy), sortKeys(w.OrderBy), strings.Join(fs, ", "))
}
