package optimizer

// simplify_expressions folds expressions whose leaves are literals and
// applies boolean identities, node by node:
//
//	Filter: CAST(l_shipdate AS TIMESTAMP) <= DATE '1998-12-01' - INTERVAL '90 days'
//	→ Filter: l_shipdate <= DATE '1998-09-02'    (date_compare.go)
//	Projection: 0.06 + 0.01            → Projection: 0.07 AS "0.06 + 0.01"
//	x AND true → x, x OR false → x, NOT NOT x → x, false AND x → false
//	CAST(x AS T) where x is already T → x
//
// It must NOT fold: division or modulo by zero (an execution error at run
// time), arithmetic that overflows its result type, casts that would fail or
// lose digits, x = x (NULL when x is NULL), or anything with a column, outer
// reference or subquery under it. A folded projection or aggregate output is
// aliased back to its old display name so the schema is unchanged.

import (
	"context"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/temporal"
)

// SimplifyExpressions is the constant-folding and simplification rule.
type SimplifyExpressions struct{}

// Name implements Rule.
func (SimplifyExpressions) Name() string { return "simplify_expressions" }

// Rewrite implements Rule.
func (SimplifyExpressions) Rewrite(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	return transformUp(ctx, p, func(n logical.Plan) (logical.Plan, bool, error) {
		exprs := n.Exprs()
		if len(exprs) == 0 {
			return n, false, nil
		}
		var inSchema *logical.Schema
		if ch := n.Children(); len(ch) == 1 {
			inSchema = ch[0].Schema()
		} else if len(ch) == 2 {
			inSchema = nil // join expressions span two schemas; skip cast elimination there
		} else if sc, ok := n.(*logical.Scan); ok {
			// A scan's filters read the whole table, not only its projection.
			inSchema = logical.NewScan(sc.Table, sc.Qualifier).Schema()
		}
		changed := false
		out := make([]logical.Expr, len(exprs))
		for i, e := range exprs {
			ne := simplifyExpr(e, inSchema)
			if ne != e {
				// Each display name is built once: it is linear in the
				// expression, but expressions may be huge.
				if ne.String() != e.String() {
					changed = true
				}
				switch n.(type) {
				case *logical.Projection, *logical.Aggregate:
					ne = aliasBack(ne, e)
				}
			}
			out[i] = ne
		}
		if !changed {
			return n, false, nil
		}
		if _, ok := n.(*logical.Scan); ok {
			out = dedupeFilters(out)
		}
		np, err := n.WithExprs(out)
		if err != nil {
			return nil, false, err
		}
		return np, true, nil
	})
}

