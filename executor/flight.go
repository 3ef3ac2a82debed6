package executor

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/physical"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// flightServer serves the shuffle files under one work dir over Arrow
// Flight DoGet. Every other Flight method is Unimplemented (from the
// embedded BaseFlightServer). Safe for concurrent use.
type flightServer struct {
	flight.BaseFlightServer
	workDir string
	// key returns the scheduler's ticket key (the zero key before the
	// executor has registered: every DoGet is then refused).
	key func() auth.TicketKey
	// now is the clock tickets expire against (time.Now when nil).
	now func() time.Time
	m   *metrics // nil in tests that serve without an executor
	// lastFetch is when a DoGet last started or ended (Unix nanoseconds):
	// a draining executor keeps serving until fetches stop (Drain).
	lastFetch *atomic.Int64
}

// DoGet streams one shuffle file. The ticket is one the scheduler signed
// (auth.TicketKey.Sign) naming (job, stage, output partition, map
// partition) with an expiry: a malformed ticket is InvalidArgument, a
// forged or altered one PermissionDenied, an expired one PermissionDenied
// saying so, a missing file NotFound. The path is rebuilt from the
// ticket's fields, never taken from it, and opened through an os.Root of
// the work dir, so neither "..", an absolute path nor a symbolic link can
// lead outside it.
//
// The file's IPC messages are forwarded as they are stored (schema first,
// then record batches with their compressed bodies), so serving a file
// neither decodes nor recompresses it.
func (s *flightServer) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	if s.lastFetch != nil {
		s.lastFetch.Store(time.Now().UnixNano())
		defer func() { s.lastFetch.Store(time.Now().UnixNano()) }()
	}
	rel, err := s.ticketPath(t.GetTicket())
	if err != nil {
		return err
	}
	f, err := s.open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	path := rel
	r := ipcStreamReader{r: bufio.NewReaderSize(f, 1<<16)}
	ctx := stream.Context()
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		meta, body, err := r.next()
		if errors.Is(err, io.EOF) {
			if n == 0 {
				return status.Errorf(codes.DataLoss, "executor: shuffle file %s is empty", path)
			}
			if s.m != nil {
				s.m.servedFiles.Inc()
			}
			return nil
		}
		if err != nil {
			return status.Errorf(codes.DataLoss, "executor: reading shuffle file %s: %v", path, err)
		}
		if err := stream.Send(&flight.FlightData{DataHeader: meta, DataBody: body}); err != nil {
			return err
		}
		if s.m != nil {
			s.m.served.Add(float64(len(meta) + len(body)))
		}
	}
}

