package scheduler

import (
	"time"

	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
)

// Flight tickets. Every location the scheduler hands out (in a task's
// stage plan, in a job's result) carries a ticket it signed with
// Config.TicketKey, naming exactly that file and an expiry; the executors
// serve a DoGet only for such a ticket (executor/flight.go). So a reader
// can fetch only what a job of the scheduler was told to read, and a client
// only the results of jobs whose status it may watch.

// signTicket signs the ticket of one location (cacheID "" unless it is
// read back as part of a cache entry). Without a key (a core driven by
// tests without Config defaults) nothing is signed.
func (c *core) signTicket(l physical.PartitionLocation, cacheID string, expires time.Time) string {
	if !c.cfg.TicketKey.Enabled() {
		return ""
	}
	return string(c.cfg.TicketKey.Sign(auth.Ticket{
		JobID: l.JobID, StageID: l.StageID, OutputPartition: l.OutputPartition, MapPartition: l.MapPartition,
		Cache: cacheID, Expires: expires,
	}))
}

// ticketExpiry is when tickets signed now expire.
func (c *core) ticketExpiry() time.Time {
	ttl := c.cfg.TicketTTL
	if ttl <= 0 {
		ttl = defaultTicketTTL
	}
	return c.now().Add(ttl)
}

// signPlan returns plan with a fresh ticket on every location of its
// shuffle and cache readers. plan is not modified (its location slices may
// be shared with the cache registry), and nodes without readers below are
// kept as they are.
func (c *core) signPlan(plan physical.Plan) physical.Plan {
	exp := c.ticketExpiry()
	sign := func(locs [][]physical.PartitionLocation, cacheID string) [][]physical.PartitionLocation {
		out := make([][]physical.PartitionLocation, len(locs))
		for i, part := range locs {
			out[i] = make([]physical.PartitionLocation, len(part))
			for j, l := range part {
				l.Ticket = c.signTicket(l, cacheID, exp)
				out[i][j] = l
			}
		}
		return out
	}
	var visit func(p physical.Plan) physical.Plan
	visit = func(p physical.Plan) physical.Plan {
		switch r := p.(type) {
		case *physical.ShuffleReader:
			cp := *r
			cp.Locations = sign(r.Locations, "")
			return &cp
		case *physical.CacheReader:
			cp := *r
			cp.Locations = sign(r.Locations, r.Key.CacheID)
			return &cp
		}
		cs := p.Children()
		if len(cs) == 0 {
			return p
		}
		out := make([]physical.Plan, len(cs))
		changed := false
		for i, ch := range cs {
			out[i] = visit(ch)
			changed = changed || out[i] != ch
		}
		if !changed {
			return p
		}
		return p.WithChildren(out)
	}
	return visit(plan)
}

// encodeStage encodes s's resolved plan with fresh tickets for its tasks
// and records when they were signed.
func (c *core) encodeStage(s *stage) error {
	enc, err := encodePlan(c.signPlan(s.resolved))
	if err != nil {
		return err
	}
	s.encoded, s.signed = enc, c.now()
	return nil
}

// stagePlanBytes is the encoding a task of s is launched with: the one
// made at resolution, signed again once half the ticket lifetime has
// passed, so a task launched late in a long job never gets tickets about
// to expire. (A failure to encode again keeps the older encoding, which
// encoded before.)
func (c *core) stagePlanBytes(s *stage) []byte {
	ttl := c.cfg.TicketTTL
	if ttl <= 0 {
		ttl = defaultTicketTTL
	}
	if s.resolved != nil && c.now().Sub(s.signed) > ttl/2 {
		if err := c.encodeStage(s); err != nil {
			c.log.Warn("signing a stage's tickets again", "err", err)
		}
	}
	return s.encoded
}

// signResult puts a ticket on each of a job's result locations.
func (c *core) signResult(locs []*rpc.PartitionLocation) {
	exp := c.ticketExpiry()
	for _, l := range locs {
		l.Ticket = []byte(c.signTicket(physical.PartitionLocation{
			JobID: l.JobId, StageID: int(l.StageId), OutputPartition: int(l.OutputPartition), MapPartition: int(l.MapPartition),
		}, "", exp))
	}
}
