package quiver

import (
	"context"
	"slices"
	"sync"

	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	lcodec "github.com/quiverdb/quiver/logical/codec"
)

// Optimizing the inputs of cached plans once. Every query over a cached
// view plans the view again and used to optimize it again with the rest of
// the query, although the cache is read back and the view's own plan only
// names the entry. The optimizer never moves anything across a Cache
// boundary, so a Cache's input optimized on its own is what the whole
// plan's optimization makes of it: the session keeps each input's
// optimized plan by the input's encoding and the table objects it reads,
// and optimizes the rest of the query with the inputs sealed
// (logical.Cache.Sealed), so its rules do not walk them again.

// cacheInputMemoMax is the most inputs a session keeps; past it the memo
// starts again empty (a session rarely holds more cached plans).
const cacheInputMemoMax = 64

// cacheInputMemo maps an input plan's encoding to its optimized plan.
type cacheInputMemo struct {
	mu sync.Mutex
	m  map[string]cacheInputEntry
}

// cacheInputEntry is one input's optimized plan and the table objects the
// input read: a table replaced by one that encodes the same (a file
// registered again) is another object, so its plan is made again.
type cacheInputEntry struct {
	tables []*catalog.Table
	plan   logical.Plan
}

// optimize runs the optimizer over p. Cache inputs are optimized on their
// own, once per session, and sealed while the rest is; with observe (rule
// by rule output) the whole plan is optimized in place, as observe shows.
func (s *Session) optimize(ctx context.Context, p logical.Plan, observe func(string, logical.Plan)) (logical.Plan, error) {
	if observe == nil {
		sealed, ok, err := s.sealCaches(ctx, p)
		if err != nil {
			return nil, err
		}
		if ok {
			out, err := s.opt.Optimize(ctx, sealed, nil)
			if err != nil {
				return nil, err
			}
			return logical.UnsealCaches(out)
		}
	}
	return s.opt.Optimize(ctx, p, observe)
}

// sealCaches returns p with each outermost Cache's input optimized and
// sealed, and whether there was one.
func (s *Session) sealCaches(ctx context.Context, p logical.Plan) (logical.Plan, bool, error) {
	if c, ok := p.(*logical.Cache); ok {
		in, err := s.optimizedInput(ctx, c.Input)
		if err != nil {
			return nil, false, err
		}
		n := *c
		n.Input, n.Sealed = in, true
		return &n, true, nil
	}
	ch := p.Children()
	nc := make([]logical.Plan, len(ch))
	any := false
	for i, c := range ch {
		n, sealed, err := s.sealCaches(ctx, c)
		if err != nil {
			return nil, false, err
		}
		nc[i], any = n, any || sealed
	}
	if !any {
		return p, false, nil
	}
	np, err := p.WithChildren(nc)
	return np, err == nil, err
}

// optimizedInput returns in optimized, from the memo when the same input
// over the same tables was optimized before.
func (s *Session) optimizedInput(ctx context.Context, in logical.Plan) (logical.Plan, error) {
	b, err := lcodec.Encode(in)
	if err != nil {
		return s.opt.Optimize(ctx, in, nil) // not encodable: no key, optimized every time
	}
	key, tables := string(b), scannedTables(in)
	s.inputs.mu.Lock()
	e, ok := s.inputs.m[key]
	s.inputs.mu.Unlock()
	if ok && slices.Equal(e.tables, tables) {
		return e.plan, nil
	}
	out, err := s.opt.Optimize(ctx, in, nil)
	if err != nil {
		return nil, err
	}
	s.inputs.mu.Lock()
	if s.inputs.m == nil || len(s.inputs.m) >= cacheInputMemoMax {
		s.inputs.m = map[string]cacheInputEntry{}
	}
	s.inputs.m[key] = cacheInputEntry{tables: tables, plan: out}
	s.inputs.mu.Unlock()
	return out, nil
}

// scannedTables lists the table objects p's scans read, in plan order.
func scannedTables(p logical.Plan) []*catalog.Table {
	var out []*catalog.Table
	logical.Inspect(p, func(n logical.Plan) bool {
		if sc, ok := n.(*logical.Scan); ok {
			out = append(out, sc.Table)
		}
		return true
	})
	return out
}
