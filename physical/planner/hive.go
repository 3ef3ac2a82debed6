package planner

import (
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// hivePartitions prunes a hive-partitioned table's files by the scan's
// pushed-down filters and returns the table with the files kept (t itself
// when nothing was pruned) and the scan options: the table's, plus each kept
// file's partition values. A file is dropped only when some filter is
// certainly false or NULL for its values; filters over other columns keep it.
func hivePartitions(n *logical.Scan) (*catalog.Table, map[string]string) {
	t := n.Table
	cols := t.PartitionColumns()
	if len(cols) == 0 {
		return t, t.Options
	}
	first := t.Schema.NumFields() - len(cols)
	types := make([]arrow.DataType, len(cols))
	for i := range cols {
		types[i] = t.Schema.Field(first + i).Type
	}
	opts := make(map[string]string, len(t.Options)+len(t.Files))
	for k, v := range t.Options {
		opts[k] = v
	}
	var keep []int
	for i, f := range t.Files {
		vals, null := catalog.HiveValues(f, cols)
		env := partitionEnv{schema: n.Schema(), cols: cols, types: types, vals: vals, null: null}
		pruned := false
		for _, e := range n.Filters {
			// A filter keeps only rows where it is true: certainly false or
			// NULL for the file's values drops the file.
			v, known := env.eval(e)
			b, isBool := v.(*bool)
			if known && (v == nil || (isBool && !*b)) {
				pruned = true
				break
			}
		}
		if pruned {
			continue
		}
		keep = append(keep, i)
		enc := make([]*string, len(cols))
		for j := range cols {
			if !null[j] {
				enc[j] = &vals[j]
			}
		}
		opts[physical.PartitionValuesKey(f)] = physical.EncodePartitionValues(enc)
	}
	if len(keep) == len(t.Files) {
		return t, opts
	}
	nt := *t
	nt.Files = make([]string, len(keep))
	if len(t.RowGroupRows) == len(t.Files) {
		nt.RowGroupRows = make([][]int64, len(keep))
		nt.RowGroupRanges = make([][][]catalog.KeyRange, len(keep))
	}
	for j, i := range keep {
		nt.Files[j] = t.Files[i]
		if nt.RowGroupRows != nil {
			nt.RowGroupRows[j] = t.RowGroupRows[i]
			if i < len(t.RowGroupRanges) {
				nt.RowGroupRanges[j] = t.RowGroupRanges[i]
			}
		}
	}
	nt.Rows = -1
	return &nt, opts
}

// partitionEnv evaluates a filter over one file's partition values.
type partitionEnv struct {
	schema *logical.Schema
	cols   []string
	types  []arrow.DataType
	vals   []string
	null   []bool
}

// value is an evaluated operand: nil (NULL), *bool, int64, string or
// arrow.Date32.
type value any

// eval returns the filter's value; known is false for what it cannot
// evaluate (any column but a partition column, any other expression).
func (p *partitionEnv) eval(e logical.Expr) (value, bool) {
	switch e := e.(type) {
	case *logical.Column:
		i, err := p.schema.IndexOf(e.Qualifier, e.Name)
		if err != nil {
			return nil, false
		}
		name := p.schema.Field(i).Name
		for j, c := range p.cols {
			if strings.EqualFold(c, name) {
				if p.null[j] {
					return nil, true
				}
				return p.typed(j)
			}
		}
		return nil, false
	case *logical.Literal:
		switch v := e.Value.(type) {
		case nil:
			return nil, true
		case int64:
			return v, true
		case int32:
			return int64(v), true
		case string:
			return v, true
		case arrow.Date32:
			return v, true
		case bool:
			return &v, true
		}
		return nil, false
	case *logical.Alias:
		return p.eval(e.Expr)
	case *logical.Cast:
		v, ok := p.eval(e.Expr)
		if !ok || v == nil {
			return v, ok
		}
		return castValue(v, e.Type)
	case *logical.Not:
		v, ok := p.eval(e.Expr)
		if !ok || v == nil {
			return v, ok
		}
		b, isBool := v.(*bool)
		if !isBool {
			return nil, false
		}
		r := !*b
		return &r, true
	case *logical.IsNull:
		v, ok := p.eval(e.Expr)
		if !ok {
			return nil, false
		}
		r := (v == nil) != e.Negated
		return &r, true
	case *logical.InList:
		v, ok := p.eval(e.Expr)
		if !ok {
			return nil, false
		}
		if v == nil {
			return nil, true
		}
		found, sawNull := false, false
		for _, x := range e.List {
			w, ok := p.eval(x)
			if !ok {
				return nil, false
			}
			if w == nil {
				sawNull = true
				continue
			}
			c, ok := compare(v, w)
			if !ok {
				return nil, false
			}
			if c == 0 {
				found = true
			}
		}
		if !found && sawNull {
			return nil, true
		}
		r := found != e.Negated
		return &r, true
	case *logical.Binary:
		if e.Op == logical.OpAnd || e.Op == logical.OpOr {
			l, lok := p.eval(e.Left)
			r, rok := p.eval(e.Right)
			lb, _ := l.(*bool)
			rb, _ := r.(*bool)
			if e.Op == logical.OpAnd {
				if (lok && lb != nil && !*lb) || (rok && rb != nil && !*rb) {
					f := false
					return &f, true
				}
			} else if (lok && lb != nil && *lb) || (rok && rb != nil && *rb) {
				t := true
				return &t, true
			}
			if !lok || !rok {
				return nil, false
			}
			if lb == nil || rb == nil {
				return nil, true
			}
			res := *lb && *rb
			if e.Op == logical.OpOr {
				res = *lb || *rb
			}
			return &res, true
		}
		if !e.Op.IsComparison() {
			return nil, false
		}
		l, lok := p.eval(e.Left)
		r, rok := p.eval(e.Right)
		if !lok || !rok {
			return nil, false
		}
		if l == nil || r == nil {
			return nil, true
		}
		c, ok := compare(l, r)
		if !ok {
			return nil, false
		}
		var res bool
		switch e.Op {
		case logical.OpEq:
			res = c == 0
		case logical.OpNotEq:
			res = c != 0
		case logical.OpLt:
			res = c < 0
		case logical.OpLtEq:
			res = c <= 0
		case logical.OpGt:
			res = c > 0
		case logical.OpGtEq:
			res = c >= 0
		}
		return &res, true
	}
	return nil, false
}

// typed is partition column j's value in its column type.
func (p *partitionEnv) typed(j int) (value, bool) {
	return castValue(p.vals[j], p.types[j])
}

// castValue converts a value to type t where the conversion is exact.
func castValue(v value, t arrow.DataType) (value, bool) {
	s, isString := v.(string)
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING:
		switch x := v.(type) {
		case string:
			return x, true
		case int64:
			return strconv.FormatInt(x, 10), true
		case arrow.Date32:
			return x.FormattedString(), true
		}
	case arrow.INT64, arrow.INT32:
		switch x := v.(type) {
		case int64:
			return x, true
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return n, true
			}
		}
	case arrow.DATE32:
		switch x := v.(type) {
		case arrow.Date32:
			return x, true
		case string:
			if isString {
				if d, err := time.Parse("2006-01-02", strings.TrimSpace(s)); err == nil {
					return arrow.Date32FromTime(d), true
				}
			}
		}
	}
	return nil, false
}

// compare orders two values of one kind.
func compare(a, b value) (int, bool) {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		if !ok {
			return 0, false
		}
		return cmp3(x < y, x > y), true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	case arrow.Date32:
		y, ok := b.(arrow.Date32)
		if !ok {
			return 0, false
		}
		return cmp3(x < y, x > y), true
	}
	return 0, false
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}
