package logical

import (
	"fmt"
	"strings"

	"github.com/quiverdb/quiver/qerr"
)

// ---- CTERef -----------------------------------------------------------------

// CTERef is one reference to a WITH query that the statement reads more than
// once: every reference carries the query's plan (Input) and the same ID, and
// the distributed engine computes Input once per job and lets every reference
// read that one result (ARCHITECTURE.md §3, "Shared CTEs"). Its schema is
// Input's. Optimizer rules never push anything into Input from outside (a
// filter of one reference must not reach the others' rows), so every
// reference's Input stays the same plan; the physical planner shares only
// references whose Inputs are still equal and plans any other on its own.
type CTERef struct {
	ID    int // unique per WITH query in a statement, ≥ 1
	Name  string
	Input Plan
	// Filtered marks that the OR of every reference's filter has been put
	// on top of Input (the optimizer's push_down_cte_filter), once.
	Filtered bool
}

// NewCTERef is a reference to WITH query name (id) over its plan in.
func NewCTERef(id int, name string, in Plan) (*CTERef, error) {
	if id < 1 {
		return nil, qerr.Internalf("CTE %q: id %d, want ≥ 1", name, id)
	}
	return &CTERef{ID: id, Name: name, Input: in}, nil
}

func (*CTERef) isPlan()            {}
func (r *CTERef) Schema() *Schema  { return r.Input.Schema() }
func (r *CTERef) Children() []Plan { return []Plan{r.Input} }
func (r *CTERef) WithChildren(ch []Plan) (Plan, error) {
	if err := wantChildren(r, ch, 1); err != nil {
		return nil, err
	}
	n := *r
	n.Input = ch[0]
	return &n, nil
}
func (r *CTERef) Exprs() []Expr                  { return nil }
func (r *CTERef) WithExprs([]Expr) (Plan, error) { return r, nil }
func (r *CTERef) String() string                 { return fmt.Sprintf("SharedCTE: %s id=%d", r.Name, r.ID) }

// refString is how Indent shows a reference after the first one of its
// CTE, whose input it already showed.
func (r *CTERef) refString() string {
	return fmt.Sprintf("CTERef: %s id=%d (reads the shared result above)", r.Name, r.ID)
}

// CTERefCounts counts the references to each shared CTE in p, the way they
// are computed: a CTE's own references count once, however often the CTE
// that holds them is referenced.
func CTERefCounts(p Plan) map[int]int {
	out := map[int]int{}
	var walk func(Plan)
	walk = func(p Plan) {
		if r, ok := p.(*CTERef); ok {
			out[r.ID]++
			if out[r.ID] > 1 {
				return
			}
		}
		for _, c := range p.Children() {
			walk(c)
		}
	}
	walk(p)
	return out
}

// indentCTE writes a plan tree as Indent does, showing each shared CTE's
// input under its first reference only.
func indentCTE(b *strings.Builder, p Plan) {
	n := 0
	seen := map[int]bool{}
	var walk func(Plan, int)
	walk = func(p Plan, depth int) {
		n++
		line := p.String()
		r, isRef := p.(*CTERef)
		if isRef && seen[r.ID] {
			line = r.refString()
		}
		fmt.Fprintf(b, "%02d)%s%s\n", n, strings.Repeat("--", depth), line)
		if isRef {
			if seen[r.ID] {
				return
			}
			seen[r.ID] = true
		}
		for _, c := range p.Children() {
			walk(c, depth+1)
		}
	}
	walk(p, 0)
}
