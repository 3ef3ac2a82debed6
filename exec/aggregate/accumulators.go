package aggregate

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Aggregate accumulators: typed flat slices indexed by group id, updated
// vector-at-a-time over (group id, value) pairs. Every method switches on
// the input type once per call (per batch), never per row.

// accumulator is the state of one aggregate over all groups of one
// hashAggregate. Not safe for concurrent use.
type accumulator interface {
	// resize makes room for groups [0, n); new groups start empty.
	resize(n int)
	// update folds arg[i] into group groups[i] for every row i (Partial and
	// Single modes). arg is nil for COUNT(*). NULL values are skipped.
	update(ctx context.Context, groups []uint32, arg arrow.Array) error
	// merge folds partial states (the StateFields columns) into the groups
	// (Final mode).
	merge(ctx context.Context, groups []uint32, state []arrow.Array) error
	// final returns the results of groups [start, end).
	final(m *kernel.ArrayMaker, start, end int) arrow.Array
	// state returns the partial states of groups [start, end), one array per
	// StateField.
	state(m *kernel.ArrayMaker, start, end int) []arrow.Array
	// bytesPerGroup is the state's size per group, for memory accounting.
	bytesPerGroup() int64
}

// allNull reports whether arr has no non-NULL value (nothing to aggregate).
func allNull(arr arrow.Array) bool { return arr.NullN() == arr.Len() }

// newAccumulator returns the accumulator for a, whose input values have type
// argType (ignored for COUNT(*)).
func newAccumulator(a physical.AggregateExpr, argType arrow.DataType, mode physical.AggMode, mem memory.Allocator) (accumulator, error) {
	if a.Collects() {
		// Its state holds every row, so DISTINCT is its own business.
		return newCollectAcc(a)
	}
	plain := a
	plain.SetState = false // the inner aggregate of a set keeps the plain state layout
	acc, err := newPlainAccumulator(plain, argType)
	if err != nil {
		return nil, err
	}
	if a.Distinct && a.Arg != nil && a.SetState {
		if distinctIntType(argType) {
			return newDistinctSetAcc(acc, argType, mode == physical.AggPartial, mem), nil
		}
		if mode != physical.AggFinal || !setSpillType(argType) {
			return nil, qerr.Internalf("exec/hashagg: %s(DISTINCT ...) by sets over %s", a.Func, argType)
		}
		// Only the re-aggregation of a spilled aggregate's sets (spill.go).
		t, err := hashtable.New([]arrow.DataType{arrow.PrimitiveTypes.Uint32, argType})
		if err != nil {
			return nil, err
		}
		return &distinctListAcc{distinctAcc: &distinctAcc{table: t, inner: acc, mem: mem}, argType: argType}, nil
	}
	if a.Distinct && a.Arg != nil {
		// Partial mode: the planner guarantees that each argument value
		// lives in one input partition, so the partition's distinct values
		// are final and their state merges as the plain aggregate's does.
		if mode == physical.AggFinal {
			return nil, qerr.Internalf("exec/hashagg: %s(DISTINCT ...) in final mode: the final phase merges plain states", a.Func)
		}
		switch a.Func {
		case physical.AggMin, physical.AggMax, physical.AggAnyValue, physical.AggBoolAnd, physical.AggBoolOr, physical.AggBitAnd, physical.AggBitOr:
			return acc, nil // DISTINCT changes nothing
		}
		if distinctIntType(argType) {
			return newDistinctIntAcc(acc, mem), nil
		}
		t, err := hashtable.New([]arrow.DataType{arrow.PrimitiveTypes.Uint32, argType})
		if err != nil {
			return nil, err
		}
		return &distinctAcc{table: t, inner: acc, mem: mem}, nil
	}
	return acc, nil
}

