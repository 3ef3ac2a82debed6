// Package executor is the Quiver executor process (ARCHITECTURE.md §3): it
// registers with the scheduler and heartbeats, runs the tasks the scheduler
// pushes with ExecutorService.LaunchTasks (one stage partition each, a
// physical.ShuffleWriter plan decoded with physical/codec, run with exec),
// reports their status (with each operator's metrics), serves the shuffle
// files under its work directory over Arrow Flight DoGet to holders of a
// ticket the scheduler signed (the key comes with registration), and deletes job data when told to (never pinned
// cache stages). FlightFetcher is the matching Flight client, used by
// shuffle readers on other executors and by the client to fetch results.
// It serves Prometheus metrics and /healthz on MetricsAddr, and Drain
// leaves the cluster without losing running tasks.
//
// executor may import exec, exec/eval, physical, physical/codec, arrowpb, rpc
// and qerr; never logical, sql, scheduler or the TiDB parser (arch_test.go at
// the module root checks this).
package executor
