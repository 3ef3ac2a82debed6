package scheduler

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	logicalcodec "github.com/quiverdb/quiver/logical/codec"
	"github.com/quiverdb/quiver/rpc"
)

// corpusInput reads one input of a committed fuzz corpus (a file of
// go test fuzz v1 holding one []byte).
func corpusInput(t testing.TB, path string) []byte {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	lit := strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")")
	s, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

// TestHostilePlansAreRefused: plans that are garbage, forged (the schema
// whose field count made arrow-go ask for ~377 GB and killed the process)
// or too large are refused with InvalidArgument or ResourceExhausted,
// create no job, and leave the scheduler serving.
func TestHostilePlansAreRefused(t *testing.T) {
	s := startScheduler(t, Config{})
	c := dial(t, s.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := c.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string][]byte{
		"garbage":            {0xff, 0xff, 0xff, 0xff},
		"forged field count": corpusInput(t, "../logical/codec/testdata/fuzz/FuzzDecode/crash_forged_field_count"),
		"memory partitions":  corpusInput(t, "../logical/codec/testdata/fuzz/FuzzDecode/crash_memory_partitions"),
	}
	for name, plan := range plans {
		_, err := c.ExecuteQuery(ctx, &rpc.ExecuteQueryRequest{SessionId: sess.SessionId, LogicalPlan: plan})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "codec:") {
			t.Errorf("%s: got %v, want InvalidArgument naming the codec", name, err)
		}
		_, err = c.ExplainQuery(ctx, &rpc.ExplainQueryRequest{SessionId: sess.SessionId, LogicalPlan: plan})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "codec:") {
			t.Errorf("explain %s: got %v, want InvalidArgument naming the codec", name, err)
		}
	}
	huge := make([]byte, MaxMessageBytes+1)
	if _, err := c.ExecuteQuery(ctx, &rpc.ExecuteQueryRequest{SessionId: sess.SessionId, LogicalPlan: huge}); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("message over the limit: got %v, want ResourceExhausted", err)
	}
	jobs := -1
	if err := s.inspect(ctx, func(c *core) { jobs = len(c.jobs) }); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 {
		t.Errorf("%d jobs after refused requests, want none", jobs)
	}
	if _, err := c.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion}); err != nil {
		t.Fatalf("scheduler no longer serves: %v", err)
	}
}

// FuzzREST sends any method, path and body to the REST view: the answer is
// a status it documents, never a panic.
func FuzzREST(f *testing.F) {
	for _, seed := range []struct{ method, path, body string }{
		{"GET", "/healthz", ""}, {"GET", "/api/jobs", ""}, {"GET", "/api/executors", ""},
		{"GET", "/api/caches", ""}, {"GET", "/api/job/nope", ""}, {"GET", "/api/job/%2e%2e%2f", ""},
		{"POST", "/api/jobs", `{"sql": "SELECT 1"}`}, {"GET", "/api/job/" + strings.Repeat("x", 5000), ""},
	} {
		f.Add(seed.method, seed.path, []byte(seed.body))
	}
	s, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	h := s.restHandler()
	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		r, err := http.NewRequest(method, "http://scheduler"+path, bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusMovedPermanently,
			http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusBadRequest:
		default:
			t.Fatalf("%s %q: status %d", method, path, w.Code)
		}
	})
}

// TestHostileCountsAreBounded: counts a client or an executor states, from
// which the scheduler would size its state, are bounded: a forged partition
// count fails the job with a planning error, forged vcores are refused.
func TestHostileCountsAreBounded(t *testing.T) {
	s := startScheduler(t, Config{})
	c := dial(t, s.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.RegisterExecutor(ctx, &rpc.RegisterExecutorRequest{ProtocolVersion: rpc.ProtocolVersion,
		Executor: &rpc.ExecutorMeta{Id: "e", Host: "127.0.0.1", GrpcPort: 1, Vcores: 1 << 30}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("register with 2^30 vcores: got %v, want InvalidArgument", err)
	}
	sess, err := c.CreateSession(ctx, &rpc.CreateSessionRequest{ProtocolVersion: rpc.ProtocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := logicalcodec.Encode(tpchLogical(t, tpchCatalog(t), 6))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.ExecuteQuery(ctx, &rpc.ExecuteQueryRequest{SessionId: sess.SessionId, LogicalPlan: plan,
		Settings: map[string]string{"quiver.target_partitions": "2147483647"}})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.WatchJob(ctx, &rpc.WatchJobRequest{JobId: r.JobId})
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if st.State == rpc.JobState_JOB_FAILED {
			if !strings.Contains(st.Error, "target_partitions") {
				t.Errorf("job failed with %q, want the setting named", st.Error)
			}
			break
		}
		if st.State != rpc.JobState_JOB_QUEUED && st.State != rpc.JobState_JOB_RUNNING {
			t.Fatalf("job with 2^31 partitions: %v", st)
		}
	}
}
