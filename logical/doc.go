// Package logical owns Quiver's logical plans: a sealed set of plan nodes and
// expressions, their schemas and types (Arrow types), the tree helpers the
// optimizer and planner walk them with, and the Cache node.
//
// A logical plan says what to compute, not how. Plans are immutable values:
// rewrites build new nodes. logical imports catalog and Arrow only; it never
// imports sql, physical or exec.
package logical
