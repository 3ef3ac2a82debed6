package scheduler

import (
	"context"
	"log/slog"
	"sort"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// schedule places pending tasks of resolved stages on executors with free
// slots, jobs in submission order, and emits one LaunchTasks per executor.
func (c *core) schedule() {
	execs := c.executorsBySeq()
	freeTotal := 0
	for _, e := range execs {
		freeTotal += max(e.free(), 0)
	}
	if freeTotal == 0 {
		return
	}
	batches := map[string][]*rpc.TaskDefinition{}
	var order []string
	for _, jid := range c.activeJobs() {
		j := c.jobs[jid]
		if j == nil || j.terminal() || !j.planned {
			continue
		}
		for _, sid := range j.order {
			s := j.stages[sid]
			if s.state != stageRunning {
				continue
			}
			for _, t := range s.tasks {
				if t.state != taskPending {
					continue
				}
				e := c.pick(execs, s, t)
				if e == nil {
					c.flush(batches, order)
					return
				}
				t.state, t.executor = taskRunning, e.meta.ID
				e.running++
				freeTotal--
				j.touched[e.meta.ID] = true
				c.dirty[j.id] = true
				if _, ok := batches[e.meta.ID]; !ok {
					order = append(order, e.meta.ID)
				}
				batches[e.meta.ID] = append(batches[e.meta.ID], c.taskDef(j, s, t))
				if freeTotal == 0 {
					c.flush(batches, order)
					return
				}
			}
		}
	}
	c.flush(batches, order)
}

func (c *core) flush(batches map[string][]*rpc.TaskDefinition, order []string) {
	for _, id := range order {
		e := c.executors[id]
		for _, t := range batches[id] {
			if !c.log.Enabled(context.Background(), slog.LevelDebug) {
				break
			}
			c.log.Debug("task launched", "job", t.Id.JobId, "request_id", t.RequestId, "stage", t.Id.StageId,
				"partition", t.Id.Partition, "attempt", t.Id.Attempt, "executor", id)
		}
		c.actions = append(c.actions, actLaunch{executorID: id, addr: e.addr(), tasks: batches[id]})
	}
}

func (c *core) executorsBySeq() []*executorState {
	out := make([]*executorState, 0, len(c.executors))
	for _, e := range c.executors {
		out = append(out, e)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].seq < out[b].seq })
	return out
}

// pick chooses an executor with a free slot for t per the policy, avoiding
// the executors t already failed on while another has room; nil when none
// has a free slot.
func (c *core) pick(execs []*executorState, s *stage, t *task) *executorState {
	var cands []*executorState
	for _, e := range execs {
		if e.free() > 0 && !t.failedOn[e.meta.ID] {
			cands = append(cands, e)
		}
	}
	if len(cands) == 0 {
		for _, e := range execs {
			if e.free() > 0 {
				cands = append(cands, e)
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	switch c.cfg.Policy {
	case PolicyRoundRobin:
		for _, e := range cands {
			if e.seq > c.rrLast {
				c.rrLast = e.seq
				return e
			}
		}
		c.rrLast = cands[0].seq
		return cands[0]
	case PolicyLocality:
		bytes := inputBytes(s.resolved, taskPartitions(s, t))
		best := cands[0]
		for _, e := range cands[1:] {
			if bytes[e.meta.ID] > bytes[best.meta.ID] {
				best = e
			}
		}
		return best
	}
	return cands[0] // bias: the earliest registered executor with room
}

// taskDef is what LaunchTasks sends for t.
func (c *core) taskDef(j *job, s *stage, t *task) *rpc.TaskDefinition {
	return &rpc.TaskDefinition{Id: c.taskID(j, s, t), Plan: c.stagePlanBytes(s), Settings: j.settings.Wire(), AllPartitions: s.whole, RequestId: j.requestID}
}

// taskPartitions is the partitions of s's plan that t runs: its own, or
// every one for a whole stage (-1).
func taskPartitions(s *stage, t *task) int {
	if s.whole {
		return -1
	}
	return t.partition
}

// inputBytes sums, per executor, the bytes of the shuffle and cache files
// partition p of plan reads (every partition if p < 0).
func inputBytes(plan physical.Plan, p int) map[string]int64 {
	out := map[string]int64{}
	var walk func(physical.Plan)
	walk = func(n physical.Plan) {
		var locs [][]physical.PartitionLocation
		switch r := n.(type) {
		case *physical.ShuffleReader:
			locs = r.Locations
		case *physical.CacheReader:
			locs = r.Locations
		}
		for i, part := range locs {
			if p >= 0 && i != p {
				continue
			}
			for _, l := range part {
				out[l.Executor.ID] += l.Bytes
			}
		}
		for _, ch := range n.Children() {
			walk(ch)
		}
	}
	if plan != nil {
		walk(plan)
	}
	return out
}

// ---- job status and watchers ----

func (c *core) status(j *job) *rpc.JobStatus {
	st := &rpc.JobStatus{JobId: j.id, State: j.state, StagesTotal: int32(len(j.order))}
	for _, id := range j.order {
		s := j.stages[id]
		if s.state == stageSuccessful {
			st.StagesDone++
		}
		n := len(s.tasks)
		if n == 0 {
			n = s.plan.OutputPartitions()
			if s.whole {
				n = 1
			}
		}
		for _, t := range s.tasks {
			if t.kept {
				n-- // never run: no task of this job
			} else if t.state == taskSuccessful {
				st.TasksDone++
			}
		}
		st.TasksTotal += int32(n)
	}
	if j.state == rpc.JobState_JOB_FAILED || j.state == rpc.JobState_JOB_CANCELLED {
		st.Error, st.ErrorKind = j.errMsg, int32(j.errKind)
	}
	if j.state == rpc.JobState_JOB_SUCCESSFUL {
		for _, part := range stageLocations(j.stages[j.final]) {
			locs := locationsToRPC(part, c.executors)
			c.signResult(locs)
			st.Result = append(st.Result, &rpc.PartitionLocations{Locations: locs})
		}
		st.ResultSchema = j.resultSchema
	}
	return st
}

// watch registers a watcher: a channel that always holds the latest status
// (capacity 1, the loop replaces an unread one) and is closed after a
// terminal status.
func (c *core) watch(jobID string) watchReply {
	j := c.jobs[jobID]
	if j == nil {
		return watchReply{err: qerr.Planf("scheduler: unknown job %q", jobID)}
	}
	ch := make(chan *rpc.JobStatus, 1)
	ch <- c.status(j)
	if j.terminal() {
		close(ch)
	} else {
		j.watchers = append(j.watchers, ch)
	}
	return watchReply{ch: ch}
}

// notify sends the latest status of every changed job to its watchers.
// Only the loop sends on a watcher channel, so after draining an unread
// status the send cannot block.
func (c *core) notify() {
	for jid := range c.dirty {
		delete(c.dirty, jid)
		j := c.jobs[jid]
		if j == nil || len(j.watchers) == 0 {
			continue
		}
		st := c.status(j)
		for _, ch := range j.watchers {
			select {
			case <-ch:
			default:
			}
			ch <- st
			if j.terminal() {
				close(ch)
			}
		}
		if j.terminal() {
			j.watchers = nil
		}
	}
}
