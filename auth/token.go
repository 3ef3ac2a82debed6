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

// DefaultTenant is the tenant of a cluster token, and of every caller of
// a cluster without auth.
const DefaultTenant = "default"

// Identity is who a caller is, as its token says: the tenant its sessions,
// jobs and caches belong to, and whether it holds a cluster token (the
// operator's and the executors': it may call the executor-facing RPCs and
// see every tenant's jobs).
type Identity struct {
	Tenant  string
	Cluster bool
}

// Anonymous is the identity of every caller of a cluster without auth:
// the default tenant, with a cluster token's rights (nothing is checked).
var Anonymous = Identity{Tenant: DefaultTenant, Cluster: true}

// CanSee reports whether id may read, cancel or uncache what belongs to
// tenant: its own tenant's, or anything for a cluster token.
func (id Identity) CanSee(tenant string) bool {
	return id.Cluster || id.Tenant == tenant
}

// Token is the cluster's secret: one or more tokens, each a cluster token
// or a tenant's. The zero Token is "no auth": its options and middleware
// check and send nothing.
type Token struct {
	secret  string // what this process sends: the file's first token
	entries []tokenEntry
}

type tokenEntry struct {
	sum [32]byte // sha256 of the token: compared in constant time
	id  Identity
}

// New makes a cluster token from secret (at least MinTokenBytes after
// trimming).
func New(secret string) (Token, error) {
	secret = strings.TrimSpace(secret)
	if err := checkSecret(secret); err != nil {
		return Token{}, err
	}
	return Token{secret: secret, entries: []tokenEntry{{sum: sha256.Sum256([]byte(secret)), id: Identity{Tenant: DefaultTenant, Cluster: true}}}}, nil
}

func checkSecret(secret string) error {
	if len(secret) < MinTokenBytes {
		return qerr.Planf("auth: the token must be at least %d bytes, got %d", MinTokenBytes, len(secret))
	}
	if strings.ContainsAny(secret, "\r\n\x00") {
		return qerr.Planf("auth: the token must be one line of text")
	}
	return nil
}

// ValidTenant reports whether name may name a tenant: 1 to 64 of A-Z,
// a-z, 0-9, '-', '_' and '.'.
func ValidTenant(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// Parse reads a token file's text: one token per line, blank lines and
// lines starting with '#' ignored. A line "TOKEN" is a cluster token
// (tenant "default", and the right to the executor-facing calls); a line
// "TOKEN TENANT" is a token of that tenant, good for the client calls
// only. This process sends the first cluster token (so that the daemons,
// which share the file, call each other with it), or the first token when
// there is none (a client's file of its tenant's token). A token listed
// twice is an error.
func Parse(text string) (Token, error) {
	var t Token
	var first string
	seen := map[[32]byte]bool{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) > 2 {
			return Token{}, qerr.Planf("auth: line %d: want \"TOKEN\" or \"TOKEN TENANT\", got %d fields", n+1, len(fields))
		}
		if err := checkSecret(fields[0]); err != nil {
			return Token{}, qerr.Planf("auth: line %d: %w", n+1, err)
		}
		id := Identity{Tenant: DefaultTenant, Cluster: true}
		if len(fields) == 2 {
			if !ValidTenant(fields[1]) {
				return Token{}, qerr.Planf("auth: line %d: tenant %q: want 1 to 64 of A-Z, a-z, 0-9, '-', '_' and '.'", n+1, fields[1])
			}
			id = Identity{Tenant: fields[1]}
		}
		sum := sha256.Sum256([]byte(fields[0]))
		if seen[sum] {
			return Token{}, qerr.Planf("auth: line %d: the token is listed twice", n+1)
		}
		seen[sum] = true
		if t.secret == "" && id.Cluster {
			t.secret = fields[0]
		}
		if first == "" {
			first = fields[0]
		}
		t.entries = append(t.entries, tokenEntry{sum: sum, id: id})
	}
	if first == "" {
		return Token{}, qerr.Planf("auth: no token in the file")
	}
	if t.secret == "" {
		t.secret = first
	}
	return t, nil
}

