package cache

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// Durable is the State that survives a scheduler restart (kill -9
// included): it behaves exactly like Memory and keeps its materialized
// entries in a bbolt database (StateFile) in a state directory, one record
// per entry. After a change to a materialized entry (complete, removal, a
// hit's counters, a stale mark) a writer goroutine writes what changed in
// one transaction: only the records that differ from what is on disk are
// put or deleted, never the whole registry, and never on the caller's (the
// scheduler loop's) path. NewDurable reloads the entries. Pending entries,
// reader counts and Stats counters are not persisted: a build in flight at
// a crash is lost with its job, and a reloaded entry whose executor is gone
// is caught by validate-on-read.
//
// A failed write does not fail the operation that caused it (the cache is a
// hint; the in-memory state stays right): Err reports it, and the next change
// or Sync retries. Close stops the writer after a last write.
type Durable struct {
	*Memory
	path string
	db   *bbolt.DB

	wmu     sync.Mutex     // serialises writes; guards written and err
	written map[Key][]byte // the records on disk, by key
	err     error          // the last write's error
	kick    chan struct{}  // capacity 1: a change is waiting to be written
	stop    chan struct{}  // closed by Close
	wg      sync.WaitGroup // the writer goroutine
	closed  sync.Once
}

var _ State = (*Durable)(nil)

// StateFile is the name of the database in the state directory.
const StateFile = "cache.db"

// formatVersion is the version of the records' encoding, kept in the meta
// bucket.
const formatVersion = "2"

var (
	entriesBucket = []byte("entries")
	metaBucket    = []byte("meta")
	versionKey    = []byte("version")
)

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
	Content   string            `json:"content_key,omitempty"`
	BuildTime time.Duration     `json:"build_time_ns,omitempty"`
	Heat      float64           `json:"heat,omitempty"`
	HeatAt    time.Time         `json:"heat_at,omitzero"`
	Missing   []int             `json:"missing,omitempty"`
	Repairs   []StageRef        `json:"repairs,omitempty"`
}

// fileLocation is physical.PartitionLocation with stable JSON names, so the
// record format does not change when a Go field is renamed.
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
	// Stats: the file's column statistics (physical.PartitionLocation.Stats).
	Stats []colStats `json:"col_stats,omitempty"`
}

// colStats is physical.ColumnStats with stable JSON names.
type colStats struct {
	Bounded        bool  `json:"bounded,omitempty"`
	Lo             int64 `json:"lo,omitempty"`
	Hi             int64 `json:"hi,omitempty"`
	NoNulls        bool  `json:"no_nulls,omitempty"`
	LongestAtLeast int   `json:"longest_at_least,omitempty"`
	Distinct       int64 `json:"distinct,omitempty"`
}

func toColStats(cs []physical.ColumnStats) []colStats {
	var out []colStats
	for _, c := range cs {
		out = append(out, colStats(c))
	}
	return out
}

func fromColStats(cs []colStats) []physical.ColumnStats {
	var out []physical.ColumnStats
	for _, c := range cs {
		out = append(out, physical.ColumnStats(c))
	}
	return out
}

// NewDurable opens (creating it if needed) the registry kept in dir,
// reloading its materialized entries. A database that cannot be opened or
// decoded is an I/O error: the caller may delete it and start empty, since
// every entry can be rebuilt.
func NewDurable(dir string, opts ...Option) (*Durable, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, qerr.IOf("cache: state dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, StateFile)
	db, err := bbolt.Open(path, 0o644, &bbolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, qerr.IOf("cache: open state %s: %w", path, err)
	}
	d := &Durable{Memory: NewMemory(opts...), path: path, db: db, written: map[Key][]byte{},
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	if err := d.load(); err != nil {
		db.Close()
		return nil, err
	}
	d.Memory.onChange = func() {
		select {
		case d.kick <- struct{}{}:
		default: // a write is already due; it will take this change too
		}
	}
	d.wg.Add(1)
	go d.writer()
	return d, nil
}

// load fills the registry from the database. Called before d is shared.
func (d *Durable) load() error {
	return d.db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return qerr.IOf("cache: state %s: %w", d.path, err)
		}
		if v := meta.Get(versionKey); v == nil {
			if err := meta.Put(versionKey, []byte(formatVersion)); err != nil {
				return qerr.IOf("cache: state %s: %w", d.path, err)
			}
		} else if string(v) != formatVersion {
			return qerr.IOf("cache: state %s: format version %s, want %s", d.path, v, formatVersion)
		}
		b, err := tx.CreateBucketIfNotExists(entriesBucket)
		if err != nil {
			return qerr.IOf("cache: state %s: %w", d.path, err)
		}
		return b.ForEach(func(k, v []byte) error {
			var fe fileEntry
			if err := json.Unmarshal(v, &fe); err != nil {
				return qerr.IOf("cache: state %s: record %q: %w", d.path, k, err)
			}
			e, err := fe.entry()
			if err != nil {
				return qerr.IOf("cache: state %s: record %q: %w", d.path, k, err)
			}
			d.Memory.entries[e.Key] = &entry{Entry: e}
			d.written[e.Key] = slices.Clone(v)
			return nil
		})
	})
}

