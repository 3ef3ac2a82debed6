package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Durable is the State that survives a scheduler restart: it behaves exactly
// like Memory and, after every change to a materialized entry (complete,
// removal, hit), rewrites a JSON file holding all materialized entries
// (written to a temporary file in the same directory, synced, then renamed
// over the old one, so a crash leaves the old or the new file, never a torn
// one). NewDurable reloads them. Pending entries, reader counts and Stats
// counters are not persisted: a build in flight at a crash is lost with its
// job, and a reloaded entry whose executor is gone is caught by
// validate-on-read.
//
// A failed write does not fail the operation that caused it (the cache is a
// hint; the in-memory state stays right): Err reports it, and the next change
// or Sync retries.
type Durable struct {
	*Memory
	path string

	wmu     sync.Mutex // serialises writes; guards written and err
	written uint64     // Memory.version of the snapshot on disk
	err     error      // the last write's error
}

var _ State = (*Durable)(nil)

// fileVersion is the format version of the JSON file.
const fileVersion = 1

type fileImage struct {
	Version int         `json:"version"`
	Entries []fileEntry `json:"entries"`
}

type fileEntry struct {
	SessionID string            `json:"session_id"`
	CacheID   string            `json:"cache_id"`
	Name      string            `json:"name,omitempty"`
	JobID     string            `json:"job_id"`
	StageID   int               `json:"stage_id"`
	Schema    []byte            `json:"schema"` // an Arrow IPC stream holding only the schema
	Locations [][]fileLocation  `json:"locations"`
	Disjoint  []int             `json:"disjoint,omitempty"`
	Rows      int64             `json:"rows"`
	Bytes     int64             `json:"bytes"`
	Created   time.Time         `json:"created"`
	LastHit   time.Time         `json:"last_hit"`
	Hits      int64             `json:"hits"`
	Options   map[string]string `json:"options,omitempty"`
	Sources   []Source          `json:"sources,omitempty"`
	Stale     string            `json:"stale,omitempty"`
}

// fileLocation is physical.PartitionLocation with stable JSON names, so the
// file format does not change when a Go field is renamed.
type fileLocation struct {
	JobID           string `json:"job_id"`
	StageID         int    `json:"stage_id"`
	OutputPartition int    `json:"output_partition"`
	MapPartition    int    `json:"map_partition"`
	ExecutorID      string `json:"executor_id"`
	Host            string `json:"host"`
	FlightPort      int    `json:"flight_port"`
	Rows            int64  `json:"rows"`
	Batches         int64  `json:"batches"`
	Bytes           int64  `json:"bytes"`
}

// NewDurable opens the registry persisted at path, reloading its materialized
// entries; a missing file is an empty registry (created at the first change).
// A file that cannot be read or decoded is an I/O error: the caller may
// delete it and start empty, since every entry can be rebuilt.
func NewDurable(path string, opts ...Option) (*Durable, error) {
	m := NewMemory(opts...)
	d := &Durable{Memory: m, path: path}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, qerr.IOf("cache: open durable registry %s: %w", path, err)
	default:
		if err := d.load(data); err != nil {
			return nil, err
		}
	}
	m.onChange = d.persist
	return d, nil
}

// load fills the registry from a file image. Called before d is shared.
func (d *Durable) load(data []byte) error {
	var img fileImage
	if err := json.Unmarshal(data, &img); err != nil {
		return qerr.IOf("cache: read durable registry %s: %w", d.path, err)
	}
	if img.Version != fileVersion {
		return qerr.IOf("cache: read durable registry %s: format version %d, want %d", d.path, img.Version, fileVersion)
	}
	for _, fe := range img.Entries {
		schema, err := decodeSchema(fe.Schema)
		if err != nil {
			return qerr.IOf("cache: read durable registry %s: schema of %s/%s: %w", d.path, fe.SessionID, fe.CacheID, err)
		}
		locs := make([][]physical.PartitionLocation, len(fe.Locations))
		for i, part := range fe.Locations {
			locs[i] = make([]physical.PartitionLocation, len(part))
			for j, l := range part {
				locs[i][j] = physical.PartitionLocation{
					JobID: l.JobID, StageID: l.StageID, OutputPartition: l.OutputPartition, MapPartition: l.MapPartition,
					Executor: physical.ExecutorMeta{ID: l.ExecutorID, Host: l.Host, FlightPort: l.FlightPort},
					Rows:     l.Rows, Batches: l.Batches, Bytes: l.Bytes,
				}
			}
		}
		k := Key{SessionID: fe.SessionID, CacheID: fe.CacheID}
		d.Memory.entries[k] = &entry{Entry: Entry{
			Key: k, Name: fe.Name, State: Materialized, JobID: fe.JobID, StageID: fe.StageID,
			Schema: schema, Locations: locs, Disjoint: fe.Disjoint, Rows: fe.Rows, Bytes: fe.Bytes,
			Created: fe.Created, LastHit: fe.LastHit, Hits: fe.Hits, Options: fe.Options,
			Sources: fe.Sources, Stale: fe.Stale,
		}}
	}
	return nil
}

