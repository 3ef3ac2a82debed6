// Package auth owns the cluster's authentication and transport security.
// TLS (tls.go) is a process's certificate and CA: the gRPC server and dial
// options and the HTTP listener that speak TLS, mutual on gRPC when there
// is a CA. Token (token.go) is the cluster's secrets: a Token loaded from a
// file (--auth-token-file) of cluster tokens and tenants' tokens, the gRPC
// server interceptors that check it on every call and stream (the
// scheduler's service, the executors' service and their Arrow Flight
// service) and put the caller's Identity (tenant, cluster rights) in the
// handler's context, the per-call credentials clients send it with, and
// the HTTP middleware that checks it on the REST API and /metrics. A zero
// Token turns all of it off. TicketKey (ticket.go) signs the Flight
// tickets the scheduler hands out and checks them on the executors.
//
// The token travels as "authorization: Bearer <token>"; without TLS it
// crosses the network in clear text, so it keeps out processes that can
// reach a port but not those that can read the traffic.
//
// auth imports only qerr of ours.
package auth
