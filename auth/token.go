package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/qerr"
)

// MinTokenBytes is the shortest token accepted: a shared secret short
// enough to guess protects nothing.
const MinTokenBytes = 16

// header is the gRPC metadata key and HTTP header the token travels in.
const header = "authorization"

// Token is the cluster's shared secret. The zero Token is "no auth": its
// options and middleware check and send nothing.
type Token struct {
	secret string
	sum    [32]byte // sha256 of secret: compared in constant time
}

// New makes a token from secret (at least MinTokenBytes after trimming).
func New(secret string) (Token, error) {
	secret = strings.TrimSpace(secret)
	if len(secret) < MinTokenBytes {
		return Token{}, qerr.Planf("auth: the token must be at least %d bytes, got %d", MinTokenBytes, len(secret))
	}
	if strings.ContainsAny(secret, "\r\n\x00") {
		return Token{}, qerr.Planf("auth: the token must be one line of text")
	}
	return Token{secret: secret, sum: sha256.Sum256([]byte(secret))}, nil
}

// Load reads a token from the file at path (surrounding whitespace, such as
// a final newline, is not part of it). An empty path is the zero Token.
func Load(path string) (Token, error) {
	if path == "" {
		return Token{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Token{}, qerr.IOf("auth: read token file: %w", err)
	}
	t, err := New(string(b))
	if err != nil {
		return Token{}, qerr.Planf("auth: token file %s: %w", path, err)
	}
	return t, nil
}

// Enabled reports whether the token is set.
func (t Token) Enabled() bool { return t.secret != "" }

// matches compares a presented "Bearer <token>" value in constant time.
func (t Token) matches(value string) bool {
	got, ok := strings.CutPrefix(value, "Bearer ")
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1
}

// check is the one rule: the call carries exactly the token.
func (t Token) check(values []string) error {
	if len(values) == 0 {
		return status.Error(codes.Unauthenticated, "unauthenticated: this cluster requires a token (start the client with the cluster's --auth-token-file)")
	}
	for _, v := range values {
		if t.matches(v) {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "unauthenticated: the token is wrong")
}

// ServerOptions are the interceptors that check the token on every unary
// call and stream of a gRPC server (none when t is zero).
func (t Token) ServerOptions() []grpc.ServerOption {
	if !t.Enabled() {
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			if err := t.check(md.Get(header)); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			md, _ := metadata.FromIncomingContext(ss.Context())
			if err := t.check(md.Get(header)); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
}

// DialOptions send the token with every call on a client connection (none
// when t is zero).
func (t Token) DialOptions() []grpc.DialOption {
	if !t.Enabled() {
		return nil
	}
	return []grpc.DialOption{grpc.WithPerRPCCredentials(perRPC{t.secret})}
}

type perRPC struct{ secret string }

func (p perRPC) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{header: "Bearer " + p.secret}, nil
}

// RequireTransportSecurity is false: a cluster may run without TLS (see
// the package doc for what the token protects then).
func (perRPC) RequireTransportSecurity() bool { return false }

// HTTP wraps next so that every request needs the token in its
// Authorization header, except those open says need none (health probes,
// the web UI's static files). A refused request gets 401 and nothing else.
func (t Token) HTTP(next http.Handler, open func(*http.Request) bool) http.Handler {
	if !t.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open != nil && open(r) {
			next.ServeHTTP(w, r)
			return
		}
		if err := t.check(r.Header.Values(header)); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="quiver"`)
			http.Error(w, status.Convert(err).Message(), http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
