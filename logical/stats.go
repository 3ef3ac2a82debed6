package logical

import (
	"math"
	"strings"
)

// Stats estimates a plan's output for the choices that need only its
// order of magnitude: the join order, the build side and whether to
// broadcast. It is the one cardinality model of the planner and optimizer.
type Stats struct {
	// Rows is the estimated row count, at least 1 for a non-empty input.
	Rows float64
	// Distinct parallels the plan's schema: the estimated number of
	// distinct values of each column, 0 when unknown.
	Distinct []float64
}

// defaultRows is assumed for a table whose size its metadata does not give.
const defaultRows = 1e6

// Estimate computes p's Stats bottom-up: scans from the catalog's row
// counts and distinct-value bounds; filters by per-conjunct selectivity
// (range comparisons of a column by the share of its value bounds they
// admit);
// equi-joins as |L|·|R| / max(distinct keys); grouped aggregates by the
// distinct values of their keys. Unknown distinct counts fall back to the
// fixed guesses of selectivity and joinStats.
func Estimate(p Plan) Stats {
	switch n := p.(type) {
	case *Scan:
		rows := float64(n.Table.Rows)
		if n.Table.Rows < 0 {
			rows = defaultRows
		}
		if n.Fetch >= 0 {
			rows = math.Min(rows, float64(n.Fetch))
		}
		d := make([]float64, n.Schema().Len())
		if len(n.Table.Distinct) == n.Table.Schema.NumFields() {
			for i := range d {
				c := i
				if n.Projection != nil {
					c = n.Projection[i]
				}
				d[i] = float64(n.Table.Distinct[c])
			}
		}
		return capped(rows, d)
	case *Filter:
		in := Estimate(n.Input)
		d := append([]float64(nil), in.Distinct...)
		sel, rest := rangeSelectivity(SplitAnd(n.Predicate), n.Input)
		for _, c := range rest {
			sel *= selectivity(c, n.Input.Schema(), in)
			if i, ok := equalsLiteral(c, n.Input.Schema()); ok {
				d[i] = 1
			}
		}
		return capped(math.Max(1, in.Rows*sel), d)
	case *Projection:
		in := Estimate(n.Input)
		d := make([]float64, len(n.List))
		for i, e := range n.List {
			d[i] = in.distinctOf(e, n.Input.Schema())
		}
		return Stats{Rows: in.Rows, Distinct: d}
	case *Aggregate:
		return aggregateStats(n)
	case *Join:
		return joinStats(n)
	case *Limit:
		in := Estimate(n.Input)
		if n.Fetch >= 0 {
			return capped(math.Min(in.Rows, float64(n.Fetch)), in.Distinct)
		}
		return in
	case *Sort:
		in := Estimate(n.Input)
		if n.Fetch >= 0 {
			return capped(math.Min(in.Rows, float64(n.Fetch)), in.Distinct)
		}
		return in
	case *Union:
		var rows float64
		d := make([]float64, n.Schema().Len())
		for _, c := range n.Inputs {
			s := Estimate(c)
			rows += s.Rows
			for i := range d {
				if i < len(s.Distinct) {
					d[i] += s.Distinct[i]
				}
			}
		}
		return capped(rows, d)
	case *Values:
		return Stats{Rows: float64(len(n.Rows)), Distinct: make([]float64, n.Schema().Len())}
	case *EmptyRelation:
		rows := 0.0
		if n.ProduceOneRow {
			rows = 1
		}
		return Stats{Rows: rows, Distinct: make([]float64, n.Schema().Len())}
	case *SubqueryAlias:
		return Estimate(n.Input)
	case *Cache:
		return Estimate(n.Input)
	case *CTERef:
		return Estimate(n.Input)
	case *Expand:
		in := Estimate(n.Input)
		d := append(append([]float64(nil), in.Distinct...), make([]float64, len(n.Keys))...)
		for i, k := range n.Keys {
			d[len(in.Distinct)+i] = in.distinctOf(k, n.Input.Schema()) + 1 // and NULL
		}
		d = append(d, float64(len(n.Sets)))
		if n.HasEmptySet() {
			d = append(d, 2)
		}
		return Stats{Rows: in.Rows * float64(len(n.Sets)), Distinct: d}
	case *Window:
		in := Estimate(n.Input)
		return Stats{Rows: in.Rows, Distinct: append(append([]float64(nil), in.Distinct...), make([]float64, len(n.List))...)}
	}
	return Stats{Rows: defaultRows, Distinct: make([]float64, p.Schema().Len())}
}

// capped returns Stats with every distinct count at most rows.
func capped(rows float64, d []float64) Stats {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = math.Min(v, rows)
	}
	return Stats{Rows: rows, Distinct: out}
}

