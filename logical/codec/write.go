package codec

import (
	"unicode/utf8"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/rpc"
)

func encodeWrite(n *logical.Write) (*rpc.LogicalPlan, error) {
	in, err := encodePlan(n.Input)
	if err != nil {
		return nil, err
	}
	o := n.Options
	parts := make([]int32, len(o.PartitionBy))
	for i, c := range o.PartitionBy {
		parts[i] = int32(c)
	}
	return &rpc.LogicalPlan{Node: &rpc.LogicalPlan_Write{Write: &rpc.LogicalWrite{
		Input: in, Target: n.Target, Staging: n.Staging, Overwrite: n.Overwrite,
		Options: &rpc.WriteSpec{Format: o.Format, PartitionBy: parts, Compression: o.Compression,
			RowGroupSize: o.RowGroupSize, Delimiter: o.Delimiter, Header: o.Header},
	}}}, nil
}

func decodeWrite(m *rpc.LogicalWrite) (logical.Plan, error) {
	if m == nil || m.Options == nil {
		return nil, qerr.Internalf("codec: missing write node")
	}
	in, err := decodePlan(m.Input)
	if err != nil {
		return nil, err
	}
	o := m.Options
	if o.Delimiter != 0 && !utf8.ValidRune(o.Delimiter) {
		return nil, qerr.Internalf("codec: bad CSV delimiter %d", o.Delimiter)
	}
	opts := logical.WriteOptions{Format: o.Format, Compression: o.Compression, RowGroupSize: o.RowGroupSize, Delimiter: o.Delimiter, Header: o.Header}
	for _, c := range o.PartitionBy {
		opts.PartitionBy = append(opts.PartitionBy, int(c))
	}
	return logical.NewWrite(in, m.Target, m.Staging, m.Overwrite, opts)
}
