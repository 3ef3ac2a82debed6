package executor

import (
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/quiverdb/quiver/auth"
)

// FuzzFlightTicket: a DoGet ticket is any bytes a peer sends. It is a
// ticket signed with the executor's key naming a shuffle file inside the
// work dir, or it is refused with InvalidArgument (malformed) or
// PermissionDenied (forged or expired).
func FuzzFlightTicket(f *testing.F) {
	key, err := auth.NewTicketKey()
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	for _, tk := range []auth.Ticket{
		{JobID: "job-1", StageID: 2, OutputPartition: 3, MapPartition: 1, Expires: now.Add(time.Hour)},
		{JobID: "../../etc", StageID: 1, Expires: now.Add(time.Hour)},
		{JobID: "j", StageID: -1, Expires: now.Add(time.Hour)},
		{JobID: "j", Cache: "c", Expires: now.Add(-time.Hour)},
	} {
		f.Add(key.Sign(tk))
	}
	f.Add([]byte{1, 2, 'j'})
	dir := f.TempDir()
	s := &flightServer{workDir: dir, key: func() auth.TicketKey { return key }, now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, ticket []byte) {
		rel, err := s.ticketPath(ticket)
		if err != nil {
			if c := status.Code(err); c != codes.InvalidArgument && c != codes.PermissionDenied {
				t.Fatalf("error %v: want InvalidArgument or PermissionDenied", err)
			}
			return
		}
		if !filepath.IsLocal(rel) {
			t.Fatalf("ticket names %s, outside the work dir %s", rel, dir)
		}
	})
}
