package executor

import (
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/quiverdb/quiver/rpc"
)

// FuzzFlightTicket: a DoGet ticket is any bytes a peer sends. It names a
// shuffle file inside the work dir or is refused with InvalidArgument.
func FuzzFlightTicket(f *testing.F) {
	for _, loc := range []*rpc.PartitionLocation{
		{JobId: "job-1", StageId: 2, OutputPartition: 3, MapPartition: 1},
		{JobId: "../../etc", StageId: 1},
		{JobId: "j", StageId: -1},
	} {
		b, err := proto.Marshal(loc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	s := &flightServer{workDir: dir}
	f.Fuzz(func(t *testing.T, ticket []byte) {
		path, err := s.ticketPath(ticket)
		if err != nil {
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("error %v: want InvalidArgument", err)
			}
			return
		}
		if rel, err := filepath.Rel(dir, path); err != nil || !filepath.IsLocal(rel) {
			t.Fatalf("ticket names %s, outside the work dir %s", path, dir)
		}
	})
}
