package write

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/hashtable"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/format"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// MaxPartitions bounds the Hive partitions (distinct keys) one task of a
// partitioned write opens files for.
const MaxPartitions = 4096

// HiveNull is the directory value of a NULL partition key.
const HiveNull = "__HIVE_DEFAULT_PARTITION__"

// sinkOp is FileSink: it writes its partition's rows, then outputs the
// files it made.
type sinkOp struct {
	tc    *execop.TaskContext
	n     *physical.FileSink
	input execop.Operator
	w     *partWriter
	done  bool
}

// NewFileSink builds partition of n.
func NewFileSink(tc *execop.TaskContext, n *physical.FileSink, partition int) (execop.Operator, error) {
	if err := physical.CheckStaging(n.Staging); err != nil {
		return nil, err
	}
	if err := CheckSpec(n.Spec, n.Input.Schema().NumFields()); err != nil {
		return nil, err
	}
	in, err := tc.Build(n.Input, partition)
	if err != nil {
		return nil, err
	}
	w, err := newPartWriter(n.Staging, fmt.Sprintf("part-%05d-%s", partition, randomID()), n.Input.Schema(), n.Spec, tc)
	if err != nil {
		return nil, err
	}
	return &sinkOp{tc: tc, n: n, input: in, w: w}, nil
}

func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *sinkOp) Open(ctx context.Context) error { return s.input.Open(ctx) }

func (s *sinkOp) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.done {
		return nil, io.EOF
	}
	for {
		b, err := s.input.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		err = s.w.write(ctx, b)
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	files, err := s.w.finish()
	if err != nil {
		return nil, err
	}
	s.done = true
	names := array.NewStringBuilder(s.tc.Mem)
	defer names.Release()
	rows := array.NewInt64Builder(s.tc.Mem)
	defer rows.Release()
	for _, f := range files {
		names.Append(f.path)
		rows.Append(f.rows)
	}
	na, ra := names.NewArray(), rows.NewArray()
	defer na.Release()
	defer ra.Release()
	return array.NewRecordBatch(physical.FileSinkSchema, []arrow.Array{na, ra}, int64(len(files))), nil
}

// Close closes the input and removes the files of an attempt that did not
// finish (its task failed or was cancelled).
func (s *sinkOp) Close() error {
	s.w.abort()
	return s.input.Close()
}

// written is one finished file: its path under the staging directory.
type written struct {
	path string
	rows int64
}

// partWriter writes one task's rows under the staging directory: one file
// (stem + extension), or one per Hive partition key (k=v/.../stem.ext).
type partWriter struct {
	staging, stem string
	spec          physical.WriteSpec
	schema        *arrow.Schema // the input's
	data          []int         // the columns the files hold
	dataSch       *arrow.Schema
	tc            *execop.TaskContext

	files   []fileWriter // by key id (one, unpartitioned)
	paths   []string
	counts  []int64
	table   *hashtable.Table
	probe   hashtable.Probe
	ids     []uint32
	rowsBy  [][]int32
	created []string // absolute paths of every file opened
	done    bool
}

func newPartWriter(staging, stem string, schema *arrow.Schema, spec physical.WriteSpec, tc *execop.TaskContext) (*partWriter, error) {
	w := &partWriter{staging: staging, stem: stem, spec: spec, schema: schema, tc: tc}
	key := map[int]bool{}
	types := make([]arrow.DataType, len(spec.PartitionBy))
	for i, c := range spec.PartitionBy {
		key[c] = true
		types[i] = schema.Field(c).Type
	}
	var fields []arrow.Field
	for i, f := range schema.Fields() {
		if !key[i] {
			w.data = append(w.data, i)
			fields = append(fields, f)
		}
	}
	w.dataSch = arrow.NewSchema(fields, nil)
	if len(spec.PartitionBy) > 0 {
		t, err := hashtable.New(types)
		if err != nil {
			return nil, err
		}
		w.table = t
	}
	return w, nil
}

