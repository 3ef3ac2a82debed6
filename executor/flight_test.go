package executor_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/memcheck"
	"github.com/quiverdb/quiver/executor"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/quiverdb/quiver/auth"
)

var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// writeShuffleFile writes batches of kvSchema rows (k = 0..n-1, v = "v<k>"
// or null when k%7 == 0) as an IPC stream at the agreed shuffle path.
func writeShuffleFile(t *testing.T, work, job string, stage, out, mapPart int, sizes []int, opts ...ipc.Option) int64 {
	t.Helper()
	dir := filepath.Join(work, job, strconv.Itoa(stage), strconv.Itoa(out))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "data-"+strconv.Itoa(mapPart)+".arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := memory.NewGoAllocator()
	w := ipc.NewWriter(f, append([]ipc.Option{ipc.WithSchema(kvSchema), ipc.WithAllocator(mem)}, opts...)...)
	var k int64
	for _, n := range sizes {
		b := array.NewRecordBuilder(mem, kvSchema)
		for range n {
			b.Field(0).(*array.Int64Builder).Append(k)
			if k%7 == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append("v" + strconv.FormatInt(k, 10))
			}
			k++
		}
		rec := b.NewRecordBatch()
		b.Release()
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return k
}

// drainOp opens, drains and closes op, checking kvSchema rows 0..n-1 in
// order, and returns the row count or the first error.
func drainOp(t *testing.T, ctx context.Context, op execop.Operator) (int64, error) {
	t.Helper()
	defer op.Close()
	if err := op.Open(ctx); err != nil {
		return 0, err
	}
	var k int64
	for {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			return k, nil
		}
		if err != nil {
			return k, err
		}
		if !b.Schema().Equal(kvSchema) {
			t.Errorf("schema %s, want %s", b.Schema(), kvSchema)
		}
		ks := b.Column(0).(*array.Int64)
		vs := b.Column(1).(*array.String)
		for i := range ks.Len() {
			if ks.Value(i) != k {
				t.Fatalf("row %d: k = %d", k, ks.Value(i))
			}
			if wantNull := k%7 == 0; vs.IsNull(i) != wantNull || (!wantNull && vs.Value(i) != "v"+strconv.FormatInt(k, 10)) {
				t.Fatalf("row %d: v = %q (null %v)", k, vs.Value(i), vs.IsNull(i))
			}
			k++
		}
		b.Release()
	}
}

func locOf(e *executor.Executor, job string, stage, out, mapPart int) physical.PartitionLocation {
	return signed(physical.PartitionLocation{JobID: job, StageID: stage, OutputPartition: out, MapPartition: mapPart, Executor: e.Meta()})
}

// TestFlightServesShuffleFiles writes IPC stream files (compressed or not,
// with an empty batch) and reads them back over Flight.
func TestFlightServesShuffleFiles(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	f := executor.NewFlightFetcher(mem)
	defer f.Close()
	ctx := context.Background()
	cases := []struct {
		name  string
		sizes []int
		opts  []ipc.Option
	}{
		{"lz4", []int{1000, 0, 1, 4096}, []ipc.Option{ipc.WithLZ4()}},
		{"zstd", []int{3, 5000}, []ipc.Option{ipc.WithZstd()}},
		{"none", []int{10, 20}, nil},
		{"schema-only", nil, []ipc.Option{ipc.WithLZ4()}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := writeShuffleFile(t, e.WorkDir(), "job_1", 2, i, 3, c.sizes, c.opts...)
			op, err := f.Fetch(ctx, locOf(e, "job_1", 2, i, 3))
			if err != nil {
				t.Fatal(err)
			}
			got, err := drainOp(t, ctx, op)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("fetched %d rows, want %d", got, want)
			}
		})
	}
}