func newPlainAccumulator(a physical.AggregateExpr, argType arrow.DataType) (accumulator, error) {
	if a.Func == physical.AggCount {
		return &countAcc{}, nil
	}
	if argType == nil {
		return nil, qerr.Internalf("exec/hashagg: %s has no argument", a.Name)
	}
	if argType.ID() == arrow.NULL && a.Func != physical.AggAvg {
		return &nullAcc{dt: a.Type}, nil
	}
	switch a.Func {
	case physical.AggSum:
		switch {
		case isIntType(argType):
			return &sumIntAcc{name: a.Name}, nil
		case argType.ID() == arrow.FLOAT32 || argType.ID() == arrow.FLOAT64:
			return &sumFloatAcc{}, nil
		case argType.ID() == arrow.DECIMAL128:
			return &sumDecAcc{dt: a.Type}, nil
		}
	case physical.AggAvg:
		st := a.StateFields()[0].Type
		switch {
		case isIntType(argType), argType.ID() == arrow.FLOAT32, argType.ID() == arrow.FLOAT64, argType.ID() == arrow.NULL:
			return &avgAcc{stateType: st}, nil
		case argType.ID() == arrow.DECIMAL128:
			return &avgAcc{dec: true, scale: argType.(*arrow.Decimal128Type).Scale, stateType: st}, nil
		}
	case physical.AggVarSamp, physical.AggVarPop, physical.AggStddevSamp, physical.AggStddevPop:
		if isIntType(argType) || argType.ID() == arrow.FLOAT32 || argType.ID() == arrow.FLOAT64 || argType.ID() == arrow.DECIMAL128 {
			return &varianceAcc{fn: a.Func}, nil
		}
	case physical.AggCovarPop, physical.AggCovarSamp, physical.AggCorr:
		if arrow.TypeEqual(argType, physical.PairType(arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64)) {
			return &covarAcc{fn: a.Func}, nil
		}
	case physical.AggPercentileCont, physical.AggPercentileDisc:
		if arrow.TypeEqual(argType, physical.PairType(arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64)) {
			return &percentileAcc{fn: a.Func}, nil
		}
	case physical.AggStringAgg:
		if arrow.TypeEqual(argType, physical.PairType(arrow.BinaryTypes.String, arrow.BinaryTypes.String)) {
			return &stringAggAcc{}, nil
		}
	case physical.AggBitAnd, physical.AggBitOr, physical.AggBitXor:
		if isIntType(argType) || argType.ID() == arrow.UINT64 {
			return &bitAcc{fn: a.Func, dt: argType}, nil
		}
	case physical.AggMin, physical.AggMax, physical.AggAnyValue, physical.AggBoolAnd, physical.AggBoolOr:
		// bool_and is min over booleans and bool_or max; any_value keeps
		// the smallest value, which is one of the group's values.
		isMax := a.Func == physical.AggMax || a.Func == physical.AggBoolOr
		switch argType.ID() {
		case arrow.INT8:
			return &minMaxAcc[int8]{dt: argType, max: isMax}, nil
		case arrow.INT16:
			return &minMaxAcc[int16]{dt: argType, max: isMax}, nil
		case arrow.INT32:
			return &minMaxAcc[int32]{dt: argType, max: isMax}, nil
		case arrow.INT64:
			return &minMaxAcc[int64]{dt: argType, max: isMax}, nil
		case arrow.UINT8:
			return &minMaxAcc[uint8]{dt: argType, max: isMax}, nil
		case arrow.UINT16:
			return &minMaxAcc[uint16]{dt: argType, max: isMax}, nil
		case arrow.UINT32:
			return &minMaxAcc[uint32]{dt: argType, max: isMax}, nil
		case arrow.UINT64:
			return &minMaxAcc[uint64]{dt: argType, max: isMax}, nil
		case arrow.FLOAT32:
			return &minMaxAcc[float32]{dt: argType, max: isMax}, nil
		case arrow.FLOAT64:
			return &minMaxAcc[float64]{dt: argType, max: isMax}, nil
		case arrow.DATE32:
			return &minMaxAcc[arrow.Date32]{dt: argType, max: isMax}, nil
		case arrow.DATE64:
			return &minMaxAcc[arrow.Date64]{dt: argType, max: isMax}, nil
		case arrow.TIMESTAMP:
			return &minMaxAcc[arrow.Timestamp]{dt: argType, max: isMax}, nil
		case arrow.TIME64:
			return &minMaxAcc[arrow.Time64]{dt: argType, max: isMax}, nil
		case arrow.DECIMAL128:
			return &minMaxDecAcc{dt: argType, max: isMax}, nil
		case arrow.INTERVAL_MONTH_DAY_NANO:
			if a.Func == physical.AggMin || a.Func == physical.AggMax || a.Func == physical.AggAnyValue {
				return &minMaxIntervalAcc{dt: argType, max: isMax}, nil
			}
		case arrow.BOOL:
			return &minMaxBoolAcc{max: isMax}, nil
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY:
			return &minMaxStrAcc{dt: argType, max: isMax}, nil
		}
	}
	return nil, qerr.NotImplementedf("exec/hashagg: %s over %s is not supported (in %s)", a.Func, argType, a.Name)
}

