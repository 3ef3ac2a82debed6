package executor

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/shuffle"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"google.golang.org/grpc"
)

// DefaultFetchTimeout bounds one fetch, from DoGet to the last batch.
const DefaultFetchTimeout = 10 * time.Minute

// FlightFetcher implements execop.ShuffleFetcher over Arrow Flight DoGet. It
// keeps one gRPC connection per peer (host:port), made on first use and
// closed by Close. Safe for concurrent use.
type FlightFetcher struct {
	// Timeout bounds each fetch (DefaultFetchTimeout if 0). Set before use.
	Timeout time.Duration

	alloc memory.Allocator

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	closed bool
	// observe, when set (an executor's fetcher), records each fetch's
	// duration and bytes, or its failure (set before first use).
	observe func(d time.Duration, bytes int64, err error)
	// auth is sent with every fetch (WithAuth); tls is the transport (WithTLS).
	auth auth.Token
	tls  auth.TLS
}

// WithTLS makes the fetcher reach executors over TLS (a cluster with
// --tls-cert). Call it before the first fetch; it returns f.
func (f *FlightFetcher) WithTLS(t auth.TLS) *FlightFetcher {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tls = t
	return f
}

// WithAuth makes the fetcher send t with every fetch (a cluster with
// --auth-token-file). Call it before the first fetch; it returns f.
func (f *FlightFetcher) WithAuth(t auth.Token) *FlightFetcher {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auth = t
	return f
}

var _ execop.ShuffleFetcher = (*FlightFetcher)(nil)

// NewFlightFetcher returns a fetcher whose batches are allocated from
// alloc (memory.DefaultAllocator if nil).
func NewFlightFetcher(alloc memory.Allocator) *FlightFetcher {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	return &FlightFetcher{alloc: alloc, conns: map[string]*grpc.ClientConn{}}
}

// Fetch returns an unopened operator streaming the batches of the shuffle
// file at loc from loc.Executor's Flight service. Open starts the DoGet;
// a failure to reach the file (unreachable executor, missing file, broken
// stream) is an *execop.FetchError naming loc, from Open or Next.
func (f *FlightFetcher) Fetch(ctx context.Context, loc physical.PartitionLocation) (execop.Operator, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(loc.Inline) > 0 {
		return shuffle.NewInlineReader(f.alloc, loc), nil // the file came with its location
	}
	return &fetchOp{f: f, loc: loc}, nil
}

// Close closes every cached connection; fetches still running fail.
// Idempotent.
func (f *FlightFetcher) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	var errs []error
	for addr, c := range f.conns {
		errs = append(errs, c.Close())
		delete(f.conns, addr)
	}
	return errors.Join(errs...)
}

// conn returns the cached connection to addr, dialling it on first use
// (grpc.NewClient connects lazily, so this never blocks).
func (f *FlightFetcher) conn(addr string) (*grpc.ClientConn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, qerr.Internalf("executor: flight fetcher used after Close")
	}
	if c, ok := f.conns[addr]; ok {
		return c, nil
	}
	opts := append([]grpc.DialOption{
		f.tls.DialOption(),
		grpc.WithConnectParams(connectParams),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)),
	}, f.auth.DialOptions()...)
	c, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, err
	}
	f.conns[addr] = c
	return c, nil
}

// fetchOp is one DoGet stream as an execop.Operator.
type fetchOp struct {
	f      *FlightFetcher
	loc    physical.PartitionLocation
	cancel context.CancelFunc // ends the stream; set by Open
	rdr    *flight.Reader
	done   bool
	began  time.Time
}

func (o *fetchOp) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err() // our own cancellation is not the file's fault
	}
	if o.f.observe != nil {
		o.f.observe(0, 0, err)
	}
	addr := net.JoinHostPort(o.loc.Executor.Host, strconv.Itoa(o.loc.Executor.FlightPort))
	return &execop.FetchError{Location: o.loc, Err: qerr.IOf("executor: fetching shuffle file %s from executor %s at %s: %w", o.loc, o.loc.Executor.ID, addr, err)}
}

func (o *fetchOp) Open(ctx context.Context) error {
	if o.cancel != nil {
		return qerr.Internalf("executor: fetch of %s opened twice", o.loc)
	}
	timeout := o.f.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	// The stream lives until Close (or the timeout): its context is derived
	// from Open's, so cancelling the task ends it too.
	sctx, cancel := context.WithTimeout(ctx, timeout)
	o.cancel = cancel
	o.began = time.Now()
	if o.loc.Executor.Host == "" || o.loc.Executor.FlightPort <= 0 {
		return o.fail(ctx, errors.New("location has no executor address"))
	}
	c, err := o.f.conn(net.JoinHostPort(o.loc.Executor.Host, strconv.Itoa(o.loc.Executor.FlightPort)))
	if err != nil {
		return o.fail(ctx, err)
	}
	if o.loc.Ticket == "" {
		return o.fail(ctx, errors.New("location has no ticket from the scheduler"))
	}
	ticket := []byte(o.loc.Ticket)
	stream, err := flight.NewFlightServiceClient(c).DoGet(sctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		return o.fail(ctx, err)
	}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(o.f.alloc))
	if err != nil {
		return o.fail(ctx, err)
	}
	o.rdr = rdr
	return nil
}

// Next returns the file's next batch (the caller owns it), io.EOF at the end.
func (o *fetchOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if o.rdr == nil || o.done {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !o.rdr.Next() {
		o.done = true
		if err := o.rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, o.fail(ctx, err)
		}
		if o.f.observe != nil {
			o.f.observe(time.Since(o.began), o.loc.Bytes, nil)
		}
		return nil, io.EOF
	}
	b := o.rdr.RecordBatch()
	b.Retain()
	return b, nil
}

// Close ends the stream and releases the reader. Idempotent.
func (o *fetchOp) Close() error {
	if o.cancel != nil {
		o.cancel()
	}
	if o.rdr != nil {
		o.rdr.Release()
		o.rdr = nil
	}
	o.done = true
	return nil
}
