package logical

import (
	"fmt"
	"strings"

	"github.com/quiverdb/quiver/qerr"
)

// Grouping-set column names: the columns an Expand adds after its input's.
const (
	// ExpandKeyPrefix names Expand's i-th key column (ExpandKeyPrefix + i).
	ExpandKeyPrefix = "__quiver_gs_key_"
	// GroupingSetColumn is the ordinal of the grouping set a row is for.
	GroupingSetColumn = "__quiver_grouping_set"
	// GroupingRowColumn is TRUE on every row made from an input row and
	// NULL on the filler rows of the empty grouping sets (see Expand).
	GroupingRowColumn = "__quiver_gs_row"
)

// MaxGroupingSets bounds how many grouping sets one GROUP BY may have, as
// PostgreSQL does: CUBE of n keys has 2^n.
const MaxGroupingSets = 4096

// Expand emits each input row once per grouping set, so that one Aggregate
// grouped by the keys and the set's ordinal computes every grouping set
// while the input is read once. Output: the input's columns unchanged (the
// aggregates' arguments read them), then one column per key (the key's
// value when the set groups by it, else NULL), then GroupingSetColumn
// (Int32, the set's ordinal in Sets: a rolled-up NULL never meets a real
// NULL, and a set written twice stays two groups), then, when some set is
// empty, GroupingRowColumn.
//
// An empty set must give one row even over no input rows, as a global
// aggregate does. So partition 0 also emits, per empty set, one filler row:
// every input column and key NULL, the set's ordinal, and GroupingRowColumn
// NULL where real rows have TRUE. The aggregate above reads its arguments
// so that the filler counts for nothing (sql makes COUNT(*) a count of
// GroupingRowColumn and guards any other argument that is not NULL when
// its columns are); the filler only makes the group exist.
type Expand struct {
	Input Plan
	Keys  []Expr  // over Input
	Sets  [][]int // each set's keys, as indexes into Keys
	// schema: Input's fields, the keys, the ordinal, the row marker.
	schema *Schema
}

// NewExpand types the keys over input and checks the sets.
func NewExpand(input Plan, keys []Expr, sets [][]int) (*Expand, error) {
	if len(sets) == 0 || len(sets) > MaxGroupingSets {
		return nil, qerr.Planf("GROUP BY makes %d grouping sets; from 1 to %d are allowed", len(sets), MaxGroupingSets)
	}
	in := input.Schema()
	fs := append(make([]Field, 0, in.Len()+len(keys)+2), in.Fields...)
	for i, k := range keys {
		t, _, err := k.DataType(in)
		if err != nil {
			return nil, err
		}
		fs = append(fs, Field{Name: ExpandKeyPrefix + itoa(i), Type: t, Nullable: true})
	}
	empty := false
	for _, s := range sets {
		seen := map[int]bool{}
		for _, k := range s {
			if k < 0 || k >= len(keys) || seen[k] {
				return nil, qerr.Internalf("expand: grouping set %v does not list distinct keys of %d", s, len(keys))
			}
			seen[k] = true
		}
		empty = empty || len(s) == 0
	}
	fs = append(fs, Field{Name: GroupingSetColumn, Type: Int32})
	if empty {
		fs = append(fs, Field{Name: GroupingRowColumn, Type: Bool, Nullable: true})
	}
	return &Expand{Input: input, Keys: keys, Sets: sets, schema: &Schema{Fields: fs}}, nil
}

// HasEmptySet reports whether a set groups by no key (the output then has
// GroupingRowColumn and filler rows).
func (e *Expand) HasEmptySet() bool {
	for _, s := range e.Sets {
		if len(s) == 0 {
			return true
		}
	}
	return false
}

func itoa(i int) string { return fmt.Sprint(i) }

func (*Expand) isPlan()            {}
func (e *Expand) Schema() *Schema  { return e.schema }
func (e *Expand) Children() []Plan { return []Plan{e.Input} }
func (e *Expand) WithChildren(c []Plan) (Plan, error) {
	if err := wantChildren(e, c, 1); err != nil {
		return nil, err
	}
	return NewExpand(c[0], e.Keys, e.Sets)
}
func (e *Expand) Exprs() []Expr                    { return e.Keys }
func (e *Expand) WithExprs(x []Expr) (Plan, error) { return NewExpand(e.Input, x, e.Sets) }
func (e *Expand) String() string {
	return fmt.Sprintf("Expand: keys=[%s], sets=[%s]", exprList(e.Keys), SetsString(e.Sets))
}

// SetsString shows grouping sets as "(0, 1), (0), ()" (key indexes).
func SetsString(sets [][]int) string {
	parts := make([]string, len(sets))
	for i, s := range sets {
		ks := make([]string, len(s))
		for j, k := range s {
			ks[j] = itoa(k)
		}
		parts[i] = "(" + strings.Join(ks, ", ") + ")"
	}
	return strings.Join(parts, ", ")
}
