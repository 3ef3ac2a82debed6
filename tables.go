package quiver

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/scan"
	"github.com/quiverdb/quiver/exec/write"
	"github.com/quiverdb/quiver/logical"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/sql"
)

// Writable tables. A memory table (CREATE TABLE, CREATE TABLE AS) keeps its
// rows as Arrow batches outside the Go heap in this process, split over
// partitions (on a cluster of other processes, on the executors instead:
// memtable_cluster.go). Every write (INSERT, DELETE, TRUNCATE) builds the table anew
// from the old batches and the new ones and replaces it in the catalog in
// one step, with its Version one higher; a query that began before holds
// its own references to the old batches. Writes to one session's tables
// are serialized (Session.writeMu), so none is lost to another.

// runWrite executes the write statements; ok is false for any other.
func (s *Session) runWrite(ctx context.Context, stmt sql.Statement) (df *DataFrame, ok bool, err error) {
	switch st := stmt.(type) {
	case *sql.Copy:
		df, err = s.copyTo(ctx, st)
	case *sql.CreateTable:
		df, err = s.createTable(ctx, st)
	case *sql.Insert:
		df, err = s.insert(ctx, st)
	case *sql.Delete:
		df, err = s.deleteRows(ctx, st)
	case *sql.Truncate:
		df, err = s.truncate(st)
	default:
		return nil, false, nil
	}
	return df, true, err
}

// countResult is the one-row result of a write: the rows it wrote.
func (s *Session) countResult(n int64) (*DataFrame, error) {
	v, err := logical.NewValues(logical.NewSchema(logical.Field{Name: "count", Type: logical.Int64}), [][]logical.Expr{{logical.Lit(n)}})
	if err != nil {
		return nil, err
	}
	return s.newFrame(v), nil
}

func (s *Session) copyTo(ctx context.Context, st *sql.Copy) (*DataFrame, error) {
	var opts []WriteOption
	if st.Format != "" {
		opts = append(opts, withFormat(st.Format))
	}
	if len(st.PartitionBy) > 0 {
		opts = append(opts, PartitionBy(st.PartitionBy...))
	}
	if st.Compression != "" {
		opts = append(opts, Compression(st.Compression))
	}
	if st.RowGroupSize > 0 {
		opts = append(opts, RowGroupSize(st.RowGroupSize))
	}
	if st.Overwrite {
		opts = append(opts, Overwrite())
	}
	if st.Delimiter != 0 {
		opts = append(opts, CSVWriteDelimiter(st.Delimiter))
	}
	if st.Header != nil {
		opts = append(opts, CSVWriteHeader(*st.Header))
	}
	n, err := s.newFrame(st.Plan).Write(ctx, st.Path, opts...)
	if err != nil {
		return nil, err
	}
	return s.countResult(n)
}

// collectOffHeap runs df and copies its batches outside the Go heap (see
// LoadIntoMemory), each with schema; the caller owns the copies.
func collectOffHeap(ctx context.Context, df *DataFrame, schema *arrow.Schema) ([]arrow.RecordBatch, int64, error) {
	offHeap := execop.NewOffHeapAllocator()
	var out []arrow.RecordBatch
	var rows int64
	for b, err := range df.Stream(ctx) {
		if err != nil {
			releaseBatches(out)
			return nil, 0, err
		}
		if b.NumRows() == 0 {
			continue
		}
		c := execop.CopyBatch(offHeap, b)
		if !c.Schema().Equal(schema) {
			re := array.NewRecordBatch(schema, c.Columns(), c.NumRows())
			c.Release()
			c = re
		}
		out = append(out, c)
		rows += c.NumRows()
	}
	return out, rows, nil
}

func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}

func releaseParts(parts [][]arrow.RecordBatch) {
	for _, p := range parts {
		releaseBatches(p)
	}
}

// newMemoryTable makes a memory table of batches (taken over) split over the
// session's partitions.
func (s *Session) newMemoryTable(name string, schema *arrow.Schema, batches []arrow.RecordBatch, version uint64) *catalog.Table {
	n := localTargetPartitions(s.snapshot())
	parts, rows := scan.SplitContiguous(batches, n)
	if len(parts) == 0 {
		parts = [][]arrow.RecordBatch{nil}
	}
	return &catalog.Table{Name: name, Schema: schema, Format: catalog.Memory, Partitions: parts, Rows: rows,
		PartitionRanges: partitionRanges(parts, schema.NumFields()), Version: version}
}

func (s *Session) createTable(ctx context.Context, st *sql.CreateTable) (*DataFrame, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if st.IfNotExists {
		if _, ok := s.cat.Table(st.Name); ok {
			return s.done(), nil
		}
	}
	if !st.OrReplace {
		// Fail before running the query.
		if _, ok := s.cat.Table(st.Name); ok {
			return nil, qerr.Planf("table %q already exists", st.Name)
		}
		if _, ok := s.cat.View(st.Name); ok {
			return nil, qerr.Planf("a view named %q already exists", st.Name)
		}
	}
	if s.tablesOnExecutors() {
		return s.createTableOnExecutors(ctx, st)
	}
	var schema *arrow.Schema
	var batches []arrow.RecordBatch
	if st.Plan != nil {
		schema = st.Plan.Schema().Arrow()
		var err error
		if batches, _, err = collectOffHeap(ctx, s.newFrame(st.Plan), schema); err != nil {
			return nil, err
		}
	} else {
		schema = arrow.NewSchema(st.Columns, nil)
	}
	version := uint64(1)
	if old, ok := s.cat.Table(st.Name); ok {
		version = old.Version + 1
	}
	t := s.newMemoryTable(st.Name, schema, batches, version)
	if err := s.cat.RegisterTable(t, st.OrReplace); err != nil {
		releaseParts(t.Partitions)
		return nil, err
	}
	s.invalidateCachesOf(ctx, st.Name, true)
	if st.Plan != nil {
		return s.countResult(t.Rows)
	}
	return s.done(), nil
}