// dedupeFilters drops the scan filters that simplified to true or to
// another filter of the list (a filter pushed before and after a
// simplification, such as a date range bound).
func dedupeFilters(fs []logical.Expr) []logical.Expr {
	seen := map[string]bool{}
	out := fs[:0:0]
	for _, f := range fs {
		k := f.String()
		if seen[k] || isBoolLit(f, true) {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	return out
}

// simplifyExpr simplifies e bottom-up. s, when not nil, is the schema e is
// evaluated over (used to drop casts to a column's own type).
func simplifyExpr(e logical.Expr, s *logical.Schema) logical.Expr {
	keys := logical.NewExprKeys() // one table for the whole walk: see factorOr
	out, _, _ := logical.TransformExprUp(e, func(x logical.Expr) (logical.Expr, bool, error) {
		n := simplifyNode(x, s, keys)
		return n, n != x, nil
	})
	return out
}

func asLit(e logical.Expr) (*logical.Literal, bool) {
	l, ok := e.(*logical.Literal)
	return l, ok
}

func isBoolLit(e logical.Expr, v bool) bool {
	l, ok := asLit(e)
	if !ok || l.Value == nil {
		return false
	}
	b, ok := l.Value.(bool)
	return ok && b == v
}

func isNullLit(e logical.Expr) bool {
	l, ok := asLit(e)
	return ok && l.Value == nil
}

func nullOf(t arrow.DataType) *logical.Literal { return &logical.Literal{Type: t} }

func simplifyNode(x logical.Expr, s *logical.Schema, keys *logical.ExprKeys) logical.Expr {
	switch x := x.(type) {
	case *logical.Binary:
		n := simplifyBinary(x, keys)
		if b, ok := n.(*logical.Binary); ok {
			return dateTimestampCompare(b, s)
		}
		return n
	case *logical.Not:
		if l, ok := asLit(x.Expr); ok {
			if l.Value == nil {
				return nullOf(logical.Bool)
			}
			if b, ok := l.Value.(bool); ok {
				return logical.Lit(!b)
			}
		}
		if inner, ok := x.Expr.(*logical.Not); ok {
			return inner.Expr
		}
	case *logical.Negative:
		if l, ok := asLit(x.Expr); ok {
			if n, ok := negateLit(l); ok {
				return n
			}
		}
	case *logical.IsNull:
		if l, ok := asLit(x.Expr); ok {
			return logical.Lit((l.Value == nil) != x.Negated)
		}
	case *logical.Cast:
		if l, ok := asLit(x.Expr); ok {
			if n, ok := castLit(l, x.Type); ok {
				return n
			}
			return x
		}
		if s != nil {
			if t, _, err := x.Expr.DataType(s); err == nil && arrow.TypeEqual(t, x.Type) {
				return x.Expr
			}
		}
	case *logical.InList:
		l, ok := asLit(x.Expr)
		if !ok {
			return dateTimestampIn(x, s)
		}
		sawNull := l.Value == nil
		for _, it := range x.List {
			il, ok := asLit(it)
			if !ok {
				return x
			}
			if il.Value == nil {
				sawNull = true
				continue
			}
			if l.Value == nil {
				continue
			}
			c, ok := compareLits(l, il)
			if !ok {
				return x
			}
			if c == 0 {
				return logical.Lit(!x.Negated)
			}
		}
		if sawNull {
			return nullOf(logical.Bool)
		}
		return logical.Lit(x.Negated)
	case *logical.Case:
		// CASE WHEN true THEN a ... → a; drop WHEN false / WHEN NULL arms.
		if x.Operand != nil {
			return x
		}
		var whens []logical.When
		for _, w := range x.Whens {
			if isBoolLit(w.Cond, false) || isNullLit(w.Cond) {
				continue
			}
			if isBoolLit(w.Cond, true) && len(whens) == 0 {
				return w.Then
			}
			whens = append(whens, w)
		}
		if len(whens) == len(x.Whens) {
			return x
		}
		if len(whens) == 0 {
			if x.Else != nil {
				return x.Else
			}
			return x // keep: a bare NULL would lose the CASE's type
		}
		return &logical.Case{Whens: whens, Else: x.Else}
	}
	return x
}

func simplifyBinary(b *logical.Binary, keys *logical.ExprKeys) logical.Expr {
	switch b.Op {
	case logical.OpAnd:
		switch {
		case isBoolLit(b.Left, false) || isBoolLit(b.Right, false):
			return logical.Lit(false)
		case isBoolLit(b.Left, true):
			return b.Right
		case isBoolLit(b.Right, true):
			return b.Left
		case isNullLit(b.Left) && isNullLit(b.Right):
			return nullOf(logical.Bool)
		}
		return b
	case logical.OpOr:
		switch {
		case isBoolLit(b.Left, true) || isBoolLit(b.Right, true):
			return logical.Lit(true)
		case isBoolLit(b.Left, false):
			return b.Right
		case isBoolLit(b.Right, false):
			return b.Left
		case isNullLit(b.Left) && isNullLit(b.Right):
			return nullOf(logical.Bool)
		}
		return factorOr(b, keys)
	}
	l, lok := asLit(b.Left)
	r, rok := asLit(b.Right)
	if !lok || !rok {
		return b
	}
	rt, _, err := b.DataType(logical.NewSchema())
	if err != nil {
		return b
	}
	if l.Value == nil || r.Value == nil {
		return nullOf(rt)
	}
	if b.Op.IsComparison() {
		c, ok := compareLits(l, r)
		if !ok {
			return b
		}
		var v bool
		switch b.Op {
		case logical.OpEq:
			v = c == 0
		case logical.OpNotEq:
			v = c != 0
		case logical.OpLt:
			v = c < 0
		case logical.OpLtEq:
			v = c <= 0
		case logical.OpGt:
			v = c > 0
		case logical.OpGtEq:
			v = c >= 0
		}
		return logical.Lit(v)
	}
	if b.Op == logical.OpConcat {
		ls, ok1 := l.Value.(string)
		rs, ok2 := r.Value.(string)
		if ok1 && ok2 {
			return logical.Lit(ls + rs)
		}
		return b
	}
	if n, ok := foldArith(b.Op, l, r, rt); ok {
		return n
	}
	return b
}

// ---- literal arithmetic ----------------------------------------------------

func foldArith(op logical.BinaryOp, l, r *logical.Literal, rt arrow.DataType) (logical.Expr, bool) {
	switch lv := l.Value.(type) {
	case int64:
		rv, ok := r.Value.(int64)
		if !ok {
			return nil, false
		}
		v, ok := intArith(op, lv, rv)
		if !ok {
			return nil, false
		}
		return &logical.Literal{Type: rt, Value: v}, true
	case int32:
		rv, ok := r.Value.(int32)
		if !ok {
			return nil, false
		}
		v, ok := intArith(op, int64(lv), int64(rv))
		if !ok || v < math.MinInt32 || v > math.MaxInt32 {
			return nil, false
		}
		return &logical.Literal{Type: rt, Value: int32(v)}, true
	case float64:
		rv, ok := r.Value.(float64)
		if !ok {
			return nil, false
		}
		var v float64
		switch op {
		case logical.OpAdd:
			v = lv + rv
		case logical.OpSub:
			v = lv - rv
		case logical.OpMul:
			v = lv * rv
		case logical.OpDiv:
			if rv == 0 {
				return nil, false
			}
			v = lv / rv
		default:
			return nil, false
		}
		return &logical.Literal{Type: rt, Value: v}, true
	case decimal128.Num:
		rv, ok := r.Value.(decimal128.Num)
		if !ok {
			return nil, false
		}
		return decimalArith(op, lv, l.Type.(*arrow.Decimal128Type), rv, r.Type.(*arrow.Decimal128Type), rt)
	case arrow.Date32:
		switch rv := r.Value.(type) {
		case arrow.MonthDayNanoInterval:
			return addIntervalLit(int64(lv)*temporal.MicrosPerDay, rv, op)
		case int64:
			switch op {
			case logical.OpAdd:
				return logical.Lit(arrow.Date32(int64(lv) + rv)), true
			case logical.OpSub:
				return logical.Lit(arrow.Date32(int64(lv) - rv)), true
			}
		case arrow.Date32:
			if op == logical.OpSub {
				return &logical.Literal{Type: rt, Value: int64(lv) - int64(rv)}, true
			}
		}
	case arrow.Timestamp:
		if rv, ok := r.Value.(arrow.MonthDayNanoInterval); ok && !logical.IsTimestampTZ(l.Type) {
			return addIntervalLit(int64(lv), rv, op)
		}
	case arrow.MonthDayNanoInterval:
		if op != logical.OpAdd {
			return nil, false
		}
		switch rv := r.Value.(type) {
		case arrow.Date32:
			return addIntervalLit(int64(rv)*temporal.MicrosPerDay, lv, op)
		case arrow.Timestamp:
			if logical.IsTimestampTZ(r.Type) {
				// A TIMESTAMPTZ's calendar is its zone's; the kernel adds it.
				return nil, false
			}
			return addIntervalLit(int64(rv), lv, op)
		}
	}
	return nil, false
}

// addIntervalLit folds a timestamp (a date as its midnight) ± an interval
// into a timestamp constant, with the kernel's calendar arithmetic.
func addIntervalLit(us int64, iv arrow.MonthDayNanoInterval, op logical.BinaryOp) (logical.Expr, bool) {
	sign := 1
	switch op {
	case logical.OpAdd:
	case logical.OpSub:
		sign = -1
	default:
		return nil, false
	}
	return &logical.Literal{Type: logical.Timestamp, Value: arrow.Timestamp(temporal.AddToTimestamp(us, iv, sign))}, true
}

// intArith folds integer arithmetic; it refuses division by zero and overflow.
func intArith(op logical.BinaryOp, a, b int64) (int64, bool) {
	switch op {
	case logical.OpAdd:
		s := a + b
		if (s > a) != (b > 0) {
			return 0, false
		}
		return s, true
	case logical.OpSub:
		s := a - b
		if (s < a) != (b > 0) {
			return 0, false
		}
		return s, true
	case logical.OpMul:
		if a == 0 || b == 0 {
			return 0, true
		}
		p := a * b
		if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return 0, false
		}
		return p, true
	case logical.OpDiv:
		if b == 0 || (a == math.MinInt64 && b == -1) {
			return 0, false
		}
		return a / b, true
	case logical.OpMod:
		if b == 0 || b == -1 {
			return 0, false
		}
		return a % b, true
	}
	return 0, false
}

func pow10(n int32) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// decimalArith folds exact decimal arithmetic with the result type rt of
// logical.ArithmeticType; it refuses results that do not fit rt.
func decimalArith(op logical.BinaryOp, a decimal128.Num, at *arrow.Decimal128Type, b decimal128.Num, bt *arrow.Decimal128Type, rt arrow.DataType) (logical.Expr, bool) {
	x, y := a.BigInt(), b.BigInt()
	if op == logical.OpDiv {
		if y.Sign() == 0 || rt.ID() != arrow.FLOAT64 {
			return nil, false
		}
		xf := a.ToFloat64(at.Scale)
		yf := b.ToFloat64(bt.Scale)
		return &logical.Literal{Type: rt, Value: xf / yf}, true
	}
	dt, ok := rt.(*arrow.Decimal128Type)
	if !ok {
		return nil, false
	}
	var res *big.Int
	switch op {
	case logical.OpAdd, logical.OpSub, logical.OpMod:
		s := max(at.Scale, bt.Scale)
		x = new(big.Int).Mul(x, pow10(s-at.Scale))
		y = new(big.Int).Mul(y, pow10(s-bt.Scale))
		switch op {
		case logical.OpAdd:
			res = new(big.Int).Add(x, y)
		case logical.OpSub:
			res = new(big.Int).Sub(x, y)
		default:
			if y.Sign() == 0 {
				return nil, false
			}
			res = new(big.Int).Rem(x, y)
		}
		if s != dt.Scale {
			return nil, false
		}
	case logical.OpMul:
		res = new(big.Int).Mul(x, y)
		if at.Scale+bt.Scale != dt.Scale {
			return nil, false
		}
	default:
		return nil, false
	}
	if new(big.Int).Abs(res).Cmp(pow10(dt.Precision)) >= 0 {
		return nil, false
	}
	return &logical.Literal{Type: dt, Value: decimal128.FromBigInt(res)}, true
}

func negateLit(l *logical.Literal) (*logical.Literal, bool) {
	switch v := l.Value.(type) {
	case nil:
		return l, true
	case int64:
		if v == math.MinInt64 {
			return nil, false
		}
		return &logical.Literal{Type: l.Type, Value: -v}, true
	case int32:
		if v == math.MinInt32 {
			return nil, false
		}
		return &logical.Literal{Type: l.Type, Value: -v}, true
	case float64:
		return &logical.Literal{Type: l.Type, Value: -v}, true
	case decimal128.Num:
		return &logical.Literal{Type: l.Type, Value: v.Negate()}, true
	}
	return nil, false
}

// compareLits orders two non-NULL literals of comparable types.
func compareLits(l, r *logical.Literal) (int, bool) {
	switch lv := l.Value.(type) {
	case int64:
		switch rv := r.Value.(type) {
		case int64:
			return cmp3(lv, rv), true
		case int32:
			return cmp3(lv, int64(rv)), true
		}
	case int32:
		switch rv := r.Value.(type) {
		case int64:
			return cmp3(int64(lv), rv), true
		case int32:
			return cmp3(lv, rv), true
		}
	case float64:
		if rv, ok := r.Value.(float64); ok {
			return cmp3(lv, rv), true
		}
	case string:
		if rv, ok := r.Value.(string); ok {
			return strings.Compare(lv, rv), true
		}
	case bool:
		if rv, ok := r.Value.(bool); ok {
			bi := func(b bool) int {
				if b {
					return 1
				}
				return 0
			}
			return cmp3(bi(lv), bi(rv)), true
		}
	case arrow.Date32:
		if rv, ok := r.Value.(arrow.Date32); ok {
			return cmp3(lv, rv), true
		}
	case arrow.Timestamp:
		if rv, ok := r.Value.(arrow.Timestamp); ok {
			return cmp3(int64(lv), int64(rv)), true
		}
	case decimal128.Num:
		if rv, ok := r.Value.(decimal128.Num); ok {
			ls, rs := l.Type.(*arrow.Decimal128Type).Scale, r.Type.(*arrow.Decimal128Type).Scale
			s := max(ls, rs)
			x := new(big.Int).Mul(lv.BigInt(), pow10(s-ls))
			y := new(big.Int).Mul(rv.BigInt(), pow10(s-rs))
			return x.Cmp(y), true
		}
	}
	return 0, false
}

func cmp3[T int | int32 | int64 | float64 | arrow.Date32](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// castLit converts a literal to t, or reports false when the conversion is
// not exact or would fail (then the cast is left to run time, which reports it).
func castLit(l *logical.Literal, t arrow.DataType) (*logical.Literal, bool) {
	if l.Value == nil {
		return nullOf(t), true
	}
	if arrow.TypeEqual(l.Type, t) {
		return l, true
	}
	switch v := l.Value.(type) {
	case int64:
		return castInt(v, t)
	case int32:
		return castInt(int64(v), t)
	case float64:
		switch t.ID() {
		case arrow.STRING:
			return logical.Lit(strconv.FormatFloat(v, 'g', -1, 64)), true
		}
	case decimal128.Num:
		sc := l.Type.(*arrow.Decimal128Type).Scale
		switch t.ID() {
		case arrow.FLOAT64:
			return &logical.Literal{Type: t, Value: v.ToFloat64(sc)}, true
		case arrow.DECIMAL128:
			return rescale(v.BigInt(), sc, t.(*arrow.Decimal128Type))
		case arrow.STRING:
			return logical.Lit(v.ToString(sc)), true
		}
	case string:
		s := strings.TrimSpace(v)
		switch t.ID() {
		case arrow.INT64, arrow.INT32:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, false
			}
			return castInt(n, t)
		case arrow.FLOAT64:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, false
			}
			return &logical.Literal{Type: t, Value: f}, true
		case arrow.DECIMAL128:
			dt := t.(*arrow.Decimal128Type)
			r, ok := new(big.Rat).SetString(s)
			if !ok {
				return nil, false
			}
			r.Mul(r, new(big.Rat).SetInt(pow10(dt.Scale)))
			if !r.IsInt() {
				return nil, false
			}
			return rescale(r.Num(), dt.Scale, dt)
		case arrow.DATE32:
			tm, err := time.Parse("2006-01-02", s)
			if err != nil {
				return nil, false
			}
			return logical.Lit(arrow.Date32FromTime(tm)), true
		case arrow.BOOL:
			switch strings.ToLower(s) {
			case "true", "t", "1":
				return logical.Lit(true), true
			case "false", "f", "0":
				return logical.Lit(false), true
			}
		}
	case arrow.Date32:
		switch t.ID() {
		case arrow.STRING:
			return logical.Lit(v.FormattedString()), true
		case arrow.TIMESTAMP:
			if t.(*arrow.TimestampType).TimeZone == "" {
				return &logical.Literal{Type: t, Value: arrow.Timestamp(int64(v) * temporal.MicrosPerDay)}, true
			}
		}
	case bool:
		if t.ID() == arrow.STRING {
			return logical.Lit(strconv.FormatBool(v)), true
		}
	}
	return nil, false
}

