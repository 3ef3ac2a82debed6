package codec

import (
	"maps"
	"strconv"
	"strings"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// rowGroupsKey carries a Scan's RowGroups inside the scan message's options
// map: rpc.PhysicalScan has no field for them, and the rpc package is not
// ours to change here. The key cannot clash with a user option (options are
// lower-case words). Format: partitions joined by ";", a partition's ranges
// (one per file) joined by ",", each range "start-end".
const rowGroupsKey = "\x00quiver.row_groups"

// encodeScanOptions returns the options to send for s: s.Options plus the
// row-group ranges when the scan has them. s.Options is never modified.
func encodeScanOptions(s *physical.Scan) map[string]string {
	if s.RowGroups == nil {
		return s.Options
	}
	out := maps.Clone(s.Options)
	if out == nil {
		out = map[string]string{}
	}
	var b strings.Builder
	for p, rs := range s.RowGroups {
		if p > 0 {
			b.WriteByte(';')
		}
		for i, r := range rs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(r.Start))
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(r.End))
		}
	}
	out[rowGroupsKey] = b.String()
	return out
}

// decodeScanRowGroups moves the row-group ranges out of s.Options into
// s.RowGroups (after s.Partitions is set) and checks they parallel it.
func decodeScanRowGroups(s *physical.Scan) error {
	enc, ok := s.Options[rowGroupsKey]
	if !ok {
		return nil
	}
	opts := maps.Clone(s.Options)
	delete(opts, rowGroupsKey)
	if len(opts) == 0 {
		opts = nil
	}
	s.Options = opts
	parts := strings.Split(enc, ";")
	if len(parts) != len(s.Partitions) {
		return qerr.Internalf("codec: scan of %q has row groups for %d partitions, want %d", s.Table, len(parts), len(s.Partitions))
	}
	s.RowGroups = make([][]physical.RowGroupRange, len(parts))
	for p, part := range parts {
		var ranges []string
		if part != "" {
			ranges = strings.Split(part, ",")
		}
		if len(ranges) != len(s.Partitions[p]) {
			return qerr.Internalf("codec: scan of %q partition %d has %d row-group ranges for %d files", s.Table, p, len(ranges), len(s.Partitions[p]))
		}
		s.RowGroups[p] = make([]physical.RowGroupRange, len(ranges))
		for i, r := range ranges {
			a, b, ok := strings.Cut(r, "-")
			start, err1 := strconv.Atoi(a)
			end, err2 := strconv.Atoi(b)
			if !ok || err1 != nil || err2 != nil || start < 0 || end < start {
				return qerr.Internalf("codec: scan of %q has a malformed row-group range %q", s.Table, r)
			}
			s.RowGroups[p][i] = physical.RowGroupRange{Start: start, End: end}
		}
	}
	return nil
}
