package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/rpc"
)

// The observation hooks: core calls each at one point of a job's, task's,
// executor's or session's life, and each moves the metrics and writes the
// one log line an operator reads for that event. They run on the loop.

func (c *core) onSessionOpened(id string) {
	c.m.sessions.WithLabelValues("opened").Inc()
	c.log.Info("session opened", "session", id)
}

func (c *core) onSessionClosed(id string) {
	c.m.sessions.WithLabelValues("closed").Inc()
	c.log.Info("session closed", "session", id)
}

func (c *core) onJobSubmitted(j *job) {
	c.m.jobsSubmitted.Inc()
	args := []any{"job", j.id, "session", j.session, "request_id", j.requestID}
	if j.name != "" {
		args = append(args, "name", j.name)
	}
	if j.sql != "" {
		args = append(args, "sql_digest", sqlDigest(j.sql))
	}
	c.log.Info("job submitted", args...)
}

// onJobEnded runs once per job, when it turns terminal.
func (c *core) onJobEnded(j *job) {
	outcome := outcomeFailed
	switch j.state {
	case rpc.JobState_JOB_SUCCESSFUL:
		outcome = outcomeSucceeded
	case rpc.JobState_JOB_CANCELLED:
		outcome = outcomeCancelled
	}
	d := j.finished.Sub(j.submitted)
	c.m.jobEnded(outcome, d)
	args := []any{"job", j.id, "session", j.session, "request_id", j.requestID, "outcome", outcome, "duration", d.Round(time.Microsecond)}
	if j.sql != "" {
		args = append(args, "sql_digest", sqlDigest(j.sql))
	}
	if j.state == rpc.JobState_JOB_SUCCESSFUL {
		args = append(args, "rows", jobRows(j))
	} else {
		args = append(args, "error", j.errMsg)
	}
	level := slog.LevelInfo
	if j.state == rpc.JobState_JOB_FAILED {
		level = slog.LevelWarn
	}
	c.log.Log(context.Background(), level, "job finished", args...)
	for _, ev := range j.events {
		c.log.Info("cache "+ev.outcome, "job", j.id, "cache", ev.key.CacheID, "name", ev.name, "partitions", ev.partitions, "bytes", ev.bytes)
	}
	if j.build != nil && j.build.repair != nil && j.state == rpc.JobState_JOB_SUCCESSFUL {
		c.log.Info("cache repaired", "job", j.id, "cache", j.build.key.CacheID, "session", j.build.key.SessionID, "partitions", j.build.repair, "duration", d.Round(time.Microsecond))
	} else if j.build != nil && j.state == rpc.JobState_JOB_SUCCESSFUL {
		c.log.Info("cache built", "job", j.id, "cache", j.build.key.CacheID, "session", j.build.key.SessionID, "rows", jobRows(j), "duration", d.Round(time.Microsecond))
	}
}

// onTaskSucceeded counts the bytes the task wrote.
func (c *core) onTaskSucceeded(t *task) {
	var n int64
	for _, l := range t.locations {
		n += l.Bytes
	}
	c.m.shuffleWrite.Add(float64(n))
}

// onStageSucceeded counts the bytes the stage read from its input stages.
func (c *core) onStageSucceeded(j *job, s *stage) {
	var n int64
	for _, in := range s.inputs {
		if p := j.stages[in]; p != nil {
			for _, t := range p.tasks {
				for _, l := range t.locations {
					n += l.Bytes
				}
			}
		}
	}
	c.m.shuffleRead.Add(float64(n))
}

// onTaskFailed: retried says whether the task is queued again.
func (c *core) onTaskFailed(j *job, s *stage, t *task, executorID string, retried bool) {
	c.m.tasksFailed.Inc()
	if retried {
		c.m.tasksRetried.Inc()
		c.log.Info("task retried", "job", j.id, "request_id", j.requestID, "stage", s.id, "partition", t.partition, "attempt", t.attempt, "executor", executorID, "error", t.lastErr)
	}
}

// onTasksRequeued counts tasks queued again without a failure of their own
// (their executor was lost, or an input they read was).
func (c *core) onTasksRequeued(n int) { c.m.tasksRetried.Add(float64(n)) }

func (c *core) onStageRetry(j *job, p *stage, lost int, why string) {
	c.m.stagesRetried.Inc()
	c.m.tasksRetried.Add(float64(lost))
	c.log.Warn("stage retried", "job", j.id, "stage", p.id, "rollback", p.rollbacks, "lost_tasks", lost, "why", why)
}

func (c *core) onExecutorJoined(ex *executorState) {
	c.m.executorsJoin.Inc()
	c.log.Info("executor joined", "executor", ex.meta.ID, "addr", ex.addr(), "vcores", ex.vcores)
}

func (c *core) onExecutorLost(ex *executorState, why string) {
	c.m.executorsLost.Inc()
	c.log.Warn("executor lost", "executor", ex.meta.ID, "addr", ex.addr(), "why", why)
}

// logCacheStats writes one line per cache invalidation cause whose count
// moved since the last call: the registry removes entries in several places
// (session close, executor loss, the sweeper, UNCACHE), and its counters are
// the one record of all of them.
func (c *core) logCacheStats() {
	st := c.caches.Stats()
	for i, n := range st.Invalidations {
		if i >= len(c.seenInval) {
			break
		}
		if d := n - c.seenInval[i]; d > 0 {
			cause := cache.Cause(i)
			msg := "cache invalidated"
			if cause == cache.CauseEvicted {
				msg = "cache evicted"
			}
			c.log.Info(msg, "cause", cause.String(), "entries", d, "cache_entries", st.Entries, "cache_bytes", st.Bytes)
		}
		c.seenInval[i] = n
	}
}

// jobRows is the number of rows a successful job returned: the rows its
// final stage wrote.
func jobRows(j *job) int64 {
	s := j.stages[j.final]
	if s == nil {
		return 0
	}
	var n int64
	for _, t := range s.tasks {
		for _, l := range t.locations {
			n += l.Rows
		}
	}
	return n
}

// sqlDigest names a statement in logs without writing its text (which may
// hold literals an operator should not see in logs): the first 12 hex
// digits of its SHA-256.
func sqlDigest(sql string) string {
	h := sha256.Sum256([]byte(sql))
	return hex.EncodeToString(h[:6])
}

// maxSQLText bounds the statement text a job keeps for the UI and REST: a
// client may send any size, and ended jobs are kept for an hour.
const maxSQLText = 64 << 10

// clipSQL cuts sql to maxSQLText bytes at a character boundary, marking
// the cut.
func clipSQL(sql string) string {
	if len(sql) <= maxSQLText {
		return sql
	}
	cut := maxSQLText
	for cut > 0 && !utf8.RuneStart(sql[cut]) {
		cut--
	}
	return sql[:cut] + " …(cut)"
}
