// Package auth owns the cluster's authentication and transport security.
// TLS (tls.go) is a process's certificate and CA: the gRPC server and dial
// options and the HTTP listener that speak TLS, mutual on gRPC when there
// is a CA. Token (token.go) is the shared secret: a Token
// loaded from a file (--auth-token-file), the gRPC server interceptors that
// check it on every call and stream (the scheduler's service, the
// executors' service and their Arrow Flight service), the per-call
// credentials clients send it with, and the HTTP middleware that checks it
// on the REST API and /metrics. A zero Token turns all of it off.
//
// The token travels as "authorization: Bearer <token>"; without TLS it
// crosses the network in clear text, so it keeps out processes that can
// reach a port but not those that can read the traffic.
//
// auth imports only qerr of ours.
package auth