// TestFlightMissingFileIsFetchError checks that a file the executor does
// not have is an *execop.FetchError naming the location.
func TestFlightMissingFileIsFetchError(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	f := executor.NewFlightFetcher(mem)
	defer f.Close()
	loc := locOf(e, "nojob", 1, 0, 0)
	op, err := f.Fetch(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = drainOp(t, context.Background(), op)
	var fe *execop.FetchError
	if !errors.As(err, &fe) || !reflect.DeepEqual(fe.Location, loc) {
		t.Fatalf("want a FetchError for %v, got %v", loc, err)
	}
	if status.Code(fe.Err) != codes.NotFound {
		t.Errorf("want NotFound underneath, got %v", fe.Err)
	}
}

// TestFlightRefusesBadTickets sends tickets that are unsigned, forged,
// altered, expired, or signed but naming a path outside the work dir
// (through "..", or a symbolic link); none may be served, each refused
// with its own code, while the valid ticket of the same file is.
func TestFlightRefusesBadTickets(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	// A shuffle-shaped file beside the work dir, which ticket "../x" would
	// reach if it were used as a path, and a job directory inside the work
	// dir that is a symbolic link to its job directory.
	outside := filepath.Join(filepath.Dir(e.WorkDir()), "x")
	writeShuffleFile(t, filepath.Dir(e.WorkDir()), "x", 0, 0, 0, []int{1})
	if err := os.Symlink(outside, filepath.Join(e.WorkDir(), "link")); err != nil {
		t.Fatal(err)
	}
	writeShuffleFile(t, e.WorkDir(), "job_1", 2, 0, 3, []int{5})
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := flight.NewFlightServiceClient(conn)
	proto := func(l *rpc.PartitionLocation) []byte {
		b, err := protoMarshal(l)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hour := time.Now().Add(time.Hour)
	good := auth.Ticket{JobID: "job_1", StageID: 2, OutputPartition: 0, MapPartition: 3, Expires: hour}
	sign := func(tk auth.Ticket) []byte { return testTicketKey.Sign(tk) }
	other, err := auth.NewTicketKey()
	if err != nil {
		t.Fatal(err)
	}
	// The valid ticket of map partition 3 with its partition changed to 4:
	// the body of one ticket and the signature of the other.
	moved := good
	moved.MapPartition = 4
	writeShuffleFile(t, e.WorkDir(), "job_1", 2, 0, 4, []int{5})
	replayed := append(append([]byte(nil), sign(moved)[:len(sign(moved))-32]...), sign(good)[len(sign(good))-32:]...)
	expired := good
	expired.Expires = time.Now().Add(-time.Second)
	cases := []struct {
		name   string
		ticket []byte
		want   codes.Code
		msg    string
	}{
		{"valid", sign(good), codes.OK, ""},
		{"unsigned-location", proto(&rpc.PartitionLocation{JobId: "job_1", StageId: 2, MapPartition: 3}), codes.InvalidArgument, "not a signed"},
		{"garbage", []byte{0xff, 0xff, 0xff}, codes.InvalidArgument, "not a signed"},
		{"empty", nil, codes.InvalidArgument, "not a signed"},
		{"forged", other.Sign(good), codes.PermissionDenied, "signature"},
		{"replayed-for-another-partition", replayed, codes.PermissionDenied, "signature"},
		{"expired", sign(expired), codes.PermissionDenied, "expired"},
		{"forged-dotdot", other.Sign(auth.Ticket{JobID: "../x", Expires: hour}), codes.PermissionDenied, "signature"},
		{"signed-dotdot", sign(auth.Ticket{JobID: "../x", Expires: hour}), codes.InvalidArgument, "invalid job id"},
		{"signed-etc-passwd", sign(auth.Ticket{JobID: "../../etc/passwd", Expires: hour}), codes.InvalidArgument, "invalid job id"},
		{"signed-absolute", sign(auth.Ticket{JobID: outside, Expires: hour}), codes.InvalidArgument, "invalid job id"},
		{"signed-negative", sign(auth.Ticket{JobID: "j", StageID: -1, Expires: hour}), codes.InvalidArgument, "negative"},
		{"signed-symlink-out", sign(auth.Ticket{JobID: "link", Expires: hour}), codes.PermissionDenied, "cannot be served"},
		{"missing", sign(auth.Ticket{JobID: "j", StageID: 1, Expires: hour}), codes.NotFound, "no shuffle file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stream, err := client.DoGet(context.Background(), &flight.Ticket{Ticket: c.ticket})
			if err == nil {
				_, err = stream.Recv()
			}
			if status.Code(err) != c.want {
				t.Fatalf("got %v, want code %s", err, c.want)
			}
			if c.msg != "" && !strings.Contains(status.Convert(err).Message(), c.msg) {
				t.Errorf("message %q does not say %q", status.Convert(err).Message(), c.msg)
			}
		})
	}
	// Other Flight methods are not served.
	_, err = client.GetFlightInfo(context.Background(), &flight.FlightDescriptor{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("GetFlightInfo: got %v, want Unimplemented", err)
	}
}

// TestFlightBeforeRegistration: an executor that has no ticket key yet
// (its scheduler never answered) serves nothing.
func TestFlightBeforeRegistration(t *testing.T) {
	mem := memcheck.New(t)
	sched := newFakeScheduler()
	sched.noKey = true
	e := startExecutor(t, startScheduler(t, sched), mem, nil)
	writeShuffleFile(t, e.WorkDir(), "job_1", 2, 0, 3, []int{5})
	f := executor.NewFlightFetcher(mem)
	defer f.Close()
	op, err := f.Fetch(context.Background(), locOf(e, "job_1", 2, 0, 3))
	if err != nil {
		t.Fatal(err)
	}
	_, err = drainOp(t, context.Background(), op)
	var fe *execop.FetchError
	if !errors.As(err, &fe) || status.Code(fe.Err) != codes.Unavailable {
		t.Fatalf("want a FetchError with Unavailable underneath, got %v", err)
	}
}

// TestFetchUnreachableExecutor checks a dead peer is a fetch error, fast.
func TestFetchUnreachableExecutor(t *testing.T) {
	mem := memcheck.New(t)
	f := executor.NewFlightFetcher(mem)
	defer f.Close()
	loc := signed(physical.PartitionLocation{JobID: "j", StageID: 1, Executor: physical.ExecutorMeta{ID: "gone", Host: "127.0.0.1", FlightPort: deadPort(t)}})
	op, err := f.Fetch(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = drainOp(t, context.Background(), op)
	var fe *execop.FetchError
	if !errors.As(err, &fe) || fe.Location.Executor.ID != "gone" {
		t.Fatalf("want a FetchError naming executor gone, got %v", err)
	}
}

var protoMarshal = proto.Marshal
