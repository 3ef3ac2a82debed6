package quiver

import "github.com/quiverdb/quiver/auth"

// WithAuthToken makes Connect send t with every call to the cluster's
// scheduler and every result fetch from its executors: a cluster started
// with --auth-token-file refuses calls without it (Unauthenticated). Load t
// with auth.Load. It has no effect on a standalone or local session.
func WithAuthToken(t auth.Token) Option { return func(c *config) { c.token = t } }

// WithTLS makes Connect reach the cluster's scheduler and executors over
// TLS, verifying them against t's CA and presenting t's certificate (a
// cluster with --tls-ca requires one). Load t with auth.LoadTLS. It has no
// effect on a standalone or local session.
func WithTLS(t auth.TLS) Option { return func(c *config) { c.tls = t } }
