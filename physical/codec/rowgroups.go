package codec

import (
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

// encodeRowGroups converts a Scan's row-group ranges (nil: whole files).
func encodeRowGroups(s *physical.Scan) []*rpc.RowGroupRanges {
	if s.RowGroups == nil {
		return nil
	}
	out := make([]*rpc.RowGroupRanges, len(s.RowGroups))
	for p, rs := range s.RowGroups {
		m := &rpc.RowGroupRanges{}
		for _, r := range rs {
			m.Ranges = append(m.Ranges, &rpc.RowGroupRange{Start: int32(r.Start), End: int32(r.End)})
		}
		out[p] = m
	}
	return out
}

// decodeRowGroups sets s.RowGroups from m (after s.Partitions is set) and
// checks they parallel the partitions' files.
func decodeRowGroups(s *physical.Scan, m []*rpc.RowGroupRanges) error {
	if len(m) == 0 {
		return nil
	}
	if len(m) != len(s.Partitions) {
		return qerr.Internalf("codec: scan of %q has row groups for %d partitions, want %d", s.Table, len(m), len(s.Partitions))
	}
	s.RowGroups = make([][]physical.RowGroupRange, len(m))
	for p, part := range m {
		if len(part.GetRanges()) != len(s.Partitions[p]) {
			return qerr.Internalf("codec: scan of %q partition %d has %d row-group ranges for %d files", s.Table, p, len(part.GetRanges()), len(s.Partitions[p]))
		}
		s.RowGroups[p] = make([]physical.RowGroupRange, len(part.GetRanges()))
		for i, r := range part.GetRanges() {
			if r.GetStart() < 0 || r.GetEnd() < r.GetStart() {
				return qerr.Internalf("codec: scan of %q has a malformed row-group range [%d, %d)", s.Table, r.GetStart(), r.GetEnd())
			}
			s.RowGroups[p][i] = physical.RowGroupRange{Start: int(r.GetStart()), End: int(r.GetEnd())}
		}
	}
	return nil
}