// persist writes the current materialized entries if they changed since the
// last successful write. Snapshot and write happen under wmu, so writes are
// in version order and an older snapshot never replaces a newer one.
func (d *Durable) persist() {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	version, entries := d.Memory.snapshot()
	if version == d.written && d.err == nil {
		return
	}
	if err := d.write(entries); err != nil {
		d.err = err
		return
	}
	d.written, d.err = version, nil
}

// Sync writes the registry now if a change is not on disk yet (retrying a
// failed write) and returns the write's error.
func (d *Durable) Sync() error {
	d.persist()
	return d.Err()
}

// Err returns the error of the last write, nil once a write succeeded.
func (d *Durable) Err() error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	return d.err
}

// snapshot returns the version and copies of the materialized entries,
// sorted by key.
func (m *Memory) snapshot() (uint64, []Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Entry
	for _, e := range m.entries {
		if e.State == Materialized {
			out = append(out, e.clone())
		}
	}
	sortByKey(out)
	return m.version, out
}

// write replaces the file with entries: temp file, fsync, rename.
func (d *Durable) write(entries []Entry) error {
	img := fileImage{Version: fileVersion, Entries: make([]fileEntry, 0, len(entries))}
	for _, e := range entries {
		schema, err := encodeSchema(e.Schema)
		if err != nil {
			return qerr.Internalf("cache: persist %s: encode schema: %w", keyString(e.Key), err)
		}
		fe := fileEntry{
			SessionID: e.Key.SessionID, CacheID: e.Key.CacheID, Name: e.Name, JobID: e.JobID, StageID: e.StageID,
			Schema: schema, Locations: make([][]fileLocation, len(e.Locations)), Disjoint: e.Disjoint, Rows: e.Rows, Bytes: e.Bytes,
			Created: e.Created, LastHit: e.LastHit, Hits: e.Hits, Options: e.Options,
			Sources: e.Sources, Stale: e.Stale,
		}
		for i, part := range e.Locations {
			fe.Locations[i] = make([]fileLocation, len(part))
			for j, l := range part {
				fe.Locations[i][j] = fileLocation{
					JobID: l.JobID, StageID: l.StageID, OutputPartition: l.OutputPartition, MapPartition: l.MapPartition,
					ExecutorID: l.Executor.ID, Host: l.Executor.Host, FlightPort: l.Executor.FlightPort,
					Rows: l.Rows, Batches: l.Batches, Bytes: l.Bytes,
				}
			}
		}
		img.Entries = append(img.Entries, fe)
	}
	data, err := json.MarshalIndent(img, "", "  ")
	if err != nil {
		return qerr.Internalf("cache: persist registry %s: %w", d.path, err)
	}
	dir, base := filepath.Split(d.path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, base+".tmp-*")
	if err != nil {
		return qerr.IOf("cache: persist registry %s: %w", d.path, err)
	}
	tmpName := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmpName, d.path)
	}
	if err != nil {
		_ = os.Remove(tmpName) // best effort: the write already failed
		return qerr.IOf("cache: persist registry %s: %w", d.path, err)
	}
	return nil
}

// encodeSchema serialises a schema as an Arrow IPC stream with no batches:
// the one encoding that round-trips every Arrow type and metadata.
func encodeSchema(s *arrow.Schema) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeSchema(b []byte) (*arrow.Schema, error) {
	r, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}
