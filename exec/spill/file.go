package spill

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// File is one spill file. Not safe for concurrent use.
type File struct {
	tc     *execop.TaskContext
	node   physical.Plan // whose SpilledBytes it adds to
	path   string
	f      *os.File
	w      *ipc.Writer // while writing
	r      *ipc.Reader // once reading
	rows   int64
	closed bool
}

// DirName is the directory under an executor's work dir that holds its
// tasks' spill files. A dot cannot start a job id, so the executor's sweep
// of orphaned job directories never takes it for one; the executor empties
// it when it starts (spill files never outlive their process).
const DirName = ".spill"

// Create starts a spill file for node's batches of schema, named after
// what (a word such as "sort"): under the task's work dir, or in the
// system's temporary directory when the task has none.
func Create(tc *execop.TaskContext, node physical.Plan, schema *arrow.Schema, what string) (*File, error) {
	dir := os.TempDir()
	pattern := "quiver-" + what + "-*.arrows"
	if tc.WorkDir != "" {
		dir, pattern = filepath.Join(tc.WorkDir, DirName), what+"-*.arrows"
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, qerr.IOf("exec: %s: creating spill directory %s: %w", what, dir, err)
		}
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, qerr.IOf("exec: %s: creating a spill file in %s: %w", what, dir, err)
	}
	return &File{tc: tc, node: node, path: f.Name(), f: f,
		w: ipc.NewWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(tc.Mem))}, nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Rows is the number of rows written.
func (f *File) Rows() int64 { return f.rows }

// Write appends b (the caller keeps it).
func (f *File) Write(b arrow.RecordBatch) error {
	if f.w == nil {
		return qerr.Internalf("exec: spill file %s: write after Finish", f.path)
	}
	if err := f.w.Write(b); err != nil {
		return qerr.IOf("exec: writing spill file %s: %w", f.path, err)
	}
	f.rows += b.NumRows()
	return nil
}

// Finish ends writing and counts the file's bytes as spilled.
func (f *File) Finish() error {
	if f.w == nil {
		return nil
	}
	err := f.w.Close()
	f.w = nil
	if err != nil {
		return qerr.IOf("exec: writing spill file %s: %w", f.path, err)
	}
	if st, err := f.f.Stat(); err == nil {
		if m := f.tc.NodeMetrics(f.node); m != nil {
			m.SpilledBytes.Add(st.Size())
		}
	}
	return nil
}

// Reader returns a function yielding the file's batches from the start
// (each owned by the caller) and io.EOF at the end. It finishes writing
// first. Batches are read through a soft limit checked after each one:
// arrow-go's reader turns a panic inside an allocation into an error that
// no longer says it was the memory limit.
func (f *File) Reader() (func(ctx context.Context) (arrow.RecordBatch, error), error) {
	if err := f.Finish(); err != nil {
		return nil, err
	}
	if _, err := f.f.Seek(0, io.SeekStart); err != nil {
		return nil, qerr.IOf("exec: reading spill file %s: %w", f.path, err)
	}
	mem, crossed := execop.SoftLimited(f.tc.Mem)
	r, err := ipc.NewReader(f.f, ipc.WithAllocator(mem))
	if err != nil {
		return nil, f.readErr(err)
	}
	if f.r != nil {
		f.r.Release()
	}
	f.r = r
	return func(ctx context.Context) (arrow.RecordBatch, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !r.Next() {
			if err := r.Err(); err != nil && !errors.Is(err, io.EOF) {
				return nil, f.readErr(err)
			}
			return nil, io.EOF
		}
		if err := crossed(); err != nil {
			return nil, err
		}
		b := r.RecordBatch()
		b.Retain()
		return b, nil
	}, nil
}

// readErr is the error of reading the file back: the memory limit's own
// error when arrow-go's reader hit it, else an IO error naming the file.
func (f *File) readErr(err error) error {
	if err := execop.LimitErr(err); qerr.Is(err, qerr.Resources) {
		return err
	}
	return qerr.IOf("exec: reading spill file %s: %w", f.path, err)
}

// Remove closes and deletes the file; idempotent.
func (f *File) Remove() error {
	if f.closed {
		return nil
	}
	f.closed = true
	if f.w != nil {
		f.w.Close()
		f.w = nil
	}
	if f.r != nil {
		f.r.Release()
		f.r = nil
	}
	f.f.Close()
	if err := os.Remove(f.path); err != nil {
		return qerr.IOf("exec: removing spill file %s: %w", f.path, err)
	}
	return nil
}

// RemoveAll removes every file, returning the first error.
func RemoveAll(files []*File) error {
	var first error
	for _, f := range files {
		if err := f.Remove(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
