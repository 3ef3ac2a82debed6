// Package kernel holds the columnar building blocks the operator rooms share:
// gathering and taking rows of arrays and batches (with run detection for
// mostly-contiguous selections), concatenating batches, building arrays from
// plain Go slices (ArrayMaker), hashing columns (HashColumns and the mixing
// functions every hash table and partitioner must agree on), evaluating
// compiled expressions over a batch (ExprRunner, ExprEvaluator), and the
// slice-sizing helpers of hot loops.
//
// Invariants: a kernel allocates Arrow memory only from the allocator it is
// given, so the task's limit sees it, and returns arrays holding one
// reference for the caller; every row of a "dirty" buffer is written before
// it is read; hashing is deterministic across processes (shuffle partitions
// written on one executor are read by key on another).
package kernel