// entry decodes a record.
func (fe fileEntry) entry() (Entry, error) {
	schema, err := decodeSchema(fe.Schema)
	if err != nil {
		return Entry{}, err
	}
	locs := make([][]physical.PartitionLocation, len(fe.Locations))
	for i, part := range fe.Locations {
		locs[i] = make([]physical.PartitionLocation, len(part))
		for j, l := range part {
			locs[i][j] = physical.PartitionLocation{
				JobID: l.JobID, StageID: l.StageID, OutputPartition: l.OutputPartition, MapPartition: l.MapPartition,
				Executor: physical.ExecutorMeta{ID: l.ExecutorID, Host: l.Host, FlightPort: l.FlightPort},
				Rows:     l.Rows, Batches: l.Batches, Bytes: l.Bytes, Stats: fromColStats(l.Stats),
			}
		}
	}
	k := Key{SessionID: fe.SessionID, CacheID: fe.CacheID}
	return Entry{
		Key: k, Name: fe.Name, State: Materialized, JobID: fe.JobID, StageID: fe.StageID,
		Schema: schema, Locations: locs, Disjoint: fe.Disjoint, Rows: fe.Rows, Bytes: fe.Bytes,
		Created: fe.Created, LastHit: fe.LastHit, Hits: fe.Hits, Options: fe.Options,
		Sources: fe.Sources, Stale: fe.Stale, ContentKey: fe.Content,
		BuildTime: fe.BuildTime, Heat: fe.Heat, HeatAt: fe.HeatAt,
		Missing: fe.Missing, Repairs: fe.Repairs,
	}, nil
}

// writer writes changes as they come until Close. Owner: Durable.
func (d *Durable) writer() {
	defer d.wg.Done()
	for {
		select {
		case <-d.kick:
			d.persistSafe()
		case <-d.stop:
			d.persistSafe()
			return
		}
	}
}

// persistSafe is persist with a panic turned into the write's error.
func (d *Durable) persistSafe() {
	defer func() {
		if r := recover(); r != nil {
			d.wmu.Lock()
			d.err = qerr.Internalf("cache: persist registry %s: panic: %v", d.path, r)
			d.wmu.Unlock()
		}
	}()
	d.persist()
}

// persist writes the records that differ from what is on disk, in one
// transaction; nothing when nothing differs.
func (d *Durable) persist() {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	_, entries := d.Memory.snapshot()
	enc := make(map[Key][]byte, len(entries))
	for _, e := range entries {
		b, err := encodeEntry(e)
		if err != nil {
			d.err = err
			return
		}
		enc[e.Key] = b
	}
	changed := false
	for k, v := range enc {
		if !bytes.Equal(d.written[k], v) {
			changed = true
		}
	}
	for k := range d.written {
		if _, ok := enc[k]; !ok {
			changed = true
		}
	}
	if !changed {
		d.err = nil
		return
	}
	err := d.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(entriesBucket)
		for k, v := range enc {
			if !bytes.Equal(d.written[k], v) {
				if err := b.Put(recordKey(k), v); err != nil {
					return err
				}
			}
		}
		for k := range d.written {
			if _, ok := enc[k]; !ok {
				if err := b.Delete(recordKey(k)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		d.err = qerr.IOf("cache: persist registry %s: %w", d.path, err)
		return
	}
	d.written, d.err = enc, nil
}

func recordKey(k Key) []byte { return []byte(k.SessionID + "\x00" + k.CacheID) }

// Sync writes the registry now if a change is not on disk yet (retrying a
// failed write) and returns the write's error.
func (d *Durable) Sync() error {
	d.persistSafe()
	return d.Err()
}

// Err returns the error of the last write, nil once a write succeeded.
func (d *Durable) Err() error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	return d.err
}

// Close writes what is pending, stops the writer and closes the database.
// It is idempotent; the registry must not be used after it.
func (d *Durable) Close() error {
	var err error
	d.closed.Do(func() {
		close(d.stop)
		d.wg.Wait()
		err = d.Err()
		if cerr := d.db.Close(); err == nil && cerr != nil {
			err = qerr.IOf("cache: close state %s: %w", d.path, cerr)
		}
	})
	return err
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

// encodeEntry encodes one materialized entry as its record.
func encodeEntry(e Entry) ([]byte, error) {
	schema, err := encodeSchema(e.Schema)
	if err != nil {
		return nil, qerr.Internalf("cache: persist %s: encode schema: %w", keyString(e.Key), err)
	}
	fe := fileEntry{
		SessionID: e.Key.SessionID, CacheID: e.Key.CacheID, Name: e.Name, JobID: e.JobID, StageID: e.StageID,
		Schema: schema, Locations: make([][]fileLocation, len(e.Locations)), Disjoint: e.Disjoint, Rows: e.Rows, Bytes: e.Bytes,
		Created: e.Created, LastHit: e.LastHit, Hits: e.Hits, Options: e.Options,
		Sources: e.Sources, Stale: e.Stale, Content: e.ContentKey,
		BuildTime: e.BuildTime, Heat: e.Heat, HeatAt: e.HeatAt,
		Missing: e.Missing, Repairs: e.Repairs,
	}
	for i, part := range e.Locations {
		fe.Locations[i] = make([]fileLocation, len(part))
		for j, l := range part {
			fe.Locations[i][j] = fileLocation{
				JobID: l.JobID, StageID: l.StageID, OutputPartition: l.OutputPartition, MapPartition: l.MapPartition,
				ExecutorID: l.Executor.ID, Host: l.Executor.Host, FlightPort: l.Executor.FlightPort,
				Rows: l.Rows, Batches: l.Batches, Bytes: l.Bytes, Stats: toColStats(l.Stats),
			}
		}
	}
	b, err := json.Marshal(fe)
	if err != nil {
		return nil, qerr.Internalf("cache: persist %s: %w", keyString(e.Key), err)
	}
	return b, nil
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
