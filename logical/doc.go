// Package logical owns Quiver's logical plans: a sealed set of plan nodes and
// expressions, their schemas and types (Arrow types), the tree helpers the
// optimizer and planner walk them with, the Cache node, and CTERef, the
// references to a WITH query computed once (cte.go).
//
// A logical plan says what to compute, not how. Plans are immutable values:
// rewrites build new nodes. logical imports catalog and Arrow only; it never
// imports sql, physical or exec.
package logical
