package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/rpc"
)

// TestAuthTokenRealProcesses: a scheduler and an executor started with
// --auth-token-file refuse a client without the token or with a wrong one
// (Unauthenticated), on gRPC, on the executor's Flight service and on REST
// and /metrics, and serve one with it, queries, results and all. Health
// probes stay open.
func TestAuthTokenRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quiver binary")
	}
	bin := buildQuiver(t)
	const secret = "a-shared-secret-for-this-test-only"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	schedAddr, restAddr, execAddr, metricsAddr := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	startDaemon(t, bin, []string{"QUIVER_AUTH_TOKEN_FILE=" + tokenFile}, "scheduler", "--bind", schedAddr, "--rest", restAddr)
	startDaemon(t, bin, nil, "executor", "--scheduler", schedAddr, "--bind", execAddr, "--work-dir", t.TempDir(),
		"--metrics-bind", metricsAddr, "--heartbeat", "200ms", "--auth-token-file", tokenFile)

	get := func(url, token string) int {
		req, _ := http.NewRequest("GET", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	rest := "http://" + restAddr
	// The executor registered: the scheduler took its token.
	waitUntil(t, "the executor to register", 30*time.Second, func() bool {
		req, _ := http.NewRequest("GET", rest+"/api/executors", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == 200 && strings.Count(string(b), `"id"`) == 1
	})
	for _, c := range []struct {
		url, token string
		want       int
	}{
		{rest + "/api/jobs", "", 401},
		{rest + "/api/jobs", "wrong-token-wrong-token", 401},
		{rest + "/metrics", "", 401},
		{rest + "/api/jobs", secret, 200},
		{rest + "/metrics", secret, 200},
		{rest + "/healthz", "", 200},
		{rest + "/", "", 200},
		{"http://" + metricsAddr + "/metrics", "", 401},
		{"http://" + metricsAddr + "/metrics", secret, 200},
		{"http://" + metricsAddr + "/healthz", "", 200},
	} {
		if got := get(c.url, c.token); got != c.want {
			t.Errorf("GET %s with token %q: %d, want %d", c.url, c.token, got, c.want)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wrong, err := auth.New("wrong-token-wrong-token")
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string][]quiver.Option{"no token": nil, "wrong token": {quiver.WithAuthToken(wrong)}} {
		s, err := quiver.Connect(ctx, schedAddr, opts...)
		if err == nil {
			s.Close()
			t.Errorf("%s: Connect succeeded", name)
		} else if !strings.Contains(err.Error(), "Unauthenticated") {
			t.Errorf("%s: %v, want Unauthenticated", name, err)
		}
	}
	right, err := auth.Load(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := quiver.Connect(ctx, schedAddr, quiver.WithAuthToken(right))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nation, err := filepath.Abs("../../tpch/sf0.01/nation.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterParquet(ctx, "nation", nation); err != nil {
		t.Fatal(err)
	}
	df, err := s.SQL(ctx, "SELECT count(*) AS n FROM nation")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := df.Print(ctx, &out, format.CSV, format.Options{}); err != nil {
		t.Fatalf("query with the token: %v", err)
	}
	if out.String() != "n\n25\n" {
		t.Errorf("result %q", out.String())
	}

	// The executor's own services: Flight and ExecutorService refuse a
	// caller without the token before looking at what it asks.
	cc, err := grpc.NewClient(execAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ticket, _ := proto.Marshal(&rpc.PartitionLocation{JobId: "00000000-0000-4000-8000-000000000000", StageId: 1})
	stream, err := flight.NewFlightServiceClient(cc).DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("Flight DoGet without the token: %v, want Unauthenticated", err)
	}
	_, err = rpc.NewExecutorServiceClient(cc).RemoveJobData(ctx, &rpc.RemoveJobDataRequest{JobId: "00000000-0000-4000-8000-000000000000"})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("RemoveJobData without the token: %v, want Unauthenticated", err)
	}
	// A bad token file stops a daemon at once with a clear error.
	short := filepath.Join(t.TempDir(), "short")
	os.WriteFile(short, []byte("abc"), 0o600)
	code, _, errs := runCLI(t, "", "scheduler", "--bind", "127.0.0.1:0", "--auth-token-file", short)
	if code != 2 || !strings.Contains(errs, "at least 16 bytes") {
		t.Errorf("short token file: exit %d: %s", code, errs)
	}
}
