package logical

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// WindowFunc is the function a WindowExpr computes.
type WindowFunc int

// Window functions. WinAggregate is an aggregate (WindowExpr.Agg) over the
// row's frame; the ranking functions ignore the frame; FIRST_VALUE,
// LAST_VALUE and NTH_VALUE read it; LAG and LEAD read rows at an offset
// within the partition.
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

var windowFuncNames = [...]string{"aggregate", "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value"}

func (f WindowFunc) String() string { return windowFuncNames[f] }

// ParseWindowFunc maps a lower-case name to a window-only function (not an
// aggregate: those are WinAggregate with ParseAggFunc).
func ParseWindowFunc(name string) (WindowFunc, bool) {
	for i, n := range windowFuncNames {
		if i > 0 && n == name {
			return WindowFunc(i), true
		}
	}
	return 0, false
}

// FrameUnit is how a frame's offsets count: rows, peer groups, or values
// of the single ORDER BY key.
type FrameUnit int

// Frame units.
const (
	FrameRows FrameUnit = iota
	FrameRange
	FrameGroups
)

func (u FrameUnit) String() string { return [...]string{"ROWS", "RANGE", "GROUPS"}[u] }

// BoundKind is the kind of one end of a frame.
type BoundKind int

// Frame bound kinds, in the order the standard requires a frame's start not
// to come after its end.
const (
	UnboundedPreceding BoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset (≥ 0) is for Preceding and
// Following: rows, peer groups, or (RANGE) the distance in the ORDER BY
// key's units (days for a DATE key). A RANGE offset may also be a
// decimal fraction, Offset × 10^-Scale (over a DOUBLE or DECIMAL key), or
// an interval (IsInterval, over a DATE or TIMESTAMP key).
type FrameBound struct {
	Kind       BoundKind
	Offset     int64
	Scale      int32
	IsInterval bool
	Interval   arrow.MonthDayNanoInterval
}

func (b FrameBound) String() string {
	switch b.Kind {
	case UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case Preceding:
		return b.OffsetString() + " PRECEDING"
	case CurrentRow:
		return "CURRENT ROW"
	case Following:
		return b.OffsetString() + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

// OffsetString is the offset as SQL: 3, 1.5 or INTERVAL '1 mon'.
func (b FrameBound) OffsetString() string {
	if b.IsInterval {
		return "INTERVAL '" + temporal.FormatInterval(b.Interval) + "'"
	}
	return decimal128.FromI64(b.Offset).ToString(max(b.Scale, 0))
}

// WindowFrame is the rows of a partition a window function sees for one
// row: from Start to End, both inclusive.
type WindowFrame struct {
	Unit       FrameUnit
	Start, End FrameBound
}

func (f WindowFrame) String() string {
	return fmt.Sprintf("%s BETWEEN %s AND %s", f.Unit, f.Start, f.End)
}

// DefaultFrame is the SQL standard's frame when none is written: with an
// ORDER BY, from the partition's start to the current row and its peers
// (RANGE UNBOUNDED PRECEDING); without, the whole partition.
func DefaultFrame(ordered bool) WindowFrame {
	if ordered {
		return WindowFrame{Unit: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}
	}
	return WindowFrame{Unit: FrameRows, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: UnboundedFollowing}}
}

// CheckFrame validates f for a window ordered by orderBy: the start may not
// be UNBOUNDED FOLLOWING nor the end UNBOUNDED PRECEDING, the start may not
// come after the end by kind, offsets are ≥ 0, ROWS and GROUPS offsets are
// whole numbers, and a RANGE frame with an offset needs exactly one ORDER
// BY key whose type the offset can be added to (see checkRangeOffset).
func CheckFrame(f WindowFrame, orderBy []SortKey, s *Schema) error {
	if f.Start.Kind == UnboundedFollowing {
		return qerr.Planf("a window frame cannot start at UNBOUNDED FOLLOWING")
	}
	if f.End.Kind == UnboundedPreceding {
		return qerr.Planf("a window frame cannot end at UNBOUNDED PRECEDING")
	}
	if f.Start.Kind > f.End.Kind {
		return qerr.Planf("window frame %s starts after it ends", f)
	}
	if f.Start.Offset < 0 || f.End.Offset < 0 || f.Start.Scale < 0 || f.End.Scale < 0 {
		return qerr.Planf("window frame offsets must not be negative (%s)", f)
	}
	offset := f.Start.Kind == Preceding || f.Start.Kind == Following || f.End.Kind == Preceding || f.End.Kind == Following
	if !offset {
		return nil
	}
	if f.Unit != FrameRange {
		for _, b := range []FrameBound{f.Start, f.End} {
			if b.Scale != 0 || b.IsInterval {
				return qerr.Planf("a %s frame offset counts %s and must be a non-negative integer, not %s", f.Unit, map[FrameUnit]string{FrameRows: "rows", FrameGroups: "peer groups"}[f.Unit], b.OffsetString())
			}
		}
		return nil
	}
	if len(orderBy) != 1 {
		return qerr.Planf("RANGE with an offset needs exactly one ORDER BY key, got %d", len(orderBy))
	}
	t, _, err := orderBy[0].Expr.DataType(s)
	if err != nil {
		return err
	}
	for _, b := range []FrameBound{f.Start, f.End} {
		if b.Kind == Preceding || b.Kind == Following {
			if err := checkRangeOffset(b, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRangeOffset checks that a RANGE offset can be added to an ORDER BY
// key of type t, as PostgreSQL allows: an interval to a DATE or TIMESTAMP,
// a fraction to a DOUBLE or DECIMAL, a whole number to any number (and,
// as days, to a DATE); intervals must not be negative.
func checkRangeOffset(b FrameBound, t arrow.DataType) error {
	switch {
	case !IsNumeric(t) && t.ID() != arrow.DATE32 && t.ID() != arrow.TIMESTAMP:
		return qerr.Planf("RANGE with an offset needs a numeric, date or timestamp ORDER BY key, not %s", TypeString(t))
	case b.IsInterval:
		if t.ID() != arrow.DATE32 && t.ID() != arrow.TIMESTAMP {
			return qerr.Planf("RANGE offset %s needs a DATE or TIMESTAMP ORDER BY key, not %s", b.OffsetString(), TypeString(t))
		}
		if temporal.CompareIntervals(b.Interval, arrow.MonthDayNanoInterval{}) < 0 {
			return qerr.Planf("window frame offsets must not be negative (%s)", b.OffsetString())
		}
	case t.ID() == arrow.TIMESTAMP:
		return qerr.Planf("RANGE over a TIMESTAMP ORDER BY key needs an INTERVAL offset (INTERVAL '1 day' PRECEDING), not %s", b.OffsetString())
	case b.Scale > 0:
		if classOf(t) != classFloat && classOf(t) != classDecimal {
			return qerr.Planf("RANGE offset %s is not a whole number, which a %s ORDER BY key needs (fractions need a DOUBLE or DECIMAL key)", b.OffsetString(), TypeString(t))
		}
	}
	return nil
}

// WindowExpr is a window function call: Func (or the aggregate Agg) over
// the rows of its partition (rows equal on PartitionBy), ordered by
// OrderBy, within Frame. It may appear only in a Window plan's list.
//
// Args by Func: an aggregate its one argument (none for COUNT(*));
// NTILE [buckets]; LAG and LEAD [value, offset, default] with a constant
// non-negative offset and a default of value's type; FIRST_VALUE and
// LAST_VALUE [value]; NTH_VALUE [value, n] with a constant n ≥ 1; the
// other ranking functions none. Frame is always explicit (DefaultFrame
// when the query wrote none).
type WindowExpr struct {
	Func        WindowFunc
	Agg         AggFunc
	Args        []Expr
	PartitionBy []Expr
	OrderBy     []SortKey
	Frame       WindowFrame
	// IgnoreNulls (LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE) skips
	// the rows whose value is NULL; Distinct (an aggregate over the whole
	// partition) aggregates each distinct non-NULL value once.
	IgnoreNulls bool
	Distinct    bool
	// Order is ORDER BY inside array_agg or string_agg, one entry per
	// key: the last len(Order) Args are the keys.
	Order []AggOrder
}

func (*WindowExpr) isExpr() {}

// Name is the function's name (the aggregate's for WinAggregate).
func (w *WindowExpr) Name() string {
	if w.Func == WinAggregate {
		return w.Agg.String()
	}
	return w.Func.String()
}

func (w *WindowExpr) String() string {
	var b strings.Builder
	b.WriteString(w.Name())
	b.WriteByte('(')
	if w.Distinct {
		b.WriteString("DISTINCT ")
	}
	if w.Func == WinAggregate && len(w.Args) == 0 {
		b.WriteByte('*')
	}
	n := len(w.Args) - len(w.Order)
	writeList(&b, w.Args[:n])
	for i, o := range w.Order {
		if i == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		writeExpr(&b, w.Args[n+i])
		if o.Desc {
			b.WriteString(" DESC")
		}
		if o.NullsFirst != o.Desc { // PostgreSQL's default is NULLS FIRST for DESC only
			if o.NullsFirst {
				b.WriteString(" NULLS FIRST")
			} else {
				b.WriteString(" NULLS LAST")
			}
		}
	}
	b.WriteByte(')')
	if w.IgnoreNulls {
		b.WriteString(" IGNORE NULLS")
	}
	b.WriteString(" OVER (")
	sep := ""
	if len(w.PartitionBy) > 0 {
		b.WriteString("PARTITION BY ")
		writeList(&b, w.PartitionBy)
		sep = " "
	}
	if len(w.OrderBy) > 0 {
		b.WriteString(sep + "ORDER BY ")
		for i, k := range w.OrderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k.String())
		}
		sep = " "
	}
	if w.Frame != DefaultFrame(len(w.OrderBy) > 0) && w.framed() {
		b.WriteString(sep + w.Frame.String())
	}
	b.WriteByte(')')
	return b.String()
}

// framed reports whether the function reads its frame (ranking functions,
// LAG and LEAD do not).
func (w *WindowExpr) framed() bool {
	switch w.Func {
	case WinAggregate, WinFirstValue, WinLastValue, WinNthValue:
		return true
	}
	return false
}

func (w *WindowExpr) Children() []Expr {
	out := make([]Expr, 0, len(w.Args)+len(w.PartitionBy)+len(w.OrderBy))
	out = append(out, w.Args...)
	out = append(out, w.PartitionBy...)
	for _, k := range w.OrderBy {
		out = append(out, k.Expr)
	}
	return out
}

func (w *WindowExpr) WithChildren(c []Expr) Expr {
	n := *w
	a, p := len(w.Args), len(w.PartitionBy)
	n.Args = append([]Expr(nil), c[:a]...)
	n.PartitionBy = append([]Expr(nil), c[a:a+p]...)
	n.OrderBy = make([]SortKey, len(w.OrderBy))
	for i, k := range w.OrderBy {
		k.Expr = c[a+p+i]
		n.OrderBy[i] = k
	}
	return &n
}

// SameWindow reports whether w and o partition and order their rows alike,
// so that one sort serves both.
func (w *WindowExpr) SameWindow(o *WindowExpr) bool {
	if len(w.PartitionBy) != len(o.PartitionBy) || len(w.OrderBy) != len(o.OrderBy) {
		return false
	}
	for i := range w.PartitionBy {
		if w.PartitionBy[i].String() != o.PartitionBy[i].String() {
			return false
		}
	}
	for i := range w.OrderBy {
		if w.OrderBy[i].String() != o.OrderBy[i].String() {
			return false
		}
	}
	return true
}

func (w *WindowExpr) DataType(s *Schema) (arrow.DataType, bool, error) {
	for _, e := range w.Children() {
		if _, _, err := e.DataType(s); err != nil {
			return nil, false, err
		}
	}
	if err := w.arity(); err != nil {
		return nil, false, err
	}
	switch w.Func {
	case WinAggregate:
		if len(w.Args) == 0 {
			return Int64, false, nil
		}
		t, _, _ := w.Args[0].DataType(s)
		rt, err := AggregateType(w.Agg, t)
		return rt, w.Agg != AggCount, err
	case WinRowNumber, WinRank, WinDenseRank, WinNtile:
		return Int64, false, nil
	case WinPercentRank, WinCumeDist:
		return Float64, false, nil
	}
	t, _, _ := w.Args[0].DataType(s)
	return t, true, nil
}

// arity checks the number of arguments of w.Func.
func (w *WindowExpr) arity() error {
	lo, hi := 0, 0
	switch w.Func {
	case WinAggregate:
		lo, hi = 1, 1
		switch w.Agg {
		case AggCount:
			lo = 0
		case AggStringAgg:
			lo, hi = 2, 2
		}
		if len(w.Order) > 0 && w.Agg != AggArrayAgg && w.Agg != AggStringAgg {
			return qerr.Planf("ORDER BY inside a window function applies to array_agg and string_agg, not %s", w.Name())
		}
		lo += len(w.Order)
		hi += len(w.Order)
	case WinNtile, WinFirstValue, WinLastValue:
		lo, hi = 1, 1
	case WinLag, WinLead:
		lo, hi = 3, 3
	case WinNthValue:
		lo, hi = 2, 2
	}
	if len(w.Args) < lo || len(w.Args) > hi {
		return qerr.Planf("window function %s takes %d to %d arguments, got %d", w.Name(), lo, hi, len(w.Args))
	}
	return nil
}

// check validates what DataType cannot see through coercion's stand-ins:
// the constant arguments, LAG/LEAD's default type, and the frame.
func (w *WindowExpr) check(s *Schema) error {
	if err := w.arity(); err != nil {
		return err
	}
	if err := w.checkModifiers(); err != nil {
		return err
	}
	switch w.Func {
	case WinAggregate:
		switch w.Agg {
		case AggCount, AggSum, AggAvg, AggMin, AggMax:
		case AggArrayAgg, AggStringAgg:
			if w.Distinct {
				return qerr.NotImplementedf("window %s(DISTINCT ...) is not supported", w.Name())
			}
			n := len(w.Args) - len(w.Order)
			for _, k := range w.Args[n:] {
				t, _, err := k.DataType(s)
				if err != nil {
					return err
				}
				switch t.ID() {
				case arrow.LIST, arrow.STRUCT, arrow.MAP:
					return qerr.Planf("function %s cannot order by %s", w.Name(), TypeString(t))
				}
			}
		default:
			return qerr.NotImplementedf("window function %s is not supported", w.Name())
		}
	case WinNtile:
		if n, ok := IntConst(w.Args[0]); !ok || n < 1 {
			return qerr.Planf("ntile takes a positive integer constant, not %s", w.Args[0])
		}
	case WinLag, WinLead:
		if n, ok := IntConst(w.Args[1]); !ok || n < 0 {
			return qerr.Planf("%s takes a non-negative integer constant offset, not %s", w.Name(), w.Args[1])
		}
		t, _, err := w.Args[0].DataType(s)
		if err != nil {
			return err
		}
		if dt, _, err := w.Args[2].DataType(s); err != nil {
			return err
		} else if dt.ID() != arrow.NULL && !arrow.TypeEqual(dt, t) {
			return qerr.Planf("%s: the default %s has type %s, the value %s", w.Name(), w.Args[2], TypeString(dt), TypeString(t))
		}
	case WinNthValue:
		if n, ok := IntConst(w.Args[1]); !ok || n < 1 {
			return qerr.Planf("nth_value takes a positive integer constant, not %s", w.Args[1])
		}
	}
	return CheckFrame(w.Frame, w.OrderBy, s)
}

// window coerces w's children: an aggregate's argument as in an
// AggExpr, LAG/LEAD's default to the value's type.
func (c *coercer) window(w *WindowExpr) (Expr, error) {
	ch, ts, err := c.exprs(w.Children())
	if err != nil {
		return nil, err
	}
	n := w.WithChildren(ch).(*WindowExpr)
	switch w.Func {
	case WinAggregate:
		switch {
		case w.Agg == AggStringAgg && len(n.Args) >= 2:
			if !IsString(ts[1]) && ts[1].ID() != arrow.NULL {
				return nil, qerr.Planf("function %s needs a text separator, not %s", w.Agg, TypeString(ts[1]))
			}
			n.Args[0], n.Args[1] = toString(n.Args[0], ts[0]), toString(n.Args[1], ts[1])
		case len(n.Args) >= 1:
			t := ts[0]
			numeric := w.Agg != AggCount && w.Agg != AggMin && w.Agg != AggMax && w.Agg != AggArrayAgg
			if numeric && !IsNumeric(t) && t.ID() != arrow.NULL {
				return nil, qerr.Planf("function %s needs a numeric argument, not %s", w.Agg, TypeString(t))
			}
			if t.ID() == arrow.NULL && w.Agg != AggCount {
				n.Args[0] = CastTo(n.Args[0], Int64)
			}
		}
	case WinLag, WinLead:
		if len(n.Args) == 3 && !arrow.TypeEqual(ts[0], ts[2]) {
			switch {
			case ts[0].ID() == arrow.NULL:
				n.Args[0] = CastTo(n.Args[0], ts[2])
			case ts[2].ID() == arrow.NULL || CanCast(ts[2], ts[0]):
				n.Args[2] = CastTo(n.Args[2], ts[0])
			}
		}
	case WinNtile, WinNthValue:
		// The constant is read as an integer: a cast of a literal folds.
		i := len(n.Args) - 1
		if ts[i].ID() != arrow.INT64 {
			n.Args[i] = CastTo(n.Args[i], Int64)
		}
	}
	return n, nil
}

// ---- Window -----------------------------------------------------------------

// Window computes window functions: its output is every input row with
// one more column per expression of List (each a *WindowExpr, possibly
// under an Alias), in order. Rows keep no particular order.
type Window struct {
	Input  Plan
	List   []Expr
	TopK   WindowTopK
	schema *Schema
}

// WindowTopK records that the window's only consumer is a filter passing
// only rows whose Func (row_number, rank or dense_rank), over the window
// every function of List shares, is at most K; the physical plan may then
// drop each window partition's other rows before computing the window. K 0
// is no such filter.
type WindowTopK struct {
	Func WindowFunc
	K    int64
}

// WithTopK returns a copy of w carrying t.
func (w *Window) WithTopK(t WindowTopK) *Window {
	n := *w
	n.TopK = t
	return &n
}

// NewWindow types the window expressions over input.
func NewWindow(input Plan, list []Expr) (*Window, error) {
	if len(list) == 0 {
		return nil, qerr.Internalf("a window node needs at least one window function")
	}
	in := input.Schema()
	fs := append([]Field(nil), in.Fields...)
	for _, e := range list {
		w, ok := StripAlias(e).(*WindowExpr)
		if !ok {
			return nil, qerr.Planf("%s is not a window function", e)
		}
		if err := w.check(in); err != nil {
			return nil, err
		}
		f, err := FieldOf(e, in)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return &Window{Input: input, List: list, schema: &Schema{Fields: fs}}, nil
}

func (*Window) isPlan()            {}
func (w *Window) Schema() *Schema  { return w.schema }
func (w *Window) Children() []Plan { return []Plan{w.Input} }
func (w *Window) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(w, c, 1); err != nil {
		return nil, err
	}
	n, err := NewWindow(c[0], w.List)
	if err != nil {
		return nil, err
	}
	n.TopK = w.TopK
	return n, nil
}
func (w *Window) Exprs() []Expr                    { return w.List }
func (w *Window) WithExprs(e []Expr) (Plan, error) { return NewWindow(w.Input, e) }
func (w *Window) String() string {
	if w.TopK.K > 0 {
		return fmt.Sprintf("WindowAggr: %s, topk=%s<=%d", exprList(w.List), w.TopK.Func, w.TopK.K)
	}
	return "WindowAggr: " + exprList(w.List)
}

// checkModifiers validates IGNORE NULLS and DISTINCT: IGNORE NULLS only on
// the functions that read a value from another row, DISTINCT only on an
// aggregate with an argument whose frame is the whole partition (each
// value is counted once per partition, not per frame).
func (w *WindowExpr) checkModifiers() error {
	if w.IgnoreNulls {
		switch w.Func {
		case WinLag, WinLead, WinFirstValue, WinLastValue, WinNthValue:
		default:
			return qerr.Planf("IGNORE NULLS applies to lag, lead, first_value, last_value and nth_value, not %s", w.Name())
		}
	}
	if w.Distinct {
		if w.Func != WinAggregate {
			return qerr.Planf("DISTINCT applies to aggregate window functions, not %s", w.Name())
		}
		if len(w.Args) == 0 {
			return qerr.Planf("%s(DISTINCT *) is not valid; name a column", w.Name())
		}
		if w.Frame.Start.Kind != UnboundedPreceding || w.Frame.End.Kind != UnboundedFollowing {
			return qerr.NotImplementedf("window %s(DISTINCT ...) is supported over the whole partition only (no ORDER BY, or ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING), not %s", w.Name(), w.Frame)
		}
	}
	return nil
}
