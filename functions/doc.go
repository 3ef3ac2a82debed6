// Package functions owns the one registry of built-in functions: for each
// function its name and aliases, whether it is a scalar, an aggregate or a
// window function, its signatures (what each argument is coerced to), the
// rule for its result type, and a one-line description.
//
// Every reader of function names uses it: the SQL front end resolves names
// and aliases here, logical's coercion casts arguments by the signatures and
// types results by the rules, exec/eval finds each scalar function's kernel
// under its canonical name (its tests check that every scalar function here
// has one), and SHOW FUNCTIONS lists it.
//
// It depends on no package of this module but qerr, so both planning and
// execution may import it.
package functions