func isIntType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return true
	}
	return false
}

// ---- count ----

type countAcc struct{ counts []int64 }

func (c *countAcc) resize(n int)         { c.counts = kernel.GrowSlice(c.counts, n) }
func (c *countAcc) bytesPerGroup() int64 { return 8 }
func (c *countAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	counts := c.counts
	if arg == nil || arg.NullN() == 0 {
		if len(counts) <= fewGroups {
			countFew(groups, counts)
			return nil
		}
		for _, g := range groups {
			counts[g]++
		}
		return nil
	}
	bits, off := kernel.ValidBits(arg)
	for i, g := range groups {
		if bitutil.BitIsSet(bits, off+i) {
			counts[g]++
		}
	}
	return nil
}
func (c *countAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	vals := arrow.GetValues[int64](state[0].Data(), 1)
	bits, off := kernel.ValidBits(state[0])
	for i, g := range groups {
		if bits == nil || bitutil.BitIsSet(bits, off+i) {
			c.counts[g] += vals[i]
		}
	}
	return nil
}
func (c *countAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, c.counts[start:end], nil)
}
func (c *countAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{c.final(m, start, end)}
}

// ---- NULL-typed argument: every result is NULL ----

type nullAcc struct{ dt arrow.DataType }

func (*nullAcc) resize(int)                                           {}
func (*nullAcc) bytesPerGroup() int64                                 { return 0 }
func (*nullAcc) update(context.Context, []uint32, arrow.Array) error  { return nil }
func (*nullAcc) merge(context.Context, []uint32, []arrow.Array) error { return nil }
func (a *nullAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return array.MakeArrayOfNull(m.Mem, a.dt, end-start)
}
func (a *nullAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.final(m, start, end)}
}

// ---- sum of integers (Int64, overflow checked) ----

type sumIntAcc struct {
	name string
	sums []int64
	seen []bool
}

func (s *sumIntAcc) resize(n int) {
	s.sums, s.seen = kernel.GrowSlice(s.sums, n), kernel.GrowSlice(s.seen, n)
}
func (s *sumIntAcc) bytesPerGroup() int64 { return 9 }
func (s *sumIntAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	var ok bool
	switch a := arg.(type) {
	case *array.Int8:
		ok = sumInts(a.Int8Values(), arg, groups, s.sums, s.seen)
	case *array.Int16:
		ok = sumInts(a.Int16Values(), arg, groups, s.sums, s.seen)
	case *array.Int32:
		ok = sumInts(a.Int32Values(), arg, groups, s.sums, s.seen)
	case *array.Int64:
		ok = sumInts(a.Int64Values(), arg, groups, s.sums, s.seen)
	case *array.Uint8:
		ok = sumInts(a.Uint8Values(), arg, groups, s.sums, s.seen)
	case *array.Uint16:
		ok = sumInts(a.Uint16Values(), arg, groups, s.sums, s.seen)
	case *array.Uint32:
		ok = sumInts(a.Uint32Values(), arg, groups, s.sums, s.seen)
	default:
		return qerr.Internalf("exec/hashagg: sum over %s in %s", arg.DataType(), s.name)
	}
	if !ok {
		return qerr.Execf("exec/hashagg: integer overflow in %s; cast the argument to a DECIMAL", s.name)
	}
	return nil
}
func (s *sumIntAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return s.update(ctx, groups, state[0])
}
func (s *sumIntAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, s.sums[start:end], s.seen[start:end])
}
func (s *sumIntAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{s.final(m, start, end)}
}