func castInt(v int64, t arrow.DataType) (*logical.Literal, bool) {
	switch t.ID() {
	case arrow.INT64:
		return &logical.Literal{Type: t, Value: v}, true
	case arrow.INT32:
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, false
		}
		return &logical.Literal{Type: t, Value: int32(v)}, true
	case arrow.FLOAT64:
		return &logical.Literal{Type: t, Value: float64(v)}, true
	case arrow.STRING:
		return logical.Lit(strconv.FormatInt(v, 10)), true
	case arrow.DECIMAL128:
		return rescale(big.NewInt(v), 0, t.(*arrow.Decimal128Type))
	}
	return nil, false
}

// rescale converts unscaled value u at scale from to the decimal type dt,
// exactly (no rounding) and within dt's precision.
func rescale(u *big.Int, from int32, dt *arrow.Decimal128Type) (*logical.Literal, bool) {
	v := new(big.Int).Set(u)
	if dt.Scale >= from {
		v.Mul(v, pow10(dt.Scale-from))
	} else {
		q, r := new(big.Int).QuoRem(v, pow10(from-dt.Scale), new(big.Int))
		if r.Sign() != 0 {
			return nil, false
		}
		v = q
	}
	if new(big.Int).Abs(v).Cmp(pow10(dt.Precision)) >= 0 {
		return nil, false
	}
	return &logical.Literal{Type: dt, Value: decimal128.FromBigInt(v)}, true
}