// distinctOf is the estimated distinct count of e over a plan with schema
// s and these stats: a column's (through aliases and casts), else 0.
func (st Stats) distinctOf(e Expr, s *Schema) float64 {
	switch x := e.(type) {
	case *Column:
		i, err := s.IndexOf(x.Qualifier, x.Name)
		if err != nil || i >= len(st.Distinct) {
			return 0
		}
		return st.Distinct[i]
	case *Alias:
		return st.distinctOf(x.Expr, s)
	case *Cast:
		return st.distinctOf(x.Expr, s)
	case *Literal:
		return 1
	}
	return 0
}

// equalsLiteral reports the column index of a "column = literal" conjunct.
func equalsLiteral(c Expr, s *Schema) (int, bool) {
	b, ok := c.(*Binary)
	if !ok || b.Op != OpEq {
		return 0, false
	}
	col, lit := b.Left, b.Right
	if _, ok := col.(*Literal); ok {
		col, lit = lit, col
	}
	cc, ok := col.(*Column)
	if !ok {
		return 0, false
	}
	if _, ok := lit.(*Literal); !ok {
		return 0, false
	}
	i, err := s.IndexOf(cc.Qualifier, cc.Name)
	return i, err == nil
}

// selectivity is the fraction of rows a predicate is assumed to keep over
// an input with schema s and stats in.
func selectivity(c Expr, s *Schema, in Stats) float64 {
	switch x := c.(type) {
	case *Binary:
		switch x.Op {
		case OpAnd:
			return selectivity(x.Left, s, in) * selectivity(x.Right, s, in)
		case OpOr:
			a, b := selectivity(x.Left, s, in), selectivity(x.Right, s, in)
			return a + b - a*b
		case OpEq:
			return eqSelectivity(x, s, in)
		case OpNotEq:
			return 1 - eqSelectivity(x, s, in)
		case OpLt, OpLtEq, OpGt, OpGtEq:
			return 1.0 / 3
		}
	case *Not:
		return math.Max(0.05, 1-selectivity(x.Expr, s, in))
	case *InList:
		eq := eqSelectivity(&Binary{Op: OpEq, Left: x.Expr, Right: &Literal{}}, s, in)
		sel := math.Min(1, eq*float64(len(x.List)))
		if x.Negated {
			return math.Max(0.05, 1-sel)
		}
		return sel
	case *Like:
		if x.Negated {
			return 0.9
		}
		return 0.1
	case *IsNull:
		if x.Negated {
			return 0.95
		}
		return 0.05
	case *Literal:
		if v, ok := x.Value.(bool); ok && !v {
			return 0
		}
		if x.Value == nil {
			return 0
		}
		return 1
	}
	return 0.1
}

// eqSelectivity is the fraction of rows kept by an equality: 1/distinct of
// a column compared with a constant when known, else 0.01 for key-like
// column names and 0.1 for others.
func eqSelectivity(b *Binary, s *Schema, in Stats) float64 {
	col := b.Left
	if _, ok := col.(*Literal); ok {
		col = b.Right
	}
	if d := in.distinctOf(col, s); d >= 1 {
		if _, isCol := col.(*Column); isCol {
			return 1 / d
		}
	}
	if cc, ok := col.(*Column); ok && strings.HasSuffix(strings.ToLower(cc.Name), "key") {
		return 0.01
	}
	return 0.1
}

func aggregateStats(n *Aggregate) Stats {
	in := Estimate(n.Input)
	d := make([]float64, n.Schema().Len())
	if len(n.GroupBy) == 0 {
		return Stats{Rows: 1, Distinct: d}
	}
	groups, unknown := 1.0, false
	for i, g := range n.GroupBy {
		d[i] = in.distinctOf(g, n.Input.Schema())
		if d[i] >= 1 {
			groups *= d[i]
		} else {
			unknown = true
		}
	}
	if unknown {
		groups = math.Max(groups, in.Rows*0.1)
	}
	return capped(math.Max(1, math.Min(groups, in.Rows)), d)
}

