package codec

import (
	"unicode/utf8"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func encodeWriteSpec(s physical.WriteSpec) *rpc.WriteSpec {
	return &rpc.WriteSpec{Format: string(s.Format), PartitionBy: int32s(s.PartitionBy), Compression: s.Compression,
		RowGroupSize: s.RowGroupSize, Delimiter: s.Delimiter, Header: s.Header}
}

// decodeWriteSpec checks what the wire can get wrong; the sink checks the
// rest against its input (exec/write.CheckSpec).
func decodeWriteSpec(m *rpc.WriteSpec, columns int) (physical.WriteSpec, error) {
	if m == nil {
		return physical.WriteSpec{}, qerr.Internalf("codec: missing write spec")
	}
	if m.Delimiter != 0 && !utf8.ValidRune(m.Delimiter) {
		return physical.WriteSpec{}, qerr.Internalf("codec: bad CSV delimiter %d", m.Delimiter)
	}
	s := physical.WriteSpec{Format: physical.Format(m.Format), Compression: m.Compression,
		RowGroupSize: m.RowGroupSize, Delimiter: m.Delimiter, Header: m.Header}
	for _, c := range m.PartitionBy {
		if c < 0 || int(c) >= columns {
			return physical.WriteSpec{}, qerr.Internalf("codec: partition column %d of %d", c, columns)
		}
		s.PartitionBy = append(s.PartitionBy, int(c))
	}
	return s, nil
}

func encodeFileSink(n *physical.FileSink) (*rpc.PhysicalPlan, error) {
	in, err := encodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_FileSink{FileSink: &rpc.PhysicalFileSink{
		Input: in, Staging: n.Staging, Spec: encodeWriteSpec(n.Spec)}}}, nil
}

func decodeFileSink(m *rpc.PhysicalFileSink) (physical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: empty file sink")
	}
	in, err := decodePlan(m.Input)
	if err != nil {
		return nil, err
	}
	if err := physical.CheckStaging(m.Staging); err != nil {
		return nil, err
	}
	spec, err := decodeWriteSpec(m.Spec, in.Schema().NumFields())
	if err != nil {
		return nil, err
	}
	return &physical.FileSink{Input: in, Staging: m.Staging, Spec: spec}, nil
}

func encodeFileCommit(n *physical.FileCommit) (*rpc.PhysicalPlan, error) {
	in, err := encodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	return &rpc.PhysicalPlan{Node: &rpc.PhysicalPlan_FileCommit{FileCommit: &rpc.PhysicalFileCommit{
		Input: in, Staging: n.Staging, Target: n.Target, Single: n.Single, Overwrite: n.Overwrite}}}, nil
}

func decodeFileCommit(m *rpc.PhysicalFileCommit) (physical.Plan, error) {
	if m == nil {
		return nil, qerr.Internalf("codec: empty file commit")
	}
	in, err := decodePlan(m.Input)
	if err != nil {
		return nil, err
	}
	if err := physical.CheckWritePaths(m.Target, m.Staging); err != nil {
		return nil, err
	}
	if !in.Schema().Equal(physical.FileSinkSchema) || in.OutputPartitions() != 1 {
		return nil, qerr.Internalf("codec: a file commit reads one partition of file lists")
	}
	return &physical.FileCommit{Input: in, Staging: m.Staging, Target: m.Target, Single: m.Single, Overwrite: m.Overwrite}, nil
}