// sumInts adds vals into sums by group, skipping NULLs; false on overflow.
func sumInts[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32](vals []T, arr arrow.Array, groups []uint32, sums []int64, seen []bool) bool {
	bits, off := kernel.ValidBits(arr)
	ok := true
	for i, g := range groups {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		a, b := sums[g], int64(vals[i])
		r := a + b
		// Overflow iff both operands have the same sign and the result's differs.
		ok = ok && ((a^b) < 0 || (a^r) >= 0)
		sums[g] = r
		seen[g] = true
	}
	return ok
}

// sumFloatsInto adds vals (as float64) into sums by group, skipping NULLs;
// counts (if non-nil) counts the values added.
func sumFloatsInto[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~float32 | ~float64](vals []T, arr arrow.Array, groups []uint32, sums []float64, seen []bool, counts []int64) {
	bits, off := kernel.ValidBits(arr)
	for i, g := range groups {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		sums[g] += float64(vals[i])
		if seen != nil {
			seen[g] = true
		}
		if counts != nil {
			counts[g]++
		}
	}
}

// addFloats switches once on arr's type and sums it into sums.
func addFloats(arr arrow.Array, groups []uint32, sums []float64, seen []bool, counts []int64) error {
	switch a := arr.(type) {
	case *array.Int8:
		sumFloatsInto(a.Int8Values(), arr, groups, sums, seen, counts)
	case *array.Int16:
		sumFloatsInto(a.Int16Values(), arr, groups, sums, seen, counts)
	case *array.Int32:
		sumFloatsInto(a.Int32Values(), arr, groups, sums, seen, counts)
	case *array.Int64:
		sumFloatsInto(a.Int64Values(), arr, groups, sums, seen, counts)
	case *array.Uint8:
		sumFloatsInto(a.Uint8Values(), arr, groups, sums, seen, counts)
	case *array.Uint16:
		sumFloatsInto(a.Uint16Values(), arr, groups, sums, seen, counts)
	case *array.Uint32:
		sumFloatsInto(a.Uint32Values(), arr, groups, sums, seen, counts)
	case *array.Float32:
		sumFloatsInto(a.Float32Values(), arr, groups, sums, seen, counts)
	case *array.Float64:
		sumFloatsInto(a.Float64Values(), arr, groups, sums, seen, counts)
	default:
		return qerr.Internalf("exec/hashagg: cannot sum %s as float", arr.DataType())
	}
	return nil
}

// addDecimals sums Decimal128 values (unscaled, 128-bit) into sums by group.
// Without NULLs it runs one tight loop per output slice instead of one loop
// testing the validity, seen and counts per row: the sum loop is then only
// a 128-bit add per row.
// inRuns reports whether most rows have the group of the row before
// them, so that summing along runs pays: rows grouped by a key they are
// ordered by (an order's lines by customer) rather than by one whose
// values alternate.
func inRuns(groups []uint32) bool {
	changes := 0
	prev := groups[0]
	for _, g := range groups {
		if g != prev {
			changes++
		}
		prev = g
	}
	return 2*changes < len(groups)
}

func addDecimals(arr arrow.Array, groups []uint32, sums []decimal128.Num, seen []bool, counts []int64) {
	vals := arrow.GetValues[decimal128.Num](arr.Data(), 1)
	bits, off := kernel.ValidBits(arr)
	if bits == nil {
		if len(sums) <= fewGroups {
			addDecimalsFew(vals, groups, sums, seen, counts)
			return
		}
		vals = vals[:len(groups)]
		if len(groups) > 0 && !inRuns(groups) {
			// Groups that change from row to row: a branch on the change
			// would mispredict on most rows, so each row adds straight
			// into its group's sum.
			for i, g := range groups {
				sums[g] = sums[g].Add(vals[i])
			}
		} else if len(groups) > 0 {
			// Sum in a register along runs of one group (rows often come
			// grouped: an order's lines), storing once per run, instead of
			// a load and store of the 16-byte sum per row.
			cur := groups[0]
			acc := sums[cur]
			for i, g := range groups {
				if g != cur {
					sums[cur] = acc
					cur, acc = g, sums[g]
				}
				acc = acc.Add(vals[i])
			}
			sums[cur] = acc
		}
		if seen != nil {
			for _, g := range groups {
				seen[g] = true
			}
		}
		if counts != nil {
			for _, g := range groups {
				counts[g]++
			}
		}
		return
	}
	for i, g := range groups {
		if !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		sums[g] = sums[g].Add(vals[i])
		if seen != nil {
			seen[g] = true
		}
		if counts != nil {
			counts[g]++
		}
	}
}

