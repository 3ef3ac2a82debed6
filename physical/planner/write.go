package planner

import (
	"context"

	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
)

// write lowers a Write: FileSinks over the input's partitions (one
// partition for a single-file target; for a Hive-partitioned one the rows
// are hash-partitioned on the partition keys first, so each key's rows
// land in one task and one file), their file lists gathered into one
// FileCommit.
func (pl *Planner) write(ctx context.Context, n *logical.Write) (physical.Plan, error) {
	if err := physical.CheckWritePaths(n.Target, n.Staging); err != nil {
		return nil, err
	}
	in, err := pl.Plan(ctx, n.Input)
	if err != nil {
		return nil, err
	}
	o := n.Options
	spec := WriteSpec(o)
	single := len(o.PartitionBy) == 0
	switch {
	case single && in.OutputPartitions() > 1:
		in = &physical.Coalesce{Input: in}
	case !single && in.OutputPartitions() > 1:
		keys := make([]physical.Expr, len(o.PartitionBy))
		s := in.Schema()
		for i, c := range o.PartitionBy {
			keys[i] = &physical.Column{Index: c, Name: s.Field(c).Name, Type: s.Field(c).Type}
		}
		in = &physical.Repartition{Input: in, Keys: keys, N: in.OutputPartitions()}
	}
	var files physical.Plan = &physical.FileSink{Input: in, Staging: n.Staging, Spec: spec}
	if files.OutputPartitions() > 1 {
		files = &physical.Coalesce{Input: files}
	}
	return &physical.FileCommit{Input: files, Staging: n.Staging, Target: n.Target, Single: single, Overwrite: n.Overwrite}, nil
}

// WriteSpec is the physical form of a write's options.
func WriteSpec(o logical.WriteOptions) physical.WriteSpec {
	return physical.WriteSpec{
		Format: physical.Format(o.Format), PartitionBy: o.PartitionBy, Compression: o.Compression,
		RowGroupSize: o.RowGroupSize, Delimiter: o.Delimiter, Header: o.Header,
	}
}