func (w *partWriter) write(ctx context.Context, b arrow.RecordBatch) error {
	n := int(b.NumRows())
	if n == 0 {
		return nil
	}
	if w.table == nil {
		f, err := w.file(0, "")
		if err != nil {
			return err
		}
		picked := make([]arrow.Array, len(w.data))
		for i, c := range w.data {
			picked[i] = b.Column(c)
		}
		// The file writers want the declared schema exactly (a batch may
		// differ in field nullability or metadata).
		one := array.NewRecordBatch(w.dataSch, picked, b.NumRows())
		defer one.Release()
		w.counts[0] += int64(n)
		return f.write(one)
	}
	keys := make([]arrow.Array, len(w.spec.PartitionBy))
	for i, k := range w.spec.PartitionBy {
		keys[i] = b.Column(k)
	}
	w.ids = kernel.Resize(w.ids, n)
	w.table.FindOrInsert(&w.probe, keys, n, nil, w.ids)
	if w.table.Len() > MaxPartitions {
		return qerr.Execf("write: more than %d partitions in one task", MaxPartitions)
	}
	for len(w.rowsBy) < w.table.Len() {
		w.rowsBy = append(w.rowsBy, nil)
	}
	for i := range w.rowsBy {
		w.rowsBy[i] = w.rowsBy[i][:0]
	}
	for r, id := range w.ids[:n] {
		w.rowsBy[id] = append(w.rowsBy[id], int32(r))
	}
	for id, rows := range w.rowsBy {
		if len(rows) == 0 {
			continue
		}
		f, err := w.file(id, hiveDir(w.schema, w.spec.PartitionBy, keys, int(rows[0])))
		if err != nil {
			return err
		}
		cols, err := kernel.TakeSome(ctx, w.tc.Mem, w.schema, b.Columns(), w.data, rows)
		if err != nil {
			return err
		}
		picked := make([]arrow.Array, len(w.data))
		for i, c := range w.data {
			picked[i] = cols[c]
		}
		part := array.NewRecordBatch(w.dataSch, picked, int64(len(rows)))
		kernel.ReleaseArrays(cols)
		err = f.write(part)
		part.Release()
		if err != nil {
			return err
		}
		w.counts[id] += int64(len(rows))
	}
	return nil
}

// hiveDir is the key=value/... directory of the key at row r of keys.
func hiveDir(schema *arrow.Schema, cols []int, keys []arrow.Array, r int) string {
	dir := ""
	for i, k := range keys {
		one := array.NewSlice(k, int64(r), int64(r+1))
		vals, nulls := format.Column(one)
		one.Release()
		v := HiveNull
		if !nulls[0] {
			v = url.PathEscape(vals[0])
		}
		dir = filepath.Join(dir, schema.Field(cols[i]).Name+"="+v)
	}
	return dir
}

// file returns the writer of key id, opening it (under dir) the first time.
func (w *partWriter) file(id int, dir string) (fileWriter, error) {
	for len(w.files) <= id {
		w.files = append(w.files, nil)
		w.paths = append(w.paths, "")
		w.counts = append(w.counts, 0)
	}
	if w.files[id] != nil {
		return w.files[id], nil
	}
	rel := filepath.Join(dir, w.stem+Extension(w.spec.Format))
	abs := filepath.Join(w.staging, rel)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, qerr.IOf("write: %w", err)
	}
	f, err := os.Create(abs)
	if err != nil {
		return nil, qerr.IOf("write: %w", err)
	}
	w.created = append(w.created, abs)
	fw, err := newFileWriter(f, w.dataSch, w.spec)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.files[id], w.paths[id] = fw, rel
	return fw, nil
}

// finish closes the files and lists them. An unpartitioned task always
// makes its file, empty if it saw no rows (the single-file target exists
// even for an empty result); a partitioned one makes none without rows.
func (w *partWriter) finish() ([]written, error) {
	if w.table == nil && len(w.files) == 0 {
		if _, err := w.file(0, ""); err != nil {
			return nil, err
		}
	}
	if err := w.closeFiles(); err != nil {
		return nil, err
	}
	w.done = true
	out := make([]written, 0, len(w.paths))
	for id, p := range w.paths {
		if p != "" {
			out = append(out, written{path: p, rows: w.counts[id]})
		}
	}
	return out, nil
}

func (w *partWriter) closeFiles() error {
	var first error
	for i, f := range w.files {
		if f == nil {
			continue
		}
		w.files[i] = nil
		if err := f.close(); err != nil && first == nil {
			first = qerr.IOf("write: %w", err)
		}
	}
	return first
}

// abort closes and deletes the files of an unfinished attempt; a finished
// one's files belong to the commit.
func (w *partWriter) abort() {
	if w.done {
		return
	}
	w.done = true
	w.closeFiles()
	for _, p := range w.created {
		os.Remove(p)
	}
}
