package auth

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

const secret = "correct-horse-battery-staple"

func mustNew(t *testing.T, s string) Token {
	t.Helper()
	tok, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestNewAndLoad(t *testing.T) {
	if _, err := New("short"); err == nil || !strings.Contains(err.Error(), "at least 16 bytes") {
		t.Errorf("short token: %v", err)
	}
	if _, err := New("two\nlines-of-secret-text"); err == nil {
		t.Error("a token with a newline inside was accepted")
	}
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := Load(path)
	if err != nil || !tok.Enabled() || !tok.matches("Bearer "+secret) || tok.matches("Bearer "+secret+"\n") {
		t.Errorf("Load: %v enabled=%v", err, tok.Enabled())
	}
	if tok, err := Load(""); err != nil || tok.Enabled() {
		t.Errorf("no file: %v enabled=%v", err, tok.Enabled())
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "read token file") {
		t.Errorf("missing file: %v", err)
	}
}

// TestGRPC: a real server with the interceptors refuses unary calls and
// streams without the token or with a wrong one, and serves the right one.
func TestGRPC(t *testing.T) {
	tok := mustNew(t, secret)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(tok.ServerOptions()...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(lis) }()
	defer func() { srv.Stop(); <-done }()

	call := func(opts ...grpc.DialOption) (unary, stream codes.Code) {
		t.Helper()
		cc, err := grpc.NewClient(lis.Addr().String(), append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := healthpb.NewHealthClient(cc)
		_, err = c.Check(ctx, &healthpb.HealthCheckRequest{})
		unary = status.Code(err)
		w, err := c.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = w.Recv()
		}
		return unary, status.Code(err)
	}
	wrong := mustNew(t, "not-the-right-secret-at-all")
	for name, c := range map[string]struct {
		opts []grpc.DialOption
		want codes.Code
	}{
		"no token":    {nil, codes.Unauthenticated},
		"wrong token": {wrong.DialOptions(), codes.Unauthenticated},
		"the token":   {tok.DialOptions(), codes.OK},
	} {
		u, s := call(c.opts...)
		if u != c.want || s != c.want {
			t.Errorf("%s: unary %s, stream %s; want %s", name, u, s, c.want)
		}
	}
	if (Token{}).ServerOptions() != nil || (Token{}).DialOptions() != nil {
		t.Error("the zero token adds options")
	}
}

func TestHTTP(t *testing.T) {
	tok := mustNew(t, secret)
	h := tok.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("data")) }),
		func(r *http.Request) bool { return r.URL.Path == "/healthz" })
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/api/jobs", "", 401},
		{"/api/jobs", "Bearer wrong-wrong-wrong-wrong", 401},
		{"/api/jobs", secret, 401}, // no scheme
		{"/api/jobs", "Bearer " + secret, 200},
		{"/healthz", "", 200},
	} {
		req := httptest.NewRequest("GET", c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want || (c.want == 401) == strings.Contains(rec.Body.String(), "data") {
			t.Errorf("%s with %q: %d %q, want %d", c.path, c.auth, rec.Code, rec.Body.String(), c.want)
		}
	}
}
