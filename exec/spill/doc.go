// Package spill holds the files operators write when their state does not
// fit in memory: a File is one Arrow IPC stream under the task's work dir
// (its DirName directory, or the system's temporary directory when the task
// has no work dir), written batch by batch, then read back batch by batch;
// a Source is an operator over what a File reads back, for operators that
// run a fresh copy of themselves over what they spilled.
//
// Invariants: a File is removed by Remove whatever state it is in, and
// operators call Remove from Close, so no spill file outlives its
// operator; reading back counts against the task's memory limit, and
// crossing it is a resources error, not an IO error; the bytes written are
// added to the node's SpilledBytes metric.
//
// It may import physical, exec/execop and qerr only.
package spill
