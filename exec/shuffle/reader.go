package shuffle

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

func NewShuffleReader(tc *execop.TaskContext, n *physical.ShuffleReader, partition int) (execop.Operator, error) {
	return newLocationReader(tc, n.String(), n.OutSchema, n.Locations, partition), nil
}

// NewCacheReader reads pinned cache files, which every query over the cache
// reads again: through tc.Maps, when set, they stay mapped between reads.
func NewCacheReader(tc *execop.TaskContext, n *physical.CacheReader, partition int) (execop.Operator, error) {
	r := newLocationReader(tc, n.String(), n.OutSchema, n.Locations, partition)
	r.maps = tc.Maps
	if n.Predicate != nil {
		r.terms, r.node = zoneTerms(n.Predicate, n.OutSchema), n
	}
	return r, nil
}

func newLocationReader(tc *execop.TaskContext, what string, schema *arrow.Schema, locs [][]physical.PartitionLocation, partition int) *locationReader {
	r := &locationReader{tc: tc, what: what, schema: schema, cur: -1}
	if partition < len(locs) {
		r.locs = locs[partition]
	}
	return r
}

// locationReader is one output partition of a ShuffleReader or CacheReader:
// it reads the shuffle files at locs one after the other, a file under
// tc.WorkDir when the location is held by this executor (or when there is
// no Fetcher), else through tc.Fetcher. At most one file or fetch is open at
// a time. Any failure to reach or decode a location is an *FetchError
// naming it; cancellation is reported as ctx's error, never as a fetch
// failure. Batches carry exactly schema.
type locationReader struct {
	tc     *execop.TaskContext
	what   string
	schema *arrow.Schema
	maps   *filemap.FileMaps // keeps local files mapped between readers; nil: map per read
	locs   []physical.PartitionLocation
	next   int // index of the location to open next

	// the open location: a local file or a fetch
	cur    int      // index of the open location, -1 if none
	path   string   // the open local file's path
	file   *os.File // the open local file, nil when it is mapped
	stream *ipc.Reader
	dec    *filemap.DecodedFile // the open local file's shared decoded batches, instead of stream
	decPos int                  // the next of dec's batches
	remote execop.Operator
	closed bool
	// sameSchema is a batch schema found equal to schema: the batches of
	// one file share their schema object, and comparing schemas field by
	// field (metadata through reflection) for every batch cost more than
	// counting the batch's rows.
	sameSchema *arrow.Schema

	// A cache read with a pruning hint: its terms, the open local file's
	// zones (nil: none, read every batch), the open stream's next batch
	// index, and the node whose BatchesSkipped count the skips.
	terms []zoneTerm
	kinds []zoneKind
	zones [][]zone
	batch int
	node  physical.Plan
}

func (r *locationReader) Open(ctx context.Context) error {
	return ctx.Err()
}

func (r *locationReader) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.cur < 0 {
			if r.next >= len(r.locs) {
				return nil, io.EOF
			}
			r.cur = r.next
			r.next++
			if err := r.open(ctx); err != nil {
				return nil, r.fail(ctx, err)
			}
		}
		b, err := r.read(ctx)
		if errors.Is(err, io.EOF) {
			r.closeCurrent()
			continue
		}
		if err != nil {
			return nil, r.fail(ctx, err)
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		return r.conform(b)
	}
}

// fail turns err at the open location into a FetchError (or ctx's error
// when the read stopped because of cancellation) and closes the location.
func (r *locationReader) fail(ctx context.Context, err error) error {
	loc := r.locs[r.cur]
	r.closeCurrent()
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var fe *execop.FetchError
	if errors.As(err, &fe) {
		return fe
	}
	return &execop.FetchError{Location: loc, Err: err}
}

// open starts reading location r.cur.
func (r *locationReader) open(ctx context.Context) error {
	loc := r.locs[r.cur]
	if err := ValidFile(loc.JobID, loc.StageID, loc.OutputPartition, loc.MapPartition); err != nil {
		return err
	}
	inline := len(loc.Inline) > 0
	if inline || (r.tc.Fetcher != nil && loc.Executor.ID != r.tc.ExecutorID) {
		var op execop.Operator
		if inline {
			op = NewInlineReader(r.tc.Mem, loc)
		} else {
			var err error
			if op, err = r.tc.Fetcher.Fetch(ctx, loc); err != nil {
				return err
			}
		}
		if err := op.Open(ctx); err != nil {
			_ = op.Close()
			return err
		}
		r.remote = op
		return nil
	}
	if r.tc.WorkDir == "" {
		return qerr.Internalf("exec: %s: no work dir to read local shuffle file %s from", r.what, loc)
	}
	path := FilePath(r.tc.WorkDir, loc.JobID, loc.StageID, loc.OutputPartition, loc.MapPartition)
	r.kinds, r.zones, r.batch = nil, nil, 0
	if r.maps != nil {
		m, err := r.maps.Acquire(path)
		if err != nil {
			return qerr.IOf("exec: %s: cannot open shuffle file %s: %w", r.what, path, err)
		}
		if m != nil {
			d, err := m.Decoded()
			if err != nil {
				m.Release()
				return qerr.IOf("exec: %s: shuffle file %s is not an arrow ipc stream: %w", r.what, path, err)
			}
			if d != nil {
				m.Release() // the decoded batches keep the pages mapped
				if err := r.checkSchema(d.Schema); err != nil {
					d.Release()
					return err
				}
				if len(r.terms) > 0 {
					// A decoded file's zones are read once, by its first
					// pruned read, and kept with it.
					z := d.Side(zonesKey{}, func() any {
						kinds, zones := readZones(path, r.schema.NumFields())
						return fileZones{kinds, zones}
					}).(fileZones)
					r.kinds, r.zones = z.kinds, z.zones
				}
				r.path, r.dec, r.decPos = path, d, 0
				return nil
			}
			r.readZones(path)
			s, err := filemap.NewMappedStream(m, r.tc.Mem)
			if err != nil {
				return qerr.IOf("exec: %s: shuffle file %s is not an arrow ipc stream: %w", r.what, path, err)
			}
			if err := r.checkSchema(s.Schema()); err != nil {
				s.Release()
				return err
			}
			r.path, r.stream = path, s
			return nil
		}
		// Not mappable (e.g. empty): read it as a stream below.
	}
	r.readZones(path)
	f, err := os.Open(path)
	if err != nil {
		return qerr.IOf("exec: %s: cannot open shuffle file %s: %w", r.what, path, err)
	}
	// Mapped when possible (see filemap): the file is then closed
	// at once and the stream reads the mapping; else the stream reads f.
	s, mapped, err := filemap.OpenMappedStream(f, r.tc.Mem)
	if mapped {
		f.Close() // read only; the mapping stays valid
		f = nil
	} else {
		s, err = ipc.NewReader(f, ipc.WithAllocator(r.tc.Mem))
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return qerr.IOf("exec: %s: shuffle file %s is not an arrow ipc stream: %w", r.what, path, err)
	}
	if err := r.checkSchema(s.Schema()); err != nil {
		s.Release()
		if f != nil {
			f.Close()
		}
		return err
	}
	r.path, r.file, r.stream = path, f, s
	return nil
}

