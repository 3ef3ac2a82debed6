package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
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

// TestFlightTicketsRealProcesses: on a real scheduler and executor, a job's
// result ticket (from the scheduler's job status) fetches the result, and
// a forged ticket, the valid ticket altered to name another partition, an
// unsigned ticket naming "../", and finally the valid ticket once expired
// are all refused with their gRPC codes.
func TestFlightTicketsRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quiver binary")
	}
	bin := buildQuiver(t)
	const ttl = 4 * time.Second
	schedAddr, restAddr, execAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	startDaemon(t, bin, nil, "scheduler", "--bind", schedAddr, "--rest", restAddr, "--flight-ticket-ttl", ttl.String())
	startDaemon(t, bin, nil, "executor", "--scheduler", schedAddr, "--bind", execAddr, "--work-dir", t.TempDir(), "--heartbeat", "200ms")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := quiver.Connect(ctx, schedAddr)
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
	// The result must be a file on the executor (not inline in the job's
	// status) for its tickets to matter.
	if _, err := s.SQL(ctx, "SET quiver.shuffle_inline_bytes = 0"); err != nil {
		t.Fatal(err)
	}
	df, err := s.SQL(ctx, "SELECT n_nationkey FROM nation")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := df.Print(ctx, &out, format.CSV, format.Options{}); err != nil {
		t.Fatalf("the query (its result fetched with the scheduler's tickets): %v", err)
	}
	if n := strings.Count(out.String(), "\n"); n != 26 {
		t.Fatalf("result has %d lines, want a header and 25 rows", n)
	}

	// The job's status, as a client watching it gets it, carries a signed
	// ticket per result file.
	resp, err := http.Get("http://" + restAddr + "/api/jobs")
	if err != nil {
		t.Fatal(err)
	}
	var jobs []struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&jobs)
	resp.Body.Close()
	if err != nil || len(jobs) == 0 {
		t.Fatalf("GET /api/jobs: %v (%d jobs)", err, len(jobs))
	}
	sc, err := grpc.NewClient(schedAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	watch, err := rpc.NewSchedulerServiceClient(sc).WatchJob(ctx, &rpc.WatchJobRequest{JobId: jobs[len(jobs)-1].ID})
	if err != nil {
		t.Fatal(err)
	}
	var st *rpc.JobStatus
	for {
		m, err := watch.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		st = m
	}
	if st == nil || len(st.Result) == 0 || len(st.Result[0].Locations) == 0 {
		t.Fatalf("job status has no result locations: %v", st)
	}
	loc := st.Result[0].Locations[0]
	valid := loc.Ticket
	if len(valid) == 0 {
		t.Fatal("the result location has no ticket")
	}

	ec, err := grpc.NewClient(execAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	fl := flight.NewFlightServiceClient(ec)
	doGet := func(ticket []byte) (int, error) {
		stream, err := fl.DoGet(ctx, &flight.Ticket{Ticket: ticket})
		if err != nil {
			return 0, err
		}
		n := 0
		for {
			_, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n++
		}
	}
	if n, err := doGet(valid); err != nil || n < 2 {
		t.Fatalf("DoGet with the scheduler's ticket: %d messages, %v", n, err)
	}

	other, err := auth.NewTicketKey()
	if err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(time.Hour)
	same := auth.Ticket{JobID: loc.JobId, StageID: int(loc.StageId), OutputPartition: int(loc.OutputPartition), MapPartition: int(loc.MapPartition), Expires: expires}
	moved := same
	moved.OutputPartition++
	// The valid ticket's signature over the fields of another partition.
	movedBody := other.Sign(moved)
	replayed := append(movedBody[:len(movedBody)-32:len(movedBody)-32], valid[len(valid)-32:]...)
	unsigned, err := proto.Marshal(&rpc.PartitionLocation{JobId: "../" + loc.JobId, StageId: loc.StageId})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		ticket []byte
		want   codes.Code
		says   string
	}{
		{"forged", other.Sign(same), codes.PermissionDenied, "signature"},
		{"replayed for another partition", replayed, codes.PermissionDenied, "signature"},
		{"forged ../", other.Sign(auth.Ticket{JobID: "../" + loc.JobId, Expires: expires}), codes.PermissionDenied, "signature"},
		{"unsigned ../", unsigned, codes.InvalidArgument, "not a signed"},
	} {
		_, err := doGet(c.ticket)
		if status.Code(err) != c.want || !strings.Contains(status.Convert(err).Message(), c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.want, c.says)
		}
	}
	// The same valid ticket, past its expiry.
	time.Sleep(time.Until(time.Now().Add(ttl + 500*time.Millisecond)))
	if _, err := doGet(valid); status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "expired") {
		t.Errorf("expired ticket: %v, want PermissionDenied saying expired", err)
	}
}
