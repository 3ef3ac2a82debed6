package tpch

import (
	"embed"
	"io/fs"
	"sort"
	"strings"

	"github.com/quiverdb/quiver/qerr"
)

// dashboardFS holds the cached dashboard workload: view.sql creates the view
// `sales` over lineitem ⋈ orders ⋈ customer ⋈ nation ⋈ region (orders of
// 1994 to 1996, with the revenue expression), and dNN_*.sql are the
// dashboard queries over it.
//
//go:embed dashboard/*.sql
var dashboardFS embed.FS

// DashboardQuery is one query of the dashboard workload.
type DashboardQuery struct {
	Name string // the file name without .sql, e.g. "d01_revenue_by_year"
	SQL  string
}

// DashboardView returns the CREATE VIEW statement of the dashboard's view `sales`.
func DashboardView() string {
	b, err := fs.ReadFile(dashboardFS, "dashboard/view.sql")
	if err != nil {
		panic("tpch: dashboard/view.sql is not embedded: " + err.Error()) // a build defect, not a runtime condition
	}
	return string(b)
}

// DashboardQueries returns the dashboard queries in name order.
func DashboardQueries() ([]DashboardQuery, error) {
	entries, err := fs.ReadDir(dashboardFS, "dashboard")
	if err != nil {
		return nil, qerr.Internalf("tpch: dashboard queries: %w", err)
	}
	var qs []DashboardQuery
	for _, e := range entries {
		name := e.Name()
		if name == "view.sql" || !strings.HasSuffix(name, ".sql") {
			continue
		}
		b, err := fs.ReadFile(dashboardFS, "dashboard/"+name)
		if err != nil {
			return nil, qerr.Internalf("tpch: dashboard query %s: %w", name, err)
		}
		qs = append(qs, DashboardQuery{Name: strings.TrimSuffix(name, ".sql"), SQL: string(b)})
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].Name < qs[j].Name })
	return qs, nil
}
