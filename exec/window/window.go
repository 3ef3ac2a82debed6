package window

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/exec/sort"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// windowOp computes one partition of a Window node (see the package doc).
type windowOp struct {
	tc     *execop.TaskContext
	n      *physical.Window
	schema *arrow.Schema
	input  execop.Operator

	partKeys  *sort.SortKeyExprs
	partSpec  sort.SortSpec
	orderKeys *sort.SortKeyExprs
	orderSpec sort.SortSpec
	args      [][]kernel.ExprRunner // per function

	data     arrow.RecordBatch // all input rows
	cols     []arrow.Array     // one per function, over data's rows
	off      int
	done     bool
	reserved int64
	closed   bool
}

// scratchPerRow bounds the Go memory the computation holds per row at
// once, reserved before it starts: peer groups and partition starts (12
// bytes), a RANGE key as 8-byte values (twice for a DATE key under an
// interval offset) with validity (17), and one function's frame bounds
// (8), running state and counts (up to 25), widened input values (8), a
// float sum tree (16) and source rows (4).
const scratchPerRow = 96

// NewWindow builds the operator for partition of n.
func NewWindow(tc *execop.TaskContext, n *physical.Window, partition int) (execop.Operator, error) {
	partSort := make([]physical.SortKey, len(n.PartitionBy))
	for i, e := range n.PartitionBy {
		partSort[i] = physical.SortKey{Expr: e, Asc: true}
	}
	pk, err := sort.CompileSortKeys(partSort)
	if err != nil {
		return nil, err
	}
	ok, err := sort.CompileSortKeys(n.OrderBy)
	if err != nil {
		return nil, err
	}
	args := make([][]kernel.ExprRunner, len(n.Funcs))
	for i, f := range n.Funcs {
		if err := checkFunc(f, n.OrderBy); err != nil {
			return nil, err
		}
		if args[i], err = kernel.CompileExprs(f.Args); err != nil {
			return nil, err
		}
	}
	input, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	return &windowOp{
		tc: tc, n: n, schema: n.Schema(), input: input,
		partKeys: pk, partSpec: sort.NewSortSpec(partSort),
		orderKeys: ok, orderSpec: sort.NewSortSpec(n.OrderBy),
		args: args,
	}, nil
}

