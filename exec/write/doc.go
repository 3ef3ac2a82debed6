// Package write holds the operators that store query results in files:
// FileSink, run by every task of a write's last data stage, writes its
// partition's rows into new files under the write's staging directory (one
// file per Hive partition key, in Parquet, CSV, JSON or Arrow IPC) and
// outputs the list of files with their row counts; FileCommit, run once,
// moves exactly the listed files into the target and removes the staging
// directory, so a failed or cancelled job, or a retried task's abandoned
// attempt, leaves nothing at the target.
//
// Invariants: every file is created under the staging directory with a
// name no other task attempt uses; a staging directory is always a hidden
// sibling of the target named with logical.StagingMark (checked before any
// file is created, renamed or removed); the commit replaces an existing
// target only when the plan says Overwrite, moving the old one aside first
// and back if the move in fails.
package write