func (s *Session) insert(ctx context.Context, st *sql.Insert) (*DataFrame, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t, ok := s.cat.Table(st.Table)
	if !ok {
		return nil, qerr.Planf("table %q not found", st.Table)
	}
	if t.Format != catalog.Memory {
		return s.insertFiles(ctx, t, st)
	}
	if t.OnExecutors {
		return s.insertOnExecutors(ctx, t, st.Plan)
	}
	batches, n, err := collectOffHeap(ctx, s.newFrame(st.Plan), t.Schema)
	if err != nil {
		return nil, err
	}
	old, ok := s.cat.RetainPartitions(t.Name)
	if !ok {
		releaseBatches(batches)
		return nil, qerr.Planf("table %q was dropped during the insert", st.Table)
	}
	// The new batches go to the partitions round-robin after the old ones.
	parts := old
	if len(parts) == 0 {
		parts = [][]arrow.RecordBatch{nil}
	}
	for i, b := range batches {
		p := (int(t.Version) + i) % len(parts)
		parts[p] = append(parts[p], b)
	}
	nt := &catalog.Table{Name: t.Name, Schema: t.Schema, Format: catalog.Memory, Partitions: parts, Rows: t.Rows + n,
		PartitionRanges: partitionRanges(parts, t.Schema.NumFields()), Version: t.Version + 1}
	if err := s.cat.RegisterTable(nt, true); err != nil {
		releaseParts(parts)
		return nil, err
	}
	s.invalidateCachesOf(ctx, t.Name, true)
	return s.countResult(n)
}

// insertFiles writes the new rows as a new file in the table's directory
// (beside its files) and re-registers the table with it.
func (s *Session) insertFiles(ctx context.Context, t *catalog.Table, st *sql.Insert) (*DataFrame, error) {
	switch t.Format {
	case catalog.Parquet, catalog.CSV, catalog.JSON, catalog.Arrow:
	default:
		return nil, qerr.NotImplementedf("INSERT INTO a %s table is not supported", t.Format)
	}
	path := filepath.Join(t.Dir(), "part-"+uuid.NewString()+write.Extension(physical.Format(t.Format)))
	opts := []WriteOption{withFormat(t.Format)}
	if t.Format == catalog.CSV {
		d, err := catalog.CSVDelimiter(t.Options)
		if err != nil {
			return nil, err
		}
		h, err := catalog.CSVHasHeader(t.Options)
		if err != nil {
			return nil, err
		}
		opts = append(opts, CSVWriteDelimiter(d), CSVWriteHeader(h))
	}
	n, err := s.newFrame(st.Plan).Write(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	locs := t.Locations
	if len(locs) == 0 {
		locs = []string{t.Location}
	}
	nt, err := catalog.OpenFiles(t.Name, t.Format, append(slices.Clone(locs), path), t.Options, t.Schema.Fields())
	if err != nil {
		removeFile(path)
		return nil, err
	}
	nt.Version = t.Version + 1
	if err := s.cat.RegisterTable(nt, true); err != nil {
		removeFile(path)
		return nil, err
	}
	s.invalidateCachesOf(ctx, t.Name, true)
	return s.countResult(n)
}

func (s *Session) memoryTableFor(name, what string) (*catalog.Table, error) {
	t, ok := s.cat.Table(name)
	if !ok {
		if _, isView := s.cat.View(name); isView {
			return nil, qerr.Planf("cannot %s view %q", what, name)
		}
		return nil, qerr.Planf("table %q not found", name)
	}
	if t.Format != catalog.Memory {
		return nil, qerr.NotImplementedf("%s works on memory tables; %q is a %s table (its files are not changed)", what, name, t.Format)
	}
	return t, nil
}

func (s *Session) deleteRows(ctx context.Context, st *sql.Delete) (*DataFrame, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t, err := s.memoryTableFor(st.Table, "DELETE FROM")
	if err != nil {
		return nil, err
	}
	if t.OnExecutors {
		return s.deleteOnExecutors(ctx, t, st.Keep)
	}
	kept, n, err := collectOffHeap(ctx, s.newFrame(st.Keep), t.Schema)
	if err != nil {
		return nil, err
	}
	nt := s.newMemoryTable(t.Name, t.Schema, kept, t.Version+1)
	if err := s.cat.RegisterTable(nt, true); err != nil {
		releaseParts(nt.Partitions)
		return nil, err
	}
	s.invalidateCachesOf(ctx, t.Name, true)
	return s.countResult(t.Rows - n)
}

func (s *Session) truncate(st *sql.Truncate) (*DataFrame, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t, err := s.memoryTableFor(st.Table, "TRUNCATE")
	if err != nil {
		return nil, err
	}
	if t.OnExecutors {
		return s.truncateOnExecutors(t)
	}
	nt := s.newMemoryTable(t.Name, t.Schema, nil, t.Version+1)
	if err := s.cat.RegisterTable(nt, true); err != nil {
		return nil, err
	}
	s.invalidateCachesOf(context.Background(), t.Name, true)
	return s.done(), nil
}

// removeFile deletes a file a failed write made (best effort: the write's
// own error is the one reported).
func removeFile(path string) { _ = os.Remove(path) }
