package scheduler

import (
	"strings"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Memory tables on a cluster (ARCHITECTURE.md §3). A client keeps a memory
// table's rows on the executors as cache entries marked with
// cache.TableOption, one per write: the write's job builds the entry like any
// cache, and every read names it by a Cache node whose input is a bare scan
// of the memory table. Such an entry is the table's data, not a copy: a
// read never rebuilds it (there is nothing to rebuild it from) and never
// finds it stale; a read of one lost with its executor fails, naming the
// table, rather than answering without its rows.

// isTableRead reports whether n reads a memory table's entry.
func isTableRead(n *logical.Cache) bool {
	if !cache.IsTable(n.Options) {
		return false
	}
	s, ok := n.Input.(*logical.Scan)
	return ok && s.Table != nil && s.Table.Format == catalog.Memory
}

// tableHit lowers a read of materialized table entry e, or fails when any
// of its partitions went with an executor.
func (c *core) tableHit(n *logical.Cache, key cache.Key, e cache.Entry) (*physical.CacheReader, error) {
	name := e.Options[cache.TableOption]
	if dead := c.deadHolders(e); len(dead) > 0 {
		return nil, qerr.Execf("memory table %q: rows it held on executor %s were lost with that executor; write the table again (TRUNCATE or CREATE OR REPLACE)", name, strings.Join(dead, ", "))
	}
	if e.Partial() {
		return nil, qerr.Execf("memory table %q: %d of its partitions were lost with an executor; write the table again (TRUNCATE or CREATE OR REPLACE)", name, len(e.Missing))
	}
	return &physical.CacheReader{Key: key, Name: cacheLabel(n.Name, e.Name), OutSchema: e.Schema, Locations: e.Locations, Disjoint: e.Disjoint}, nil
}

// tableGone is the error of a read of a table entry the registry no longer
// has: lost with every executor holding it, or removed.
func tableGone(n *logical.Cache) error {
	return qerr.Execf("memory table %q: rows it held on the executors are gone (lost with their executor, or removed with its session); write the table again (TRUNCATE or CREATE OR REPLACE)", n.Options[cache.TableOption])
}

// tableUnreadable is the error of a read that could not fetch table entry
// e's rows from executorID. The entry stays: they are the only copy, and
// the executor may only have been unreachable for a moment; if it is lost,
// the next read says so (tableHit). Running the statement again is safe.
func tableUnreadable(e cache.Entry, executorID string) error {
	return qerr.Unavailablef("memory table %q: its rows could not be read from executor %s (the statement can be run again; if that executor is lost, the rows it held are gone)", e.Options[cache.TableOption], executorID)
}
