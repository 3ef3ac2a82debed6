// Package stage cuts a physical plan into the stages of a distributed job
// (the Ballista model, ARCHITECTURE.md §3): every exchange whose data must move
// between executors becomes a stage boundary. A stage's root is a
// physical.ShuffleWriter; its consumers read its output through a
// physical.UnresolvedShuffle, which Resolve turns into a ShuffleReader once
// the producing stage's locations are known (and Unresolve turns back after
// a fetch failure).
//
// The cut is chosen so that the tasks of a stage (one per partition of the
// writer's input, each built with its own execop.TaskContext on some executor)
// are independent: no task relies on another building a sibling partition.
// See Split for the rules.
//
// A physical.SharedCTE read from several places is computed once, as a
// stage that every reading stage reads.
//
// A job that runs on one executor may instead be split with
// Options.InMemory into one Whole stage: the plan keeps its in-memory
// exchanges and runs as a single task of all its partitions, as the
// single-node engine runs it; only the final writer's files (the result,
// or a cache's pinned partitions) go to disk, and those of a Whole stage
// of its own per shared CTE, which the final stage reads.
//
// stage imports physical and qerr only.
package stage
