package exec

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// valuesOp produces literal rows in batches of at most BatchSize rows. It
// builds all rows at Open (VALUES lists are small).
type valuesOp struct {
	tc     *execop.TaskContext
	n      *physical.Values
	batch  arrow.RecordBatch
	off    int64
	closed bool
}

func newValues(tc *execop.TaskContext, n *physical.Values, partition int) (execop.Operator, error) {
	for r, row := range n.Rows {
		if len(row) != n.OutSchema.NumFields() {
			return nil, qerr.Internalf("exec: values: row %d has %d values, want %d", r, len(row), n.OutSchema.NumFields())
		}
	}
	return &valuesOp{tc: tc, n: n}, nil
}

func (v *valuesOp) Open(ctx context.Context) error {
	schema := v.n.OutSchema
	cols := make([]arrow.Array, schema.NumFields())
	defer kernel.ReleaseArrays(cols)
	for c := range cols {
		a, err := literalColumn(v.tc, schema.Field(c), v.n.Rows, c)
		if err != nil {
			return err
		}
		cols[c] = a
	}
	v.batch = array.NewRecordBatch(schema, cols, int64(len(v.n.Rows)))
	return nil
}

// literalColumn builds column c of rows. The switch on the value's Go type
// runs per row, which is fine for VALUES lists and nowhere else.
func literalColumn(tc *execop.TaskContext, f arrow.Field, rows [][]*physical.Literal, c int) (arrow.Array, error) {
	bld := array.NewBuilder(tc.Mem, f.Type)
	defer bld.Release()
	bld.Reserve(len(rows))
	for r, row := range rows {
		lit := row[c]
		if lit == nil || lit.Value == nil {
			bld.AppendNull()
			continue
		}
		ok := false
		switch b := bld.(type) {
		case *array.BooleanBuilder:
			var x bool
			if x, ok = lit.Value.(bool); ok {
				b.Append(x)
			}
		case *array.Int32Builder:
			var x int32
			if x, ok = lit.Value.(int32); ok {
				b.Append(x)
			}
		case *array.Int64Builder:
			switch x := lit.Value.(type) {
			case int64:
				b.Append(x)
				ok = true
			case int32:
				b.Append(int64(x))
				ok = true
			}
		case *array.Float64Builder:
			var x float64
			if x, ok = lit.Value.(float64); ok {
				b.Append(x)
			}
		case *array.StringBuilder:
			var x string
			if x, ok = lit.Value.(string); ok {
				b.Append(x)
			}
		case *array.Decimal128Builder:
			var x decimal128.Num
			if x, ok = lit.Value.(decimal128.Num); ok {
				want := f.Type.(*arrow.Decimal128Type)
				if lt, isDec := lit.Type.(*arrow.Decimal128Type); isDec && lt.Scale != want.Scale {
					var err error
					if x, err = x.Rescale(lt.Scale, want.Scale); err != nil {
						return nil, qerr.Execf("exec: values: row %d column %q: %w", r, f.Name, err)
					}
				}
				b.Append(x)
			}
		case *array.Date32Builder:
			var x arrow.Date32
			if x, ok = lit.Value.(arrow.Date32); ok {
				b.Append(x)
			}
		case *array.TimestampBuilder:
			var x arrow.Timestamp
			if x, ok = lit.Value.(arrow.Timestamp); ok {
				b.Append(x)
			}
		case *array.Time64Builder:
			var x arrow.Time64
			if x, ok = lit.Value.(arrow.Time64); ok {
				b.Append(x)
			}
		case *array.MonthDayNanoIntervalBuilder:
			var x arrow.MonthDayNanoInterval
			if x, ok = lit.Value.(arrow.MonthDayNanoInterval); ok {
				b.Append(x)
			}
		case *array.NullBuilder:
		}
		if !ok {
			return nil, qerr.Internalf("exec: values: row %d column %q: literal %s (%T) does not fit type %s", r, f.Name, lit, lit.Value, f.Type)
		}
	}
	return bld.NewArray(), nil
}

func (v *valuesOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if v.batch == nil || v.off >= v.batch.NumRows() {
		return nil, io.EOF
	}
	end := min(v.batch.NumRows(), v.off+int64(v.tc.BatchRows()))
	out := v.batch.NewSlice(v.off, end)
	v.off = end
	return out, nil
}

func (v *valuesOp) Close() error {
	if v.closed {
		return nil
	}
	v.closed = true
	if v.batch != nil {
		v.batch.Release()
		v.batch = nil
	}
	return nil
}

// emptyOp produces nothing, or one row (of NULLs; normally of no columns).
type emptyOp struct {
	tc   *execop.TaskContext
	n    *physical.Empty
	done bool
}

func newEmpty(tc *execop.TaskContext, n *physical.Empty, partition int) (execop.Operator, error) {
	return &emptyOp{tc: tc, n: n, done: !n.ProduceOneRow}, nil
}

func (e *emptyOp) Open(ctx context.Context) error { return nil }

func (e *emptyOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.done {
		return nil, io.EOF
	}
	e.done = true
	cols := make([]arrow.Array, e.n.OutSchema.NumFields())
	defer kernel.ReleaseArrays(cols)
	for i, f := range e.n.OutSchema.Fields() {
		cols[i] = array.MakeArrayOfNull(e.tc.Mem, f.Type, 1)
	}
	return array.NewRecordBatch(e.n.OutSchema, cols, 1), nil
}

func (e *emptyOp) Close() error { return nil }
