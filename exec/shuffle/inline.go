package shuffle

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// NewInlineReader returns an unopened operator streaming the batches of
// loc's inline file (loc.Inline, an Arrow IPC stream), allocated from
// mem. Bytes that are not a well-formed stream are an error from Open or
// Next naming loc, never a panic: they came over the wire.
func NewInlineReader(mem memory.Allocator, loc physical.PartitionLocation) execop.Operator {
	return &inlineOp{mem: mem, loc: loc}
}

// inlineOp reads one inline file; see NewInlineReader.
type inlineOp struct {
	mem memory.Allocator
	loc physical.PartitionLocation
	rdr *ipc.Reader
}

func (o *inlineOp) Open(ctx context.Context) (err error) {
	if o.rdr != nil {
		return qerr.Internalf("exec: inline file %s opened twice", o.loc)
	}
	defer o.recover(&err)
	rdr, err := ipc.NewReader(bytes.NewReader(o.loc.Inline), ipc.WithAllocator(o.mem))
	if err != nil {
		return o.bad(err)
	}
	o.rdr = rdr
	return ctx.Err()
}

func (o *inlineOp) Next(ctx context.Context) (b arrow.RecordBatch, err error) {
	if o.rdr == nil {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	defer o.recover(&err)
	if !o.rdr.Next() {
		if err := o.rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, o.bad(err)
		}
		return nil, io.EOF
	}
	b = o.rdr.RecordBatch() // valid until the next Next: keep a reference
	b.Retain()
	return b, nil
}

func (o *inlineOp) Close() error {
	if o.rdr != nil {
		o.rdr.Release()
		o.rdr = nil
	}
	return nil
}

// bad is a malformed inline stream's error.
func (o *inlineOp) bad(err error) error {
	return qerr.IOf("exec: inline shuffle file %s is not an arrow ipc stream: %w", o.loc, err)
}

// recover turns a panic of the IPC decoder on malformed bytes into an
// error.
func (o *inlineOp) recover(err *error) {
	if r := recover(); r != nil {
		*err = o.bad(qerr.Internalf("decoder panic: %v", r))
	}
}
