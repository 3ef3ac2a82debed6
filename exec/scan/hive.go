package scan

import (
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// hiveCols adds a hive-partitioned table's partition columns, constant per
// file, to the batches read from the file columns. The scan reads the files
// through a node narrowed to the file columns (fileNode); attach puts each
// output column where the original node's projection wants it.
type hiveCols struct {
	full   *physical.Scan // the node as planned
	out    *arrow.Schema  // full.Schema()
	k      int            // partition columns
	fileN  int            // file columns
	source []int          // per output column: its column in the read batch, or -1-j for partition column j
	// values caches the current file's partition values as scalars.
	file   string
	values []scalar.Scalar
}

// newHiveCols narrows n to its file columns when it has partition columns;
// it returns nil, n when it has none.
func newHiveCols(n *physical.Scan) (*hiveCols, *physical.Scan, error) {
	names := n.Options[physical.PartitionColumnsOption]
	if names == "" {
		return nil, n, nil
	}
	k := len(strings.Split(names, ","))
	fileN := n.FileSchema.NumFields() - k
	if fileN < 1 {
		return nil, nil, qerr.Internalf("exec: scan of %s: %d partition columns of %d", n.Table, k, n.FileSchema.NumFields())
	}
	proj := n.Projection
	if proj == nil {
		proj = make([]int, n.FileSchema.NumFields())
		for i := range proj {
			proj[i] = i
		}
	}
	h := &hiveCols{full: n, out: n.Schema(), k: k, fileN: fileN, source: make([]int, len(proj))}
	var fileProj []int
	for i, c := range proj {
		if c < 0 || c >= n.FileSchema.NumFields() {
			return nil, nil, qerr.Internalf("exec: scan of %s: projected column %d out of range", n.Table, c)
		}
		if c < fileN {
			h.source[i] = len(fileProj)
			fileProj = append(fileProj, c)
		} else {
			h.source[i] = -1 - (c - fileN)
		}
	}
	if len(fileProj) == 0 {
		// Only partition columns: read the first file column for the row
		// counts and drop it.
		fileProj = []int{0}
	}
	nn := *n
	nn.FileSchema = arrow.NewSchema(n.FileSchema.Fields()[:fileN], nil)
	nn.Projection = fileProj
	// Row-group pruning works on the projected columns' positions, which
	// the narrowing moves; files were already pruned by partition.
	nn.Predicate = nil
	nn.Disjoint = nil
	return h, &nn, nil
}

// attach returns b (read from file) with the partition columns added; it
// takes over b's reference.
func (h *hiveCols) attach(mem memory.Allocator, b arrow.RecordBatch, file string) (arrow.RecordBatch, error) {
	defer b.Release()
	if file != h.file || h.values == nil {
		vals, err := h.full.PartitionValues(file, h.k)
		if err != nil {
			return nil, err
		}
		h.values = make([]scalar.Scalar, h.k)
		for j, v := range vals {
			t := h.full.FileSchema.Field(h.fileN + j).Type
			if h.values[j], err = partitionScalar(v, t); err != nil {
				return nil, qerr.Execf("exec: scan of %s: partition column %q of %s: %w", h.full.Table, h.full.FileSchema.Field(h.fileN+j).Name, file, err)
			}
		}
		h.file = file
	}
	rows := int(b.NumRows())
	cols := make([]arrow.Array, len(h.source))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, src := range h.source {
		if src >= 0 {
			c := b.Column(src)
			c.Retain()
			cols[i] = c
			continue
		}
		a, err := scalar.MakeArrayFromScalar(h.values[-1-src], rows, mem)
		if err != nil {
			return nil, qerr.Execf("exec: scan of %s: %w", h.full.Table, err)
		}
		cols[i] = a
	}
	return array.NewRecordBatch(h.out, cols, int64(rows)), nil
}

// partitionScalar converts a path value (nil: NULL) to a scalar of type t.
func partitionScalar(v *string, t arrow.DataType) (scalar.Scalar, error) {
	if v == nil {
		return scalar.MakeNullScalar(t), nil
	}
	switch t.ID() {
	case arrow.INT64:
		n, err := strconv.ParseInt(*v, 10, 64)
		if err != nil {
			return nil, err
		}
		return scalar.NewInt64Scalar(n), nil
	case arrow.DATE32:
		d, err := time.Parse("2006-01-02", *v)
		if err != nil {
			return nil, err
		}
		return scalar.NewDate32Scalar(arrow.Date32FromTime(d)), nil
	case arrow.STRING:
		return scalar.NewStringScalar(*v), nil
	}
	return nil, qerr.NotImplementedf("partition columns of type %s are not supported", t)
}
