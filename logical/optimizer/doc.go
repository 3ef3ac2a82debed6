// Package optimizer owns Quiver's logical optimizer: named, single-purpose
// rewrite rules over logical plans and the driver that runs them in batches,
// some once and some to a fixpoint.
//
// Every rule keeps its input plan's output schema (names, qualifiers, types);
// the driver checks this after every rule that reports a change. Rules never
// move anything across a logical.Cache boundary (they may optimize inside a
// Cache's input as a separate tree and keep its CacheID), nor across a
// logical.CTERef from outside, except push_down_cte_filter, which gives every
// reference of a CTE the same filter.
//
// optimizer imports logical (and catalog only through logical's types); it
// never imports sql, physical or exec.
package optimizer