// joinStats estimates a join: an equi-join on one key keeps |L|·|R| /
// max(dL, dR) rows, where dX is side X's distinct key count (capped at its
// rows); with no distinct count known on either side, the smaller side is
// taken to be unique on its keys. A residual filter keeps its
// selectivity; semi, anti and mark joins keep at most the left rows.
func joinStats(n *Join) Stats {
	l, r := Estimate(n.Left), Estimate(n.Right)
	ls, rs := n.Left.Schema(), n.Right.Schema()
	rows := l.Rows * r.Rows
	// Per key pair the larger distinct count divides; over several pairs
	// the largest such divisor is used, as if the keys were correlated (a
	// composite key like (partkey, suppkey) has far fewer combinations
	// than the product of its columns' counts; underestimating a join is
	// what leads to the worst orders).
	div, known := 0.0, false
	dl, dr, knownL, knownR := 0.0, 0.0, false, false
	for _, p := range n.On {
		a, b := math.Min(l.distinctOf(p.Left, ls), l.Rows), math.Min(r.distinctOf(p.Right, rs), r.Rows)
		// A key unique in its table (a primary key) holds every value a
		// foreign key referencing it can match, so the other side counts
		// no more distinct values than that table's rows, even when its own
		// bound (a value range) says more.
		if dom := keyDomain(n.Right, p.Right); dom >= 1 && a >= 1 {
			a = math.Min(a, dom)
		}
		if dom := keyDomain(n.Left, p.Left); dom >= 1 && b >= 1 {
			b = math.Min(b, dom)
		}
		if a >= 1 {
			dl, knownL = math.Max(dl, a), true
		}
		if b >= 1 {
			dr, knownR = math.Max(dr, b), true
		}
		if a >= 1 || b >= 1 {
			div, known = math.Max(div, math.Max(a, b)), true
		}
	}
	if len(n.On) > 0 {
		if known {
			rows /= div
		} else {
			rows /= math.Max(1, math.Min(l.Rows, r.Rows))
		}
	}
	joined := Stats{Rows: rows, Distinct: append(append([]float64(nil), l.Distinct...), r.Distinct...)}
	if n.Filter != nil {
		rows *= selectivity(n.Filter, ls.Join(rs), joined)
	}
	rows = math.Max(rows, 1)
	switch n.Type {
	case SemiJoin:
		frac := 1.0
		if knownL && knownR && len(n.On) > 0 {
			frac = math.Min(1, dr/dl)
		}
		return capped(math.Max(1, l.Rows*frac), l.Distinct)
	case AntiJoin:
		return capped(l.Rows, l.Distinct)
	case MarkJoin:
		return capped(l.Rows, append(append([]float64(nil), l.Distinct...), 2))
	case LeftJoin:
		rows = math.Max(rows, l.Rows)
	case RightJoin:
		rows = math.Max(rows, r.Rows)
	case FullJoin:
		rows = math.Max(rows, l.Rows+r.Rows)
	}
	d := joined.Distinct
	for _, p := range n.On { // equal keys share their smaller distinct count
		li, err1 := indexOfCol(p.Left, ls)
		ri, err2 := indexOfCol(p.Right, rs)
		if err1 && err2 && d[li] >= 1 && d[len(l.Distinct)+ri] >= 1 {
			m := math.Min(d[li], d[len(l.Distinct)+ri])
			d[li], d[len(l.Distinct)+ri] = m, m
		}
	}
	return capped(rows, d)
}

// indexOfCol resolves a plain column reference in s.
func indexOfCol(e Expr, s *Schema) (int, bool) {
	c, ok := e.(*Column)
	if !ok {
		return 0, false
	}
	i, err := s.IndexOf(c.Qualifier, c.Name)
	return i, err == nil
}

// keyDomain is the row count of the table whose column e (over p's schema)
// reads, if that column is unique there (its distinct bound equals the
// table's rows); else 0.
func keyDomain(p Plan, e Expr) float64 {
	for {
		switch x := e.(type) {
		case *Alias:
			e = x.Expr
			continue
		case *Cast:
			e = x.Expr
			continue
		}
		break
	}
	i, ok := indexOfCol(e, p.Schema())
	if !ok {
		return 0
	}
	return columnDomain(p, i)
}

// columnDomain is keyDomain for output column i of p.
func columnDomain(p Plan, i int) float64 {
	switch n := p.(type) {
	case *Scan:
		c := i
		if n.Projection != nil {
			c = n.Projection[i]
		}
		if len(n.Table.Distinct) == n.Table.Schema.NumFields() && n.Table.Rows > 0 && n.Table.Distinct[c] == n.Table.Rows {
			return float64(n.Table.Rows)
		}
		return 0
	case *Filter:
		return columnDomain(n.Input, i)
	case *Sort:
		return columnDomain(n.Input, i)
	case *Limit:
		return columnDomain(n.Input, i)
	case *SubqueryAlias:
		return columnDomain(n.Input, i)
	case *Cache:
		return columnDomain(n.Input, i)
	case *CTERef:
		return columnDomain(n.Input, i)
	case *Projection:
		return keyDomain(n.Input, n.List[i])
	case *Aggregate:
		if i < len(n.GroupBy) {
			return keyDomain(n.Input, n.GroupBy[i])
		}
	case *Join:
		if nl := n.Left.Schema().Len(); i < nl {
			return columnDomain(n.Left, i)
		} else if n.Type != SemiJoin && n.Type != AntiJoin && n.Type != MarkJoin {
			return columnDomain(n.Right, i-nl)
		}
	}
	return 0
}
