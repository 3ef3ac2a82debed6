package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/format"
)

// logLines parses a daemon's JSON log into records.
func logLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(log, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// withID returns the records whose request_id is id.
func withID(lines []map[string]any, id string) []map[string]any {
	var out []map[string]any
	for _, m := range lines {
		if m["request_id"] == id {
			out = append(out, m)
		}
	}
	return out
}

func messages(lines []map[string]any) string {
	var ms []string
	for _, m := range lines {
		ms = append(ms, fmt.Sprint(m["msg"]))
	}
	return strings.Join(ms, ", ")
}

// TestRequestIDAcrossProcesses: a query's request id, made by the client,
// is on the scheduler's job lines and on the executor's task lines of the
// same job, and a failed query's error carries it (RequestIDOf, and the
// verbose %+v form).
func TestRequestIDAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quiver binary")
	}
	bin := buildQuiver(t)
	schedAddr, execAddr := freeAddr(t), freeAddr(t)
	sched := startDaemon(t, bin, nil, "scheduler", "--bind", schedAddr, "--log-format", "json", "--log-level", "debug")
	exe := startDaemon(t, bin, nil, "executor", "--scheduler", schedAddr, "--bind", execAddr, "--work-dir", t.TempDir(),
		"--heartbeat", "200ms", "--log-format", "json")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := quiver.Connect(ctx, schedAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src, err := os.ReadFile("../../tpch/sf0.01/nation.parquet")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nation.parquet")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterParquet(ctx, "nation", path); err != nil {
		t.Fatal(err)
	}
	df, err := s.SQL(ctx, "SELECT count(*) AS n FROM nation")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := df.Print(ctx, &out, format.CSV, format.Options{}); err != nil {
		t.Fatal(err)
	}

	// The succeeded query: find its id on the scheduler's submit line, then
	// on the executor's task lines of the same job.
	var id, job string
	waitUntil(t, "the job's lines", 10*time.Second, func() bool {
		for _, m := range logLines(t, sched.log()) {
			if m["msg"] == "job finished" && m["outcome"] == "succeeded" {
				id, _ = m["request_id"].(string)
				job, _ = m["job"].(string)
			}
		}
		return id != "" && len(withID(logLines(t, exe.log()), id)) >= 2
	})
	schedLines := withID(logLines(t, sched.log()), id)
	if got := messages(schedLines); !strings.Contains(got, "job submitted") || !strings.Contains(got, "task launched") || !strings.Contains(got, "job finished") {
		t.Errorf("scheduler lines with request id %s: %s; want job submitted, task launched, job finished", id, got)
	}
	execLines := withID(logLines(t, exe.log()), id)
	if got := messages(execLines); !strings.Contains(got, "task started") || !strings.Contains(got, "task finished") {
		t.Errorf("executor lines with request id %s: %s; want task started, task finished", id, got)
	}
	for _, m := range execLines {
		if task, _ := m["task"].(string); !strings.HasPrefix(task, job+"/") {
			t.Errorf("executor line %v with request id %s is about another job than %s", m, id, job)
		}
	}

	// A query that fails on the executor (its file is gone): the error
	// names the request id, which is on the failed job's lines.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	df, err = s.SQL(ctx, "SELECT max(n_name) FROM nation")
	if err != nil {
		t.Fatal(err)
	}
	err = df.Print(ctx, &out, format.CSV, format.Options{})
	if err == nil {
		t.Fatal("a query over a removed file succeeded")
	}
	failed := quiver.RequestIDOf(err)
	if failed == "" || failed == id {
		t.Fatalf("failed query's request id %q (the first query's was %q); error: %v", failed, id, err)
	}
	if v := fmt.Sprintf("%+v", err); !strings.Contains(v, "request id: "+failed) {
		t.Errorf("verbose error does not name the request id:\n%s", v)
	}
	if strings.Contains(err.Error(), failed) {
		t.Errorf("the plain error message names the request id: %v", err)
	}
	waitUntil(t, "the failed job's lines", 10*time.Second, func() bool {
		var onSched, onExec bool
		for _, m := range withID(logLines(t, sched.log()), failed) {
			onSched = onSched || (m["msg"] == "job finished" && m["outcome"] == "failed")
		}
		for _, m := range withID(logLines(t, exe.log()), failed) {
			onExec = onExec || (m["msg"] == "task finished" && m["state"] == "TASK_FAILED")
		}
		return onSched && onExec
	})
}
