// Package filemap keeps pinned (cache) shuffle files memory-mapped and
// decoded once per executor, so every later query over a cached dataset reads
// shared views instead of re-reading and re-decoding the file.
//
// Invariants: a FileMaps entry is keyed by path and file identity (device,
// inode, size, modification time), so a file replaced in place is mapped
// afresh; a mapping is unmapped only after its last reader released it;
// Forget(dir) must be called before a stage directory is removed, which drops
// the mappings and the decoded batches of every file under it. A
// DecodedFile's batches are views over the mapping and live as long as it;
// so do the dictionary codes of its string columns (DictCodes, dict.go),
// found by the identity of a decoded array and built on first request,
// within a byte budget of their own (DefaultDictBudget). A gather of such a
// column recorded by DeriveGather (a filter's output) shares its dictionary
// and gets its rows' codes on first request (derived.go). Whether a string
// column follows from an integer column over the whole file, and its codes
// by integer value, is found once per pair of columns on first request and
// kept with the file (Dependency, dep.go).
//
// filemap imports nothing of exec: exec's TaskContext holds a *FileMaps.
package filemap
