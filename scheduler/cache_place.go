package scheduler

import (
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// placeCacheReads places the pending tasks that read cached data on the
// executor holding most of their cached bytes, whatever the placement
// policy, when that executor has a free slot (the locality policy already
// does this for every task). It runs before schedule, which places the rest;
// a read-back task whose holder is busy or gone is left to schedule (the
// data then comes over Flight).
func (c *core) placeCacheReads() {
	if c.cfg.Policy == PolicyLocality || len(c.executors) == 0 {
		return
	}
	batches := map[string][]*rpc.TaskDefinition{}
	var order []string
	for _, jid := range c.activeJobs() {
		j := c.jobs[jid]
		if j == nil || j.terminal() || !j.planned || len(j.hits) == 0 {
			continue
		}
		for _, sid := range j.order {
			s := j.stages[sid]
			if s.state != stageRunning || !readsCache(s.resolved) {
				continue
			}
			for _, t := range s.tasks {
				if t.state != taskPending {
					continue
				}
				e := c.cacheHolder(s.resolved, t, taskPartitions(s, t))
				if e == nil {
					continue
				}
				t.state, t.executor = taskRunning, e.meta.ID
				e.running++
				j.touched[e.meta.ID] = true
				c.dirty[j.id] = true
				if _, ok := batches[e.meta.ID]; !ok {
					order = append(order, e.meta.ID)
				}
				batches[e.meta.ID] = append(batches[e.meta.ID], c.taskDef(j, s, t))
			}
		}
	}
	c.flush(batches, order)
}

// cacheHolder is the live executor with a free slot holding the most bytes
// of the cached data task t reads (partition p of plan, or every partition
// if p < 0), or nil (none holds any, or all are busy, or t already failed
// there).
func (c *core) cacheHolder(plan physical.Plan, t *task, p int) *executorState {
	bytes := map[string]int64{}
	var walk func(physical.Plan)
	walk = func(n physical.Plan) {
		if r, ok := n.(*physical.CacheReader); ok {
			for i, part := range r.Locations {
				if p >= 0 && i != p {
					continue
				}
				for _, l := range part {
					bytes[l.Executor.ID] += l.Bytes + 1 // +1: an empty file still says where the partition is
				}
			}
		}
		for _, ch := range n.Children() {
			walk(ch)
		}
	}
	walk(plan)
	var best *executorState
	for _, e := range c.executorsBySeq() {
		if bytes[e.meta.ID] == 0 || e.free() <= 0 || t.failedOn[e.meta.ID] {
			continue
		}
		if best == nil || bytes[e.meta.ID] > bytes[best.meta.ID] {
			best = e
		}
	}
	return best
}

// readsCache reports whether plan contains a CacheReader.
func readsCache(plan physical.Plan) bool {
	if plan == nil {
		return false
	}
	if _, ok := plan.(*physical.CacheReader); ok {
		return true
	}
	for _, ch := range plan.Children() {
		if readsCache(ch) {
			return true
		}
	}
	return false
}
