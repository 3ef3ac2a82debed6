package rpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// RequestIDHeader is the gRPC metadata key (and HTTP header) a request id
// travels in: made by the client for one query (or by the first server
// that sees a call without one), forwarded by the scheduler to the
// executors in TaskDefinition.request_id, and written in every log line
// about that request.
const RequestIDHeader = "x-quiver-request-id"

// maxRequestID bounds an id taken from a peer: anything longer, or with
// other characters than ValidRequestID allows, is replaced by a fresh id.
const maxRequestID = 64

// NewRequestID returns a fresh random id (16 hex digits).
func NewRequestID() string {
	var b [8]byte
	rand.Read(b[:]) // crypto/rand.Read does not fail (it panics if the OS has no randomness)
	return hex.EncodeToString(b[:])
}

// ValidRequestID reports whether id may be logged as it is: 1 to 64 of
// A-Z, a-z, 0-9, '-', '_' and '.'.
func ValidRequestID(id string) bool {
	if len(id) == 0 || len(id) > maxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// WithRequestID returns ctx whose outgoing calls carry id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, RequestIDHeader, id)
}

type requestIDKey struct{}

// RequestID is the request id of an incoming call (set by
// RequestIDServerOptions), or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ContextWithRequestID returns ctx carrying id as RequestID reads it.
func ContextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// incomingRequestID is the valid id the caller sent, or a fresh one.
func incomingRequestID(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(RequestIDHeader) {
		if ValidRequestID(v) {
			return v
		}
	}
	return NewRequestID()
}

// RequestIDServerOptions are the interceptors that give every call a
// request id: the caller's when it sent a valid one, otherwise a fresh one
// (this server is the first hop). Handlers read it with RequestID; the
// caller gets it back in the response header RequestIDHeader.
func RequestIDServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			id := incomingRequestID(ctx)
			grpc.SetHeader(ctx, metadata.Pairs(RequestIDHeader, id))
			return h(ContextWithRequestID(ctx, id), req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			id := incomingRequestID(ss.Context())
			ss.SetHeader(metadata.Pairs(RequestIDHeader, id))
			return h(srv, &requestIDStream{ServerStream: ss, ctx: ContextWithRequestID(ss.Context(), id)})
		}),
	}
}

type requestIDStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *requestIDStream) Context() context.Context { return s.ctx }
