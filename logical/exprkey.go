package logical

import "strconv"

// ExprKeys names expressions by small integers: two expressions get the
// same key when they print the same (their display names are equal), as
// when compared by String, but each node costs only its own text, not its
// subtree's. Rules that compare or count subexpressions by name use it:
// calling String at every node of a chain such as a = 0 OR a = 1 OR ...
// is quadratic in the chain's length.
//
// Keys are remembered per node (expressions are immutable), so a rule keeps
// one ExprKeys for a whole rewrite: nodes it rebuilds are keyed from their
// children's keys. The zero value is not usable; call NewExprKeys.
type ExprKeys struct {
	memo   map[Expr]int
	shapes map[string]int
}

// NewExprKeys returns an empty key table.
func NewExprKeys() *ExprKeys {
	return &ExprKeys{memo: map[Expr]int{}, shapes: map[string]int{}}
}

// Key returns e's key.
func (k *ExprKeys) Key(e Expr) int {
	if id, ok := k.memo[e]; ok {
		return id
	}
	var shape string
	if ch := e.Children(); len(ch) == 0 {
		shape = "leaf " + e.String()
	} else {
		// The node's own text with each child printed as its key: the
		// placeholder names cannot be written in SQL (they start with NUL).
		ph := make([]Expr, len(ch))
		for i, c := range ch {
			ph[i] = &Column{Name: "\x00" + strconv.Itoa(k.Key(c))}
		}
		shape = "node " + e.WithChildren(ph).String()
	}
	id, ok := k.shapes[shape]
	if !ok {
		id = len(k.shapes)
		k.shapes[shape] = id
	}
	k.memo[e] = id
	return id
}
