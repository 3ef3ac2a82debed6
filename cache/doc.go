// Package cache owns the dataset-cache registry: the scheduler-side record of
// which cached datasets exist, which job is building each one, and where the
// pinned shuffle output of a materialized one lives (ARCHITECTURE.md §4).
//
// The registry is the State interface, keyed by Key{SessionID, CacheID}, with
// an in-memory backend (Memory, the default) and a durable one (Durable) that
// keeps materialized entries in a bbolt database in the scheduler's state
// directory, one record per entry, written off the caller's path. Every
// entry follows one lifecycle:
//
//	(absent) --Begin--> Pending{job} --Complete(job)--> Materialized
//	                    Pending{job} --Abort(job)-----> (absent)
//	           Pending | Materialized --Invalidate----> (absent)
//
// The contract is safe against the out-of-order events of a distributed
// scheduler: Begin gives exactly one caller the claim, Complete promotes only
// a Pending entry owned by the completing job (a duplicate is idempotent,
// anything else is ErrStale), and every removal returns the removed entries so
// the caller can unpin and delete their shuffle files. Waiters on a Pending
// entry are woken by a channel closed on every transition, never by polling.
//
// Each entry also carries its lineage (Source: files with size and
// modification time, memory tables with their version), recorded by
// SetSources while Pending and compared by the scheduler on every hit
// (Changed), and a stale mark (MarkStale) for an entry kept with
// consistency 'snapshot' after its sources changed. Options lists the entry
// options (ttl, consistency, scope, sort_by) with their checks; an entry of scope
// 'global' is kept after its session closes under its tenant's global name
// space (GlobalSession), which the scheduler manages. A reader count names the
// build it was taken on (Release), so a reader of a removed entry never
// drops a reader of its replacement.
//
// An executor loss makes an entry that keeps partitions elsewhere partial
// (LoseExecutor: the lost partitions are Missing); a repair build claims it
// (BeginRepair), and CompleteRepair merges the rebuilt partitions back, so
// an entry's files may lie under several (job, stage) outputs (Outputs),
// all pinned.
//
// The eviction sweeper's policy (TTL, and a byte cap that evicts the
// entries of least value per byte — build time × uses aged by
// HeatHalfLife ÷ bytes — never touching an entry with readers, and a
// per-session quota) lives here as methods; running it periodically is the
// scheduler's job.
//
// cache imports Arrow, bbolt, physical (for PartitionLocation and CacheKey),
// settings and qerr, and nothing else of ours.
package cache
