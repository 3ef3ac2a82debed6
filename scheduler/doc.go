// Package scheduler owns the distributed scheduler (ARCHITECTURE.md §3): client
// sessions, jobs and their stage graphs, task placement and retries,
// executor registration and liveness, fetch-failure rollback, job data
// cleanup, the SchedulerService gRPC server, the JSON REST API and the web
// UI over it (embedded), Prometheus metrics on a registry of its own, and
// shutdown (Shutdown) and executors leaving on purpose (DeregisterExecutor).
//
// One event loop goroutine owns every piece of job, stage, task, executor
// and session state (type core). gRPC handlers, timers and the goroutines
// that make outgoing RPCs only send it events and wait for replies; the loop
// turns events into state changes plus a list of actions (launch, cancel,
// remove job data, plan) that the runtime performs asynchronously, each RPC
// with a deadline, reporting failures back as events. The state machine can
// therefore be driven in tests without any network.
//
// With a state directory the sessions are kept across restarts
// (SessionStore): the loop records each change, a writer goroutine writes
// it.
//
// scheduler imports physical, physical/planner, physical/stage,
// physical/codec, logical, logical/codec, catalog, arrowpb, cache, rpc and
// qerr; it must never import exec, sql, the TiDB parser or executor.
package scheduler
