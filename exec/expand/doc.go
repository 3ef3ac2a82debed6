// Package expand runs physical.Expand: each input row once per grouping
// set, for the one hash aggregate above it that computes every grouping
// set of a GROUP BY ROLLUP, CUBE or GROUPING SETS in a single pass over
// its input.
//
// It is a room of its own rather than part of exec/aggregate because it
// is a row operator with no state across batches: it neither groups nor
// accumulates, the aggregate above it is the ordinary HashAggregate (so
// partial and final phases, spilling and the exchange between them work
// unchanged), and either can change without the other.
//
// Invariants: the keys are evaluated once per input batch; every output
// batch shares the input's columns and the key arrays (Retain, never a
// copy) and adds only constant columns (the NULL keys, the set's ordinal,
// the row marker), which are made from the task's allocator once per
// batch length and shared by the batches of that length (with very many
// sets, each set's ordinal column is made when used, so what is held does
// not grow with the number of sets). Partition 0 emits,
// after its input ends, the filler rows of the empty sets (see
// physical.Expand). It imports exec/eval, exec/kernel, exec/execop and
// physical, never exec.
package expand