// readZones reads the zones of the file at path when the read prunes.
func (r *locationReader) readZones(path string) {
	if len(r.terms) > 0 {
		r.kinds, r.zones = readZones(path, r.schema.NumFields())
	}
}

// zonesKey keys a decoded file's zones (fileZones) in DecodedFile.Side.
type zonesKey struct{}

// fileZones are a file's zone kinds and zones, as readZones returns them.
type fileZones struct {
	kinds []zoneKind
	zones [][]zone
}

// read returns the open location's next batch (the caller owns it), or io.EOF.
func (r *locationReader) read(ctx context.Context) (arrow.RecordBatch, error) {
	if r.remote != nil {
		return r.remote.Next(ctx)
	}
	if r.dec != nil {
		if r.zones != nil && len(r.zones) == len(r.dec.Batches) {
			for r.decPos < len(r.dec.Batches) && skip(r.terms, r.kinds, r.zones[r.decPos]) {
				r.decPos++
				r.skipped()
			}
		}
		if r.decPos == len(r.dec.Batches) {
			return nil, io.EOF
		}
		b := r.dec.Batches[r.decPos]
		r.decPos++
		b.Retain()
		return b, nil
	}
	for {
		if !r.stream.Next() {
			if err := r.stream.Err(); err != nil && !errors.Is(err, io.EOF) {
				return nil, qerr.IOf("exec: %s: cannot read shuffle file %s: %w", r.what, r.path, err)
			}
			return nil, io.EOF
		}
		i := r.batch
		r.batch++
		if i >= len(r.zones) || !skip(r.terms, r.kinds, r.zones[i]) {
			break
		}
		r.skipped() // decoded by the stream, but its rows go no further
	}
	b := r.stream.RecordBatch() // valid until the stream's next Next: keep a reference
	b.Retain()
	return b, nil
}

// skipped counts a batch its zones ruled out.
func (r *locationReader) skipped() {
	if m := r.tc.NodeMetrics(r.node); m != nil {
		m.BatchesSkipped.Add(1)
	}
}

// checkSchema accepts a file or fetched batch whose columns have the
// reader's types (names and nullability may differ; conform relabels).
func (r *locationReader) checkSchema(s *arrow.Schema) error {
	if s.NumFields() != r.schema.NumFields() {
		return qerr.Execf("exec: %s: shuffle data has %d columns, the plan expects %d", r.what, s.NumFields(), r.schema.NumFields())
	}
	for i, f := range s.Fields() {
		if !arrow.TypeEqual(f.Type, r.schema.Field(i).Type) {
			return qerr.Execf("exec: %s: shuffle column %d (%s) has type %s, the plan expects %s", r.what, i, r.schema.Field(i).Name, f.Type, r.schema.Field(i).Type)
		}
	}
	return nil
}

// conform returns b with exactly the reader's schema; it takes b's reference.
func (r *locationReader) conform(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	if bs := b.Schema(); bs == r.schema || bs == r.sameSchema {
		return b, nil
	} else if bs.Equal(r.schema) {
		r.sameSchema = bs
		return b, nil
	}
	defer b.Release()
	if err := r.checkSchema(b.Schema()); err != nil {
		loc := r.locs[r.cur]
		r.closeCurrent()
		return nil, &execop.FetchError{Location: loc, Err: err}
	}
	return array.NewRecordBatch(r.schema, b.Columns(), b.NumRows()), nil
}

// closeCurrent closes the open location, if any.
func (r *locationReader) closeCurrent() {
	if r.remote != nil {
		_ = r.remote.Close() // a fetch's close error changes nothing: its batches were read
		r.remote = nil
	}
	if r.stream != nil {
		r.stream.Release()
		r.stream = nil
	}
	if r.dec != nil {
		r.dec.Release()
		r.dec = nil
	}
	if r.file != nil {
		_ = r.file.Close() // read only
		r.file = nil
	}
	r.cur = -1
}

func (r *locationReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.closeCurrent()
	return nil
}
