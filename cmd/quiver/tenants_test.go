package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/rpc"
)

// TestTenantsRealProcesses: with a token file of a cluster token and two
// tenants' tokens, each tenant sees, watches, cancels, lists and uncaches
// only its own jobs, sessions and caches (another's are answered as
// unknown), two tenants' caches of the same data are two copies, a
// tenant's token cannot call the executor-facing RPCs, and the cluster
// token sees everything.
func TestTenantsRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quiver binary")
	}
	bin := buildQuiver(t)
	const (
		clusterSecret = "cluster-secret-0123456789"
		aliceSecret   = "alice-secret-0123456789"
		bobSecret     = "bob-secret-0123456789"
	)
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	text := "# the executors' and the operator's\n" + clusterSecret + "\n" + aliceSecret + " alice\n" + bobSecret + " bob\n"
	if err := os.WriteFile(tokenFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	schedAddr, restAddr, execAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	startDaemon(t, bin, nil, "scheduler", "--bind", schedAddr, "--rest", restAddr, "--auth-token-file", tokenFile)
	startDaemon(t, bin, nil, "executor", "--scheduler", schedAddr, "--bind", execAddr, "--work-dir", t.TempDir(),
		"--heartbeat", "200ms", "--auth-token-file", tokenFile)

	rest := func(method, path, secret string, into any) int {
		req, _ := http.NewRequest(method, "http://"+restAddr+path, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if into != nil && resp.StatusCode == 200 {
			if err := json.Unmarshal(b, into); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
		}
		return resp.StatusCode
	}
	waitUntil(t, "the executor to register", 30*time.Second, func() bool {
		var execs []map[string]any
		return rest("GET", "/api/executors", clusterSecret, &execs) == 200 && len(execs) == 1
	})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nation, err := filepath.Abs("../../tpch/sf0.01/nation.parquet")
	if err != nil {
		t.Fatal(err)
	}
	connect := func(secret string) *quiver.Session {
		tok, err := auth.New(secret)
		if err != nil {
			t.Fatal(err)
		}
		s, err := quiver.Connect(ctx, schedAddr, quiver.WithAuthToken(tok))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.RegisterParquet(ctx, "nation", nation); err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(s *quiver.Session, q string) string {
		t.Helper()
		df, err := s.SQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out strings.Builder
		if err := df.Print(ctx, &out, format.CSV, format.Options{}); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out.String()
	}
	alice, bob := connect(aliceSecret), connect(bobSecret)
	if got := run(alice, "SELECT count(*) AS n FROM nation"); got != "n\n25\n" {
		t.Fatalf("alice's query: %q", got)
	}
	const cacheSQL = "CACHE TABLE nations AS SELECT n_nationkey, n_name FROM nation WHERE n_regionkey = 1"
	run(alice, cacheSQL)
	run(bob, cacheSQL)

	type job struct {
		ID      string `json:"id"`
		Session string `json:"session"`
	}
	var aliceJobs, bobJobs, allJobs []job
	rest("GET", "/api/jobs", aliceSecret, &aliceJobs)
	rest("GET", "/api/jobs", bobSecret, &bobJobs)
	rest("GET", "/api/jobs", clusterSecret, &allJobs)
	for _, j := range aliceJobs {
		if j.Session != alice.ID() {
			t.Errorf("alice's job list shows job %s of session %s", j.ID, j.Session)
		}
	}
	for _, j := range bobJobs {
		if j.Session != bob.ID() {
			t.Errorf("bob's job list shows job %s of session %s", j.ID, j.Session)
		}
	}
	if len(aliceJobs) == 0 || len(bobJobs) == 0 || len(allJobs) != len(aliceJobs)+len(bobJobs) {
		t.Fatalf("jobs: alice sees %d, bob %d, the cluster token %d", len(aliceJobs), len(bobJobs), len(allJobs))
	}
	aliceJob := aliceJobs[0].ID
	for _, c := range []struct {
		method, path, secret string
		want                 int
	}{
		{"GET", "/api/job/" + aliceJob, bobSecret, 404},
		{"GET", "/api/job/" + aliceJob + "/dot", bobSecret, 404},
		{"DELETE", "/api/job/" + aliceJob, bobSecret, 404},
		{"GET", "/api/job/" + aliceJob, aliceSecret, 200},
		{"GET", "/api/job/" + aliceJob, clusterSecret, 200},
	} {
		if got := rest(c.method, c.path, c.secret, nil); got != c.want {
			t.Errorf("%s %s as %s: %d, want %d", c.method, c.path, c.secret[:strings.IndexByte(c.secret, '-')], got, c.want)
		}
	}
	var sessions []struct {
		ID string `json:"id"`
	}
	rest("GET", "/api/sessions", bobSecret, &sessions)
	if len(sessions) != 1 || sessions[0].ID != bob.ID() {
		t.Errorf("bob's session list: %v, want only %s", sessions, bob.ID())
	}

	// Caches: one copy per tenant (no sharing by content across tenants),
	// each tenant listing only its own.
	type caches struct {
		Entries []struct {
			SessionID string `json:"session_id"`
			JobID     string `json:"job_id"`
		} `json:"entries"`
	}
	var aliceC, bobC, allC caches
	rest("GET", "/api/caches", aliceSecret, &aliceC)
	rest("GET", "/api/caches", bobSecret, &bobC)
	rest("GET", "/api/caches", clusterSecret, &allC)
	if len(aliceC.Entries) != 1 || aliceC.Entries[0].SessionID != alice.ID() || len(bobC.Entries) != 1 || bobC.Entries[0].SessionID != bob.ID() {
		t.Fatalf("cache lists: alice %+v, bob %+v", aliceC, bobC)
	}
	if len(allC.Entries) != 2 || aliceC.Entries[0].JobID == bobC.Entries[0].JobID {
		t.Errorf("two tenants' caches of the same data share a build: %+v", allC)
	}
	if got := run(bob, "SHOW CACHES"); strings.Count(got, "nations") != 1 {
		t.Errorf("bob's SHOW CACHES:\n%s", got)
	}

	// gRPC with bob's token against alice's session and job.
	dial := func(addr, secret string) *grpc.ClientConn {
		tok, err := auth.New(secret)
		if err != nil {
			t.Fatal(err)
		}
		cc, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, tok.DialOptions()...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	}
	asBob := rpc.NewSchedulerServiceClient(dial(schedAddr, bobSecret))
	notFound := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.NotFound {
			t.Errorf("bob %s: %v, want NotFound", what, err)
		}
	}
	_, err = asBob.CancelJob(ctx, &rpc.CancelJobRequest{JobId: aliceJob})
	notFound("cancels alice's job", err)
	if w, err := asBob.WatchJob(ctx, &rpc.WatchJobRequest{JobId: aliceJob}); err == nil {
		_, err = w.Recv()
		notFound("watches alice's job", err)
	}
	_, err = asBob.ExecuteQuery(ctx, &rpc.ExecuteQueryRequest{SessionId: alice.ID()})
	notFound("submits in alice's session", err)
	_, err = asBob.ListCaches(ctx, &rpc.ListCachesRequest{SessionId: alice.ID()})
	notFound("lists alice's caches", err)
	_, err = asBob.ClearCaches(ctx, &rpc.ClearCachesRequest{SessionId: alice.ID()})
	notFound("clears alice's caches", err)
	_, err = asBob.CloseSession(ctx, &rpc.CloseSessionRequest{SessionId: alice.ID()})
	notFound("closes alice's session", err)
	_, err = asBob.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion, ResumeSessionId: alice.ID()})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("bob resumes alice's session: %v, want PermissionDenied", err)
	}
	// The executor-facing calls need the cluster's token.
	_, err = asBob.RegisterExecutor(ctx, &rpc.RegisterExecutorRequest{ProtocolVersion: rpc.ProtocolVersion,
		Executor: &rpc.ExecutorMeta{Id: "fake", Host: "127.0.0.1", GrpcPort: 1}})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("bob registers an executor: %v, want PermissionDenied", err)
	}
	_, err = rpc.NewExecutorServiceClient(dial(execAddr, bobSecret)).RemoveJobData(ctx, &rpc.RemoveJobDataRequest{JobId: aliceJob})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("bob removes job data on the executor: %v, want PermissionDenied", err)
	}

	// Alice's session, cache and job are untouched by all that.
	if got := run(alice, "SELECT count(*) AS n FROM nations"); got != "n\n5\n" {
		t.Errorf("alice's cache after bob's attempts: %q", got)
	}
	rest("GET", "/api/caches", aliceSecret, &aliceC)
	if len(aliceC.Entries) != 1 {
		t.Errorf("alice's caches after bob's attempts: %+v", aliceC)
	}
}