// factorOr pulls conjuncts common to both sides out of an OR:
// (a AND b) OR (a AND c) → a AND (b OR c); (a AND b) OR a → a. TPC-H Q19's
// join key then becomes a conjunct that can become a join key.
//
// Conjuncts are compared by keys (not String): this runs at every OR of a
// chain a = 0 OR a = 1 OR ..., where a side is the whole chain below.
func factorOr(b *logical.Binary, keys *logical.ExprKeys) logical.Expr {
	ls, rs := logical.SplitAnd(b.Left), logical.SplitAnd(b.Right)
	inR := map[int]bool{}
	for _, e := range rs {
		inR[keys.Key(e)] = true
	}
	var common, restL []logical.Expr
	isCommon := map[int]bool{}
	for _, e := range ls {
		if k := keys.Key(e); inR[k] && !isCommon[k] && !hasSubquery(e) {
			common = append(common, e)
			isCommon[k] = true
		} else {
			restL = append(restL, e)
		}
	}
	if len(common) == 0 {
		return b
	}
	var restR []logical.Expr
	for _, e := range rs {
		if !isCommon[keys.Key(e)] {
			restR = append(restR, e)
		}
	}
	if len(restL) == 0 || len(restR) == 0 {
		return logical.And(common...)
	}
	return logical.And(append(common, &logical.Binary{Op: logical.OpOr, Left: logical.And(restL...), Right: logical.And(restR...)})...)
}
