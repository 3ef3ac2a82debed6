// Package shuffle moves rows between stages through files: the
// ShuffleWriter operator hash-partitions its input by the exchange keys and
// writes one Arrow IPC file per output partition under the task's work dir
// ({work}/{job}/{stage}/{out}/data-{map}.arrow); ShuffleReader and
// CacheReader read such files back, from the local work dir or through the
// task's Fetcher (Arrow Flight) when another executor holds them. Pinned
// cache files are read through the executor's filemap.FileMaps, so they stay
// mapped and decoded between queries. A pinned writer also records each
// file's column statistics (reported with its location) and a zone map per
// written batch in a sidecar ({file}.zones), by which a CacheReader with a
// pruning hint skips batches (zones.go).
//
// Invariants: a file is written under a temporary name and renamed into
// place only when complete, so a reader never sees a partial file; paths are
// built only from parts that ValidFile accepts and so stay under the work
// dir; a reader's failure to reach a location is an *execop.FetchError
// naming it (the scheduler re-runs the map task that wrote it), while
// cancellation is reported as the context's error; pinned (cache) files hold
// their rows in batches of at least the task's batch size; a pinned file's
// sidecar is in place before the file, and a skipped batch is one no row of
// which can satisfy the hint.
package shuffle