// Load reads a token file (see Parse). An empty path is the zero Token.
func Load(path string) (Token, error) {
	if path == "" {
		return Token{}, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Token{}, qerr.IOf("auth: read token file: %w", err)
	}
	t, err := Parse(string(b))
	if err != nil {
		return Token{}, qerr.Planf("auth: token file %s: %w", path, err)
	}
	return t, nil
}

// Enabled reports whether the token is set.
func (t Token) Enabled() bool { return t.secret != "" }

// identify finds the identity of a presented "Bearer <token>" value. Every
// entry is compared in constant time, so the time taken does not tell
// which matched.
func (t Token) identify(value string) (Identity, bool) {
	got, ok := strings.CutPrefix(value, "Bearer ")
	if !ok {
		return Identity{}, false
	}
	sum := sha256.Sum256([]byte(got))
	var found Identity
	match := 0
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			found, match = e.id, 1
		}
	}
	return found, match == 1
}

// matches reports whether value carries one of the tokens.
func (t Token) matches(value string) bool {
	_, ok := t.identify(value)
	return ok
}

// check is the one rule: the call carries one of the tokens; it returns
// the caller's identity.
func (t Token) check(values []string) (Identity, error) {
	if len(values) == 0 {
		return Identity{}, status.Error(codes.Unauthenticated, "unauthenticated: this cluster requires a token (start the client with the cluster's --auth-token-file)")
	}
	for _, v := range values {
		if id, ok := t.identify(v); ok {
			return id, nil
		}
	}
	return Identity{}, status.Error(codes.Unauthenticated, "unauthenticated: the token is wrong")
}

type identityKey struct{}

// IdentityFrom is the caller's identity that the interceptors or the HTTP
// middleware put in ctx; Anonymous when there is none (a cluster without
// auth, or a call that did not pass through them).
func IdentityFrom(ctx context.Context) Identity {
	if id, ok := ctx.Value(identityKey{}).(Identity); ok {
		return id
	}
	return Anonymous
}

// WithIdentity returns ctx carrying id (for tests and in-process callers).
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// ServerOptions are the interceptors that check the token on every unary
// call and stream of a gRPC server (none when t is zero) and put the
// caller's Identity in the handler's context. The methods clusterOnly
// names (full method names, or prefixes ending in '/' for a whole service)
// refuse a tenant's token with PermissionDenied: they are the executors'
// and the scheduler's calls to each other.
func (t Token) ServerOptions(clusterOnly ...string) []grpc.ServerOption {
	if !t.Enabled() {
		return nil
	}
	allowed := func(id Identity, method string) error {
		if id.Cluster {
			return nil
		}
		for _, m := range clusterOnly {
			if method == m || (strings.HasSuffix(m, "/") && strings.HasPrefix(method, m)) {
				return status.Errorf(codes.PermissionDenied, "permission denied: %s needs the cluster's token, not tenant %s's", method, id.Tenant)
			}
		}
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			id, err := t.check(md.Get(header))
			if err != nil {
				return nil, err
			}
			if err := allowed(id, info.FullMethod); err != nil {
				return nil, err
			}
			return h(WithIdentity(ctx, id), req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			md, _ := metadata.FromIncomingContext(ss.Context())
			id, err := t.check(md.Get(header))
			if err != nil {
				return err
			}
			if err := allowed(id, info.FullMethod); err != nil {
				return err
			}
			return h(srv, &identityStream{ServerStream: ss, ctx: WithIdentity(ss.Context(), id)})
		}),
	}
}

type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }

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

// HTTP wraps next so that every request needs a token in its
// Authorization header, except those open says need none (health probes,
// the web UI's static files); the handler finds the caller's Identity in
// the request's context (IdentityFrom). A refused request gets 401 and
// nothing else.
func (t Token) HTTP(next http.Handler, open func(*http.Request) bool) http.Handler {
	if !t.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open != nil && open(r) {
			next.ServeHTTP(w, r)
			return
		}
		id, err := t.check(r.Header.Values(header))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="quiver"`)
			http.Error(w, status.Convert(err).Message(), http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
	})
}
