// Package physical owns physical plans as serialisable descriptions: what to
// run, with which partitioning, over which files — not the code that runs it
// (that is exec). Nodes and expressions are plain data: columns are referred
// to by index into the input's Arrow schema and every expression carries its
// resolved type, so an executor needs no catalog, parser or logical plan.
//
// physical imports Arrow only (and qerr).
package physical
