// Package stage cuts a physical plan into the stages of a distributed job
// (the Ballista model, DESIGN.md §5): every exchange whose data must move
// between executors becomes a stage boundary. A stage's root is a
// physical.ShuffleWriter; its consumers read its output through a
// physical.UnresolvedShuffle, which Resolve turns into a ShuffleReader once
// the producing stage's locations are known (and Unresolve turns back after
// a fetch failure).
//
// The cut is chosen so that the tasks of a stage (one per partition of the
// writer's input, each built with its own exec.TaskContext on some executor)
// are independent: no task relies on another building a sibling partition.
// See Split for the rules.
//
// stage imports physical and qerr only.
package stage
