package quiver

import (
	"context"
	"strings"

	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/sql"
)

// The client's half of cache freshness (ARCHITECTURE.md §4): the scheduler
// checks a cache's file and memory-table fingerprints on every hit, but only
// the session knows its catalog, so the session (1) stamps each memory
// table's current version into the plans it sends, and (2) when a table or
// view is replaced or dropped, plans every cache that reads it again.

// stampVersions points every Scan of lp at the table its name has now in
// the catalog, when a write registered it anew (a higher Version, the same
// schema): a cache's plan, or a cached DataFrame's, keeps the table it was
// declared over, so without this the scheduler would compare an INSERT's
// new version, or the new file it added, with nothing. The scheduler then
// finds the sources changed and rebuilds the cache over the current table.
func (s *Session) stampVersions(lp logical.Plan) (logical.Plan, error) {
	out, _, err := logical.TransformUp(lp, func(p logical.Plan) (logical.Plan, bool, error) {
		sc, ok := p.(*logical.Scan)
		if !ok || sc.Table == nil {
			return p, false, nil
		}
		cur, ok := s.cat.Table(sc.Table.Name)
		if !ok || cur == sc.Table || cur.Version == sc.Table.Version || cur.Format != sc.Table.Format || !cur.Schema.Equal(sc.Table.Schema) {
			return p, false, nil
		}
		n := *sc
		n.Table = cur
		return &n, true, nil
	})
	return out, err
}

// invalidateCachesOf runs after name was replaced or dropped: every cache
// that reads name (name's own one first, when replaced; then those reading
// it directly or through other caches, each after the caches it reads) is
// planned again over the new definitions, under a new cache id and lazily,
// and its old entry is removed from the scheduler. A cache that can no
// longer be planned (what it reads is gone) is removed; a view it created
// stays.
func (s *Session) invalidateCachesOf(ctx context.Context, name string, replaced bool) {
	if s.remote == nil {
		return
	}
	var todo []*catalog.Cached
	if ct, ok := s.cat.Cached(name); ok && replaced {
		todo = append(todo, ct)
	}
	todo = append(todo, s.cat.Dependents(name)...)
	for len(todo) > 0 {
		progress := false
		for i := 0; i < len(todo); i++ {
			ct := todo[i]
			if !readyToReplan(ct, todo) {
				continue
			}
			s.replanCache(ctx, ct)
			todo = append(todo[:i], todo[i+1:]...)
			i--
			progress = true
		}
		if !progress { // cannot happen (deps form no cycle); never loop
			for _, ct := range todo {
				s.replanCache(ctx, ct)
			}
			return
		}
	}
}

// readyToReplan reports whether none of ct's dependencies (its own name
// aside) is still waiting in todo: a cache reading another is planned
// again after it, over its new Cache node.
func readyToReplan(ct *catalog.Cached, todo []*catalog.Cached) bool {
	for _, d := range ct.Deps {
		if strings.EqualFold(d, ct.Name) {
			continue
		}
		for _, o := range todo {
			if o != ct && strings.EqualFold(o.Name, d) {
				return false
			}
		}
	}
	return true
}

// replanCache replaces ct by a lazy declaration of the same name, options
// and query planned now, and removes ct's entry on the scheduler.
func (s *Session) replanCache(ctx context.Context, ct *catalog.Cached) {
	s.cat.RemoveCached(ct.Name)
	s.forgetEntry(ctx, ct.CacheID)
	text := "CACHE LAZY TABLE " + quoteIdent(ct.Name)
	var view *catalog.View
	if ct.OwnsView {
		query := ct.SQL
		if v, ok := s.cat.View(ct.Name); ok {
			// The view's query now: CREATE OR REPLACE VIEW of the cache's
			// own name is the user's new definition.
			view, query = v, v.SQL
			s.cat.DropView(ct.Name, true)
		}
		text += " AS " + query
	}
	stmt, err := s.plan(sql.Source{Text: text, Line: 1, Col: 1})
	if err == nil {
		st, ok := stmt.(*sql.CacheTable)
		if !ok {
			err = qerr.Internalf("re-planning cache %q gave %T", ct.Name, stmt)
		} else {
			st.Options = ct.Options
			_, err = s.cacheTable(ctx, st)
		}
	}
	if err != nil && view != nil {
		// The query no longer plans (a table it reads was dropped): the
		// cache goes, the view the user defined stays.
		s.cat.RegisterView(view, true)
	}
}

// refreshCache is REFRESH CACHE name: the entry is removed and built again
// now from the same plan.
func (s *Session) refreshCache(ctx context.Context, st *sql.RefreshCache) (*DataFrame, error) {
	if err := s.needScheduler("REFRESH CACHE"); err != nil {
		return nil, err
	}
	ct, ok := s.cat.Cached(st.Name)
	if !ok {
		return nil, qerr.Planf("REFRESH CACHE: %q is not cached", st.Name)
	}
	node, ok := ct.Plan.(*logical.Cache)
	if !ok {
		return nil, qerr.Internalf("REFRESH CACHE %s: the cache mark has no Cache plan", st.Name)
	}
	if _, err := s.removeEntry(ctx, ct.CacheID, true); err != nil {
		return nil, err
	}
	count, err := logical.NewAggregate(node, nil, []logical.Expr{&logical.AggExpr{Func: logical.AggCount}})
	if err != nil {
		return nil, err
	}
	if _, err := s.newFrame(count).Count(ctx); err != nil {
		return nil, err
	}
	return s.done(), nil
}