// ---- sum of floats ----

type sumFloatAcc struct {
	sums []float64
	seen []bool
}

func (s *sumFloatAcc) resize(n int) {
	s.sums, s.seen = kernel.GrowSlice(s.sums, n), kernel.GrowSlice(s.seen, n)
}
func (s *sumFloatAcc) bytesPerGroup() int64 { return 9 }
func (s *sumFloatAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	return addFloats(arg, groups, s.sums, s.seen, nil)
}
func (s *sumFloatAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return s.update(ctx, groups, state[0])
}
func (s *sumFloatAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, s.sums[start:end], s.seen[start:end])
}
func (s *sumFloatAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{s.final(m, start, end)}
}

// ---- sum of decimals (result scale = input scale) ----

type sumDecAcc struct {
	dt   arrow.DataType
	sums []decimal128.Num
	seen []bool
}

func (s *sumDecAcc) resize(n int) {
	s.sums, s.seen = kernel.GrowSlice(s.sums, n), kernel.GrowSlice(s.seen, n)
}
func (s *sumDecAcc) bytesPerGroup() int64 { return 17 }
func (s *sumDecAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	addDecimals(arg, groups, s.sums, s.seen, nil)
	return nil
}
func (s *sumDecAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return s.update(ctx, groups, state[0])
}
func (s *sumDecAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(m, s.dt, s.sums[start:end], s.seen[start:end])
}
func (s *sumDecAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{s.final(m, start, end)}
}

// ---- avg: sum (float64, or 128-bit decimal) and count ----

type avgAcc struct {
	dec       bool
	scale     int32
	stateType arrow.DataType // Float64 or Decimal(38, scale)
	sumF      []float64
	sumD      []decimal128.Num
	counts    []int64
}

func (a *avgAcc) resize(n int) {
	a.counts = kernel.GrowSlice(a.counts, n)
	if a.dec {
		a.sumD = kernel.GrowSlice(a.sumD, n)
	} else {
		a.sumF = kernel.GrowSlice(a.sumF, n)
	}
}
func (a *avgAcc) bytesPerGroup() int64 { return 24 }
func (a *avgAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	if a.dec {
		addDecimals(arg, groups, a.sumD, nil, a.counts)
		return nil
	}
	return addFloats(arg, groups, a.sumF, nil, a.counts)
}
func (a *avgAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	if !allNull(state[0]) {
		if a.dec {
			addDecimals(state[0], groups, a.sumD, nil, nil)
		} else if err := addFloats(state[0], groups, a.sumF, nil, nil); err != nil {
			return err
		}
	}
	return (&countAcc{counts: a.counts}).merge(ctx, groups, state[1:])
}
func (a *avgAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	out := make([]float64, end-start)
	valid := make([]bool, end-start)
	for i := range out {
		c := a.counts[start+i]
		if c == 0 {
			continue
		}
		valid[i] = true
		if a.dec {
			out[i] = a.sumD[start+i].ToFloat64(a.scale) / float64(c)
		} else {
			out[i] = a.sumF[start+i] / float64(c)
		}
	}
	return kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, out, valid)
}
func (a *avgAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	valid := make([]bool, end-start)
	for i := range valid {
		valid[i] = a.counts[start+i] > 0
	}
	var sum arrow.Array
	if a.dec {
		sum = kernel.MakeFixed(m, a.stateType, a.sumD[start:end], valid)
	} else {
		sum = kernel.MakeFixed(m, arrow.PrimitiveTypes.Float64, a.sumF[start:end], valid)
	}
	return []arrow.Array{sum, kernel.MakeFixed(m, arrow.PrimitiveTypes.Int64, a.counts[start:end], nil)}
}

// ---- min / max ----

type ordered interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

