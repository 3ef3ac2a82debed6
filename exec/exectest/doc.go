// Package exectest is test support for exec operators: a checked allocator
// that must end at zero, record batches from JSON split at given or random
// row boundaries, memory-table plans over them, and Run, which executes a
// plan at several batch sizes and splits, compares its output, and checks
// early Close, double Close and cancellation.
//
// exectest imports exec, so exec's own tests that use it live in package
// exec_test.
package exectest
