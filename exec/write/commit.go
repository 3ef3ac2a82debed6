package write

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// commitOp is FileCommit.
type commitOp struct {
	tc    *execop.TaskContext
	n     *physical.FileCommit
	input execop.Operator
	done  bool
}

// NewFileCommit builds n, whose input has one partition.
func NewFileCommit(tc *execop.TaskContext, n *physical.FileCommit, partition int) (execop.Operator, error) {
	if err := physical.CheckWritePaths(n.Target, n.Staging); err != nil {
		return nil, err
	}
	if n.Input.OutputPartitions() != 1 {
		return nil, qerr.Internalf("write: FileCommit wants one input partition, got %d", n.Input.OutputPartitions())
	}
	in, err := tc.Build(n.Input, 0)
	if err != nil {
		return nil, err
	}
	return &commitOp{tc: tc, n: n, input: in}, nil
}

func (c *commitOp) Open(ctx context.Context) error { return c.input.Open(ctx) }

func (c *commitOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if c.done {
		return nil, io.EOF
	}
	var files []string
	var rows int64
	for {
		b, err := c.input.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		names := b.Column(0).(*array.String)
		counts := b.Column(1).(*array.Int64)
		for i := 0; i < int(b.NumRows()); i++ {
			files = append(files, names.Value(i))
			rows += counts.Value(i)
		}
		b.Release()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := commit(c.n, files); err != nil {
		return nil, err
	}
	c.done = true
	bld := array.NewInt64Builder(c.tc.Mem)
	defer bld.Release()
	bld.Append(rows)
	a := bld.NewArray()
	defer a.Release()
	return array.NewRecordBatch(physical.FileCommitSchema, []arrow.Array{a}, 1), nil
}

func (c *commitOp) Close() error { return c.input.Close() }

// commit moves files (relative to the staging directory) into the target
// and removes the staging directory.
func commit(n *physical.FileCommit, files []string) error {
	for _, f := range files {
		if !filepath.IsLocal(f) {
			return qerr.Planf("write: file %q is not inside the staging directory", f)
		}
	}
	if n.Single && len(files) != 1 {
		return qerr.Internalf("write %s: a single-file write made %d files", n.Target, len(files))
	}
	// What to move into the target's place: the file itself, or a new
	// directory laid out with the listed files.
	src := ""
	if n.Single {
		src = filepath.Join(n.Staging, files[0])
	} else {
		src = filepath.Join(n.Staging, ".commit")
		if err := os.MkdirAll(src, 0o755); err != nil {
			return qerr.IOf("write %s: %w", n.Target, err)
		}
		for _, f := range files {
			dst := filepath.Join(src, f)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return qerr.IOf("write %s: %w", n.Target, err)
			}
			if err := os.Rename(filepath.Join(n.Staging, f), dst); err != nil {
				return qerr.IOf("write %s: %w", n.Target, err)
			}
		}
	}
	var trash string
	if st, err := os.Lstat(n.Target); err == nil {
		if !n.Overwrite {
			return qerr.Planf("write %s: the target exists; use OVERWRITE to replace it", n.Target)
		}
		if st.IsDir() == n.Single {
			what := map[bool]string{true: "a directory", false: "a file"}
			return qerr.Planf("write %s: the target is %s, the write makes %s", n.Target, what[st.IsDir()], what[!n.Single])
		}
		// Move the old target aside, the new one in, then delete the old.
		trash = n.Staging + ".old"
		if err := os.Rename(n.Target, trash); err != nil {
			return qerr.IOf("write %s: %w", n.Target, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return qerr.IOf("write %s: %w", n.Target, err)
	}
	if err := os.Rename(src, n.Target); err != nil {
		if trash != "" {
			os.Rename(trash, n.Target)
		}
		return qerr.IOf("write %s: %w", n.Target, err)
	}
	os.RemoveAll(n.Staging)
	if trash != "" {
		os.RemoveAll(trash)
	}
	return nil
}
