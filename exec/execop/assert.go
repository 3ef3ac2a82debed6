package execop

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/quiverdb/quiver/physical"
)

// checked wraps an operator with checks of the Operator contract, built
// only under the assert tag: Open once and before Next, no Next after the
// end or after Close, and every batch shaped as the plan node's schema says
// (same column count and types, every column as long as the batch). A
// violation panics; the task's goroutine root turns it into an internal
// error that names the node, so a test run with -tags assert fails loudly.
type checked struct {
	op            Operator
	p             physical.Plan
	schema        *arrow.Schema
	opened, ended bool
	closed        bool
}

func (c *checked) fail(format string, args ...any) {
	panic(fmt.Sprintf("operator contract of %s: %s", c.p, fmt.Sprintf(format, args...)))
}

func (c *checked) Open(ctx context.Context) error {
	if c.opened {
		c.fail("Open called twice")
	}
	if c.closed {
		c.fail("Open after Close")
	}
	c.opened = true
	return c.op.Open(ctx)
}

func (c *checked) Next(ctx context.Context) (arrow.RecordBatch, error) {
	switch {
	case !c.opened:
		c.fail("Next before Open")
	case c.closed:
		c.fail("Next after Close")
	case c.ended:
		c.fail("Next after the end of the stream")
	}
	b, err := c.op.Next(ctx)
	if err != nil {
		if err == io.EOF {
			c.ended = true
		}
		return b, err
	}
	if b == nil {
		c.fail("Next returned neither a batch nor an error")
	}
	if got, want := int(b.NumCols()), c.schema.NumFields(); got != want {
		c.fail("batch has %d columns, the node's schema %d", got, want)
	}
	for i, col := range b.Columns() {
		if want := c.schema.Field(i).Type; !arrow.TypeEqual(col.DataType(), want) {
			c.fail("column %d (%s) is %s, the node's schema says %s", i, c.schema.Field(i).Name, col.DataType(), want)
		}
		if int64(col.Len()) != b.NumRows() {
			c.fail("column %d has %d values in a batch of %d rows", i, col.Len(), b.NumRows())
		}
	}
	return b, nil
}

func (c *checked) Close() error {
	c.closed = true
	return c.op.Close()
}