type minMaxAcc[T ordered] struct {
	dt   arrow.DataType
	max  bool
	vals []T
	seen []bool
}

func (a *minMaxAcc[T]) resize(n int) {
	a.vals, a.seen = kernel.GrowSlice(a.vals, n), kernel.GrowSlice(a.seen, n)
}
func (a *minMaxAcc[T]) bytesPerGroup() int64 {
	var z T
	return int64(kernel.SizeOf(z)) + 1
}
func (a *minMaxAcc[T]) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	vals := arrow.GetValues[T](arg.Data(), 1)
	bits, off := kernel.ValidBits(arg)
	cur, seen := a.vals, a.seen
	if a.max {
		for i, g := range groups {
			if (bits == nil || bitutil.BitIsSet(bits, off+i)) && (!seen[g] || vals[i] > cur[g]) {
				cur[g], seen[g] = vals[i], true
			}
		}
		return nil
	}
	for i, g := range groups {
		if (bits == nil || bitutil.BitIsSet(bits, off+i)) && (!seen[g] || vals[i] < cur[g]) {
			cur[g], seen[g] = vals[i], true
		}
	}
	return nil
}
func (a *minMaxAcc[T]) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return a.update(ctx, groups, state[0])
}
func (a *minMaxAcc[T]) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(m, a.dt, a.vals[start:end], a.seen[start:end])
}
func (a *minMaxAcc[T]) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.final(m, start, end)}
}

type minMaxDecAcc struct {
	dt   arrow.DataType
	max  bool
	vals []decimal128.Num
	seen []bool
}

func (a *minMaxDecAcc) resize(n int) {
	a.vals, a.seen = kernel.GrowSlice(a.vals, n), kernel.GrowSlice(a.seen, n)
}
func (a *minMaxDecAcc) bytesPerGroup() int64 { return 17 }
func (a *minMaxDecAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	vals := arrow.GetValues[decimal128.Num](arg.Data(), 1)
	bits, off := kernel.ValidBits(arg)
	want := -1
	if a.max {
		want = 1
	}
	for i, g := range groups {
		if (bits == nil || bitutil.BitIsSet(bits, off+i)) && (!a.seen[g] || vals[i].Cmp(a.vals[g]) == want) {
			a.vals[g], a.seen[g] = vals[i], true
		}
	}
	return nil
}
func (a *minMaxDecAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return a.update(ctx, groups, state[0])
}
func (a *minMaxDecAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeFixed(m, a.dt, a.vals[start:end], a.seen[start:end])
}
func (a *minMaxDecAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.final(m, start, end)}
}

// minMaxBoolAcc: min is AND, max is OR.
type minMaxBoolAcc struct {
	max  bool
	vals []bool
	seen []bool
}

func (a *minMaxBoolAcc) resize(n int) {
	a.vals, a.seen = kernel.GrowSlice(a.vals, n), kernel.GrowSlice(a.seen, n)
}
func (a *minMaxBoolAcc) bytesPerGroup() int64 { return 2 }
func (a *minMaxBoolAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	b := arg.(*array.Boolean)
	bits, off := kernel.ValidBits(arg)
	for i, g := range groups {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		v := b.Value(i)
		switch {
		case !a.seen[g]:
			a.vals[g] = v
		case a.max:
			a.vals[g] = a.vals[g] || v
		default:
			a.vals[g] = a.vals[g] && v
		}
		a.seen[g] = true
	}
	return nil
}
func (a *minMaxBoolAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return a.update(ctx, groups, state[0])
}
func (a *minMaxBoolAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return kernel.MakeBool(m, a.vals[start:end], a.seen[start:end])
}
func (a *minMaxBoolAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.final(m, start, end)}
}

// minMaxStrAcc keeps one Go string per group; it allocates only when a
// group's extreme changes.
type minMaxStrAcc struct {
	dt   arrow.DataType
	max  bool
	vals []string
	seen []bool
}