// checkFunc refuses what the operator cannot compute (a plan from
// elsewhere than the planner): wrong arities, non-constant parameters,
// RANGE offsets over an unusable ORDER BY.
func checkFunc(f physical.WindowFuncExpr, orderBy []physical.SortKey) error {
	want := map[physical.WindowFunc]int{
		physical.WinNtile: 1, physical.WinLag: 3, physical.WinLead: 3,
		physical.WinFirstValue: 1, physical.WinLastValue: 1, physical.WinNthValue: 2,
	}
	switch f.Func {
	case physical.WinAggregate:
		lo, hi := 1, 1
		switch f.Agg {
		case physical.AggCount:
			lo = 0
		case physical.AggSum, physical.AggAvg, physical.AggMin, physical.AggMax:
		case physical.AggArrayAgg, physical.AggStringAgg:
			if f.Agg == physical.AggStringAgg {
				lo, hi = 2, 2
			}
			if f.Distinct {
				return qerr.NotImplementedf("exec: window %s(DISTINCT ...) is not supported", f.Agg)
			}
			lo, hi = lo+len(f.Order), hi+len(f.Order)
		default:
			return qerr.NotImplementedf("exec: window aggregate %s is not supported", f.Agg)
		}
		if len(f.Order) > 0 && f.Agg != physical.AggArrayAgg && f.Agg != physical.AggStringAgg {
			return qerr.Internalf("exec: window %s with ORDER BY keys", f.Agg)
		}
		if len(f.Args) < lo || len(f.Args) > hi {
			return qerr.Internalf("exec: window %s with %d arguments", f.Agg, len(f.Args))
		}
	default:
		if len(f.Args) != want[f.Func] {
			return qerr.Internalf("exec: window %s with %d arguments", f.Func, len(f.Args))
		}
	}
	switch f.Func {
	case physical.WinNtile:
		if n, ok := constInt(f.Args[0]); !ok || n < 1 {
			return qerr.Internalf("exec: ntile needs a positive constant")
		}
	case physical.WinLag, physical.WinLead:
		if n, ok := constInt(f.Args[1]); !ok || n < 0 {
			return qerr.Internalf("exec: %s needs a non-negative constant offset", f.Func)
		}
	case physical.WinNthValue:
		if n, ok := constInt(f.Args[1]); !ok || n < 1 {
			return qerr.Internalf("exec: nth_value needs a positive constant")
		}
	}
	if want := resultType(f); want == nil || !arrow.TypeEqual(want, f.Type) {
		return qerr.Internalf("exec: window %s has type %s, computes %v", f, f.Type, want)
	}
	fr := f.Frame
	if fr.Unit == physical.FrameRange && (isOffset(fr.Start) || isOffset(fr.End)) {
		if len(orderBy) != 1 {
			return qerr.Internalf("exec: a RANGE offset needs one ORDER BY key")
		}
		kt := orderBy[0].Expr.DataType()
		if _, ok := rangeKind(kt); !ok {
			return qerr.NotImplementedf("exec: RANGE offsets over %s are not supported", kt)
		}
		for _, b := range []physical.FrameBound{fr.Start, fr.End} {
			if err := checkRangeOffset(b, kt); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRangeOffset refuses an offset the key cannot take: an interval but
// over a DATE or TIMESTAMP, a plain number over a TIMESTAMP, a fraction
// but over a float or DECIMAL, or a DECIMAL offset of more than 38 digits
// at the key's scale.
func checkRangeOffset(b physical.FrameBound, kt arrow.DataType) error {
	if !isOffset(b) {
		return nil
	}
	id := kt.ID()
	switch {
	case b.Offset < 0 || b.Scale < 0:
		return qerr.Internalf("exec: negative RANGE offset %s", b)
	case b.IsInterval:
		if id != arrow.DATE32 && id != arrow.TIMESTAMP {
			return qerr.Internalf("exec: interval RANGE offset over %s", kt)
		}
	case id == arrow.TIMESTAMP:
		return qerr.Internalf("exec: RANGE offset %s over a timestamp", b)
	case b.Scale > 0 && id != arrow.FLOAT32 && id != arrow.FLOAT64 && id != arrow.DECIMAL128:
		return qerr.Internalf("exec: fractional RANGE offset %s over %s", b, kt)
	case id == arrow.DECIMAL128:
		if _, ok := scaledOffset(b, kt.(*arrow.Decimal128Type).Scale); !ok {
			return qerr.Execf("exec: RANGE offset %s is too large for %s", b, kt)
		}
	}
	return nil
}

// resultType is the type the operator computes for f (nil: none it can).
func resultType(f physical.WindowFuncExpr) arrow.DataType {
	switch f.Func {
	case physical.WinRowNumber, physical.WinRank, physical.WinDenseRank, physical.WinNtile:
		return arrow.PrimitiveTypes.Int64
	case physical.WinPercentRank, physical.WinCumeDist:
		return arrow.PrimitiveTypes.Float64
	case physical.WinAggregate:
		switch f.Agg {
		case physical.AggStringAgg:
			if f.Args[0].DataType().ID() != arrow.STRING || f.Args[1].DataType().ID() != arrow.STRING {
				return nil
			}
			return arrow.BinaryTypes.String
		case physical.AggArrayAgg:
			if lt, ok := f.Type.(*arrow.ListType); ok && arrow.TypeEqual(lt.Elem(), f.Args[0].DataType()) {
				return f.Type
			}
			return nil
		case physical.AggCount:
			return arrow.PrimitiveTypes.Int64
		case physical.AggAvg:
			return arrow.PrimitiveTypes.Float64
		case physical.AggSum:
			t := f.Args[0].DataType()
			if d, ok := t.(*arrow.Decimal128Type); ok {
				return &arrow.Decimal128Type{Precision: 38, Scale: d.Scale}
			}
			if _, ok := rangeKind(t); ok && t.ID() != arrow.DATE32 {
				if arrow.IsFloating(t.ID()) {
					return arrow.PrimitiveTypes.Float64
				}
				return arrow.PrimitiveTypes.Int64
			}
			return nil
		}
	}
	return f.Args[0].DataType()
}

func isOffset(b physical.FrameBound) bool {
	return b.Kind == physical.Preceding || b.Kind == physical.Following
}

func constInt(e physical.Expr) (int64, bool) {
	l, ok := e.(*physical.Literal)
	if !ok {
		return 0, false
	}
	switch v := l.Value.(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	}
	return 0, false
}

func (w *windowOp) Open(ctx context.Context) error { return w.input.Open(ctx) }

func (w *windowOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !w.done {
		if err := w.compute(ctx); err != nil {
			return nil, err
		}
		w.done = true
	}
	if w.data == nil || w.off >= int(w.data.NumRows()) {
		return nil, io.EOF
	}
	start := w.off
	end := min(int(w.data.NumRows()), start+w.tc.BatchRows())
	in := w.data.NewSlice(int64(start), int64(end))
	defer in.Release()
	cols := make([]arrow.Array, 0, w.schema.NumFields())
	cols = append(cols, in.Columns()...)
	slices := make([]arrow.Array, len(w.cols))
	for i, c := range w.cols {
		slices[i] = array.NewSlice(c, int64(start), int64(end))
	}
	defer kernel.ReleaseArrays(slices)
	cols = append(cols, slices...)
	w.off = end
	return array.NewRecordBatch(w.schema, cols, int64(end-start)), nil
}

// compute drains the input and computes every function's column.
func (w *windowOp) compute(ctx context.Context) error {
	var buf []arrow.RecordBatch
	defer func() { execop.ReleaseAll(buf) }()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := w.input.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		buf = append(buf, b)
	}
	if err := w.input.Close(); err != nil {
		return err
	}
	if len(buf) == 0 {
		return nil
	}
	in := w.n.Input.Schema()
	all, err := kernel.ConcatBatches(w.tc.Mem, in, buf)
	if err != nil {
		return err
	}
	w.data = all
	n := int(all.NumRows())
	if err := w.grow(int64(n) * scratchPerRow); err != nil {
		return err
	}
	l, err := w.layout(ctx, all)
	if err != nil {
		return err
	}
	for i, f := range w.n.Funcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := w.function(ctx, l, f, w.args[i], all)
		if err != nil {
			return err
		}
		w.cols = append(w.cols, c)
	}
	return nil
}

func (w *windowOp) grow(b int64) error {
	if err := w.tc.Grow(b); err != nil {
		return err
	}
	w.reserved += b
	return nil
}

func (w *windowOp) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	kernel.ReleaseArrays(w.cols)
	w.cols = nil
	if w.data != nil {
		w.data.Release()
		w.data = nil
	}
	w.tc.Shrink(w.reserved)
	w.reserved = 0
	return w.input.Close()
}