// open opens rel (a path relative to the work dir) through an os.Root, which
// refuses any path that resolves outside the work dir, symbolic links
// included.
func (s *flightServer) open(rel string) (*os.File, error) {
	root, err := os.OpenRoot(s.workDir)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "executor: opening the work dir: %v", err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	if errors.Is(err, os.ErrNotExist) {
		return nil, status.Errorf(codes.NotFound, "executor: no shuffle file %s", rel)
	}
	if err != nil {
		// os.Root's refusal of a path escaping it is not a sentinel error;
		// any other failure to open a file the ticket names is refused too.
		return nil, status.Errorf(codes.PermissionDenied, "executor: shuffle file %s cannot be served: %v", rel, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, status.Errorf(codes.PermissionDenied, "executor: shuffle file %s is not a regular file", rel)
	}
	return f, nil
}

// ticketPath verifies a DoGet ticket and returns the file it names,
// relative to the work dir.
func (s *flightServer) ticketPath(ticket []byte) (string, error) {
	var key auth.TicketKey
	if s.key != nil {
		key = s.key()
	}
	if !key.Enabled() {
		return "", status.Errorf(codes.Unavailable, "executor: not registered with a scheduler yet, so no ticket can be verified")
	}
	now := time.Now()
	if s.now != nil {
		now = s.now()
	}
	t, err := key.Verify(ticket, now)
	switch {
	case errors.Is(err, auth.ErrTicketMalformed):
		return "", status.Errorf(codes.InvalidArgument, "executor: %v", err)
	case errors.Is(err, auth.ErrTicketForged):
		return "", status.Errorf(codes.PermissionDenied, "executor: %v: only tickets the scheduler signed are served", err)
	case errors.Is(err, auth.ErrTicketExpired):
		return "", status.Errorf(codes.PermissionDenied, "executor: %v", err)
	case err != nil:
		return "", status.Errorf(codes.Internal, "executor: %v", err)
	}
	if !physical.ValidJobID(t.JobID) {
		return "", status.Errorf(codes.InvalidArgument, "executor: ticket has invalid job id %q", t.JobID)
	}
	if t.StageID < 0 || t.OutputPartition < 0 || t.MapPartition < 0 {
		return "", status.Errorf(codes.InvalidArgument, "executor: ticket has a negative stage (%d), output partition (%d) or map partition (%d)",
			t.StageID, t.OutputPartition, t.MapPartition)
	}
	path := shuffleFilePath(s.workDir, t.JobID, t.StageID, t.OutputPartition, t.MapPartition)
	if !within(s.workDir, path) {
		return "", status.Errorf(codes.InvalidArgument, "executor: ticket names a file outside the work dir")
	}
	rel, err := filepath.Rel(s.workDir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", status.Errorf(codes.InvalidArgument, "executor: ticket names a file outside the work dir")
	}
	return rel, nil
}

// Size limits on one stored IPC message; a larger one means a corrupt file.
const (
	maxMetaLen = 64 << 20
	maxBodyLen = 1 << 31
)

// ipcStreamReader splits an Arrow IPC stream into its messages' raw
// metadata (the flatbuffer Message) and body bytes, without decoding them.
// Format: [0xFFFFFFFF] int32 metadata length, metadata (padded), body;
// a zero length (or the end of the file) ends the stream.
type ipcStreamReader struct {
	r *bufio.Reader
}

// next returns the next message; io.EOF at the end of the stream. The
// slices are freshly allocated: gRPC may hold a sent message after Send.
func (s ipcStreamReader) next() (meta, body []byte, err error) {
	var word [4]byte
	if _, err := io.ReadFull(s.r, word[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, io.EOF // a stream without the end marker
		}
		return nil, nil, err
	}
	n := binary.LittleEndian.Uint32(word[:])
	if n == 0xFFFFFFFF {
		if _, err := io.ReadFull(s.r, word[:]); err != nil {
			return nil, nil, fmt.Errorf("reading message length: %w", noEOF(err))
		}
		n = binary.LittleEndian.Uint32(word[:])
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	if n > maxMetaLen {
		return nil, nil, fmt.Errorf("message metadata length %d is too large", n)
	}
	meta = make([]byte, n)
	if _, err := io.ReadFull(s.r, meta); err != nil {
		return nil, nil, fmt.Errorf("reading message metadata: %w", noEOF(err))
	}
	bodyLen, err := messageBodyLength(meta)
	if err != nil {
		return nil, nil, err
	}
	body = make([]byte, bodyLen)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, nil, fmt.Errorf("reading message body: %w", noEOF(err))
	}
	return meta, body, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// messageBodyLength reads field bodyLength (slot 3: version, header_type,
// header, bodyLength) of the flatbuffer table Message in meta, with bounds
// checks; an absent field is 0.
func messageBodyLength(meta []byte) (int64, error) {
	bad := func(what string) (int64, error) {
		return 0, fmt.Errorf("corrupt message metadata: %s", what)
	}
	u32 := func(off int) int { return int(binary.LittleEndian.Uint32(meta[off:])) }
	u16 := func(off int) int { return int(binary.LittleEndian.Uint16(meta[off:])) }
	if len(meta) < 4 {
		return bad("too short")
	}
	table := u32(0)
	if table < 0 || table+4 > len(meta) {
		return bad("root offset out of range")
	}
	vtable := table - int(int32(binary.LittleEndian.Uint32(meta[table:])))
	if vtable < 0 || vtable+4 > len(meta) {
		return bad("vtable out of range")
	}
	vsize := u16(vtable)
	if vtable+vsize > len(meta) {
		return bad("vtable size out of range")
	}
	const slot = 4 + 3*2 // vtable header, then one uint16 per field
	if vsize < slot+2 {
		return 0, nil
	}
	off := u16(vtable + slot)
	if off == 0 {
		return 0, nil
	}
	if table+off+8 > len(meta) {
		return bad("body length out of range")
	}
	n := int64(binary.LittleEndian.Uint64(meta[table+off:]))
	if n < 0 || n > maxBodyLen {
		return bad(fmt.Sprintf("body length %d", n))
	}
	return n, nil
}