func (a *minMaxStrAcc) resize(n int) {
	a.vals, a.seen = kernel.GrowSlice(a.vals, n), kernel.GrowSlice(a.seen, n)
}
func (a *minMaxStrAcc) bytesPerGroup() int64 { return 32 }
func (a *minMaxStrAcc) update(_ context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	src := hashtable.NewByteSource(arg)
	bits, off := kernel.ValidBits(arg)
	for i, g := range groups {
		if bits != nil && !bitutil.BitIsSet(bits, off+i) {
			continue
		}
		v := src.At(i)
		if !a.seen[g] || (a.max && string(v) > a.vals[g]) || (!a.max && string(v) < a.vals[g]) {
			a.vals[g], a.seen[g] = string(v), true
		}
	}
	return nil
}
func (a *minMaxStrAcc) merge(ctx context.Context, groups []uint32, state []arrow.Array) error {
	return a.update(ctx, groups, state[0])
}
func (a *minMaxStrAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	var sb strings.Builder
	offs := make([]int, 0, end-start+1)
	offs = append(offs, 0)
	for _, v := range a.vals[start:end] {
		sb.WriteString(v)
		offs = append(offs, sb.Len())
	}
	return kernel.MakeBytes(m, a.dt, []byte(sb.String()), offs, a.seen[start:end])
}
func (a *minMaxStrAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return []arrow.Array{a.final(m, start, end)}
}

// ---- DISTINCT (single mode only) ----

// distinctAcc feeds inner only the first occurrence of each (group, value)
// pair, found with a hash table keyed on (group id, value).
// memSize is the set's bytes, for memory accounting.
func (d *distinctAcc) memSize() int64 { return d.table.MemSize() }

type distinctAcc struct {
	table   *hashtable.Table
	probe   hashtable.Probe
	inner   accumulator
	mem     memory.Allocator
	ids     []uint32
	sel     []int32
	claimed []bool
	groups  []uint32
	rows    []int32
	ngroups int // groups, from resize
	// setState's pairs by group (distinct_spill.go), kept between calls.
	setVals arrow.Array
	setOff  []int32
	setPerm []int32
}

func (d *distinctAcc) resize(n int) {
	d.inner.resize(n)
	d.ngroups = max(d.ngroups, n)
}
func (d *distinctAcc) bytesPerGroup() int64 { return d.inner.bytesPerGroup() }
func (d *distinctAcc) update(ctx context.Context, groups []uint32, arg arrow.Array) error {
	if allNull(arg) {
		return nil
	}
	n := arg.Len()
	bits, off := kernel.ValidBits(arg)
	d.sel = d.sel[:0]
	for i := 0; i < n; i++ {
		if bits == nil || bitutil.BitIsSet(bits, off+i) {
			d.sel = append(d.sel, int32(i))
		}
	}
	m := &kernel.ArrayMaker{Mem: d.mem}
	gids := kernel.MakeFixed(m, arrow.PrimitiveTypes.Uint32, groups, nil)
	defer gids.Release()
	d.ids = kernel.GrowSlice(d.ids[:0], n)
	before := uint32(d.table.Len())
	d.table.FindOrInsert(&d.probe, []arrow.Array{gids, arg}, n, d.sel, d.ids)
	added := d.table.Len() - int(before)
	if added == 0 {
		return nil
	}
	d.claimed = kernel.GrowSlice(d.claimed[:0], added)
	clear(d.claimed)
	d.rows, d.groups = d.rows[:0], d.groups[:0]
	for _, r := range d.sel {
		id := d.ids[r]
		if id >= before && !d.claimed[id-before] {
			d.claimed[id-before] = true
			d.rows = append(d.rows, r)
			d.groups = append(d.groups, groups[r])
		}
	}
	vals, err := kernel.TakeArray(ctx, d.mem, arg, d.rows)
	if err != nil {
		return err
	}
	defer vals.Release()
	return d.inner.update(ctx, d.groups, vals)
}
func (d *distinctAcc) merge(context.Context, []uint32, []arrow.Array) error {
	return qerr.Internalf("exec/hashagg: DISTINCT aggregates have no partial state")
}
func (d *distinctAcc) final(m *kernel.ArrayMaker, start, end int) arrow.Array {
	return d.inner.final(m, start, end)
}
func (d *distinctAcc) state(m *kernel.ArrayMaker, start, end int) []arrow.Array {
	return d.inner.state(m, start, end)
}
