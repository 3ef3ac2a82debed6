package scheduler

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/settings"
)

// SessionStore keeps the scheduler's sessions across a restart (kill -9
// included), in a bbolt database (SessionsFile) in the state directory:
// one record per session, holding what the scheduler knows of it — its id,
// the settings it was opened with, and the session-wide effects of its
// queries' settings (idle timeout, cache quota). The tables, views and
// cache declarations live in the client's catalog and travel with every
// plan, so the scheduler has none of them to keep; the cache entries are the
// cache registry's (cache.Durable).
//
// The event loop only records a change (Put, Remove: a map write under a
// mutex); a writer goroutine writes what changed since its last write in
// one transaction, one small record per changed session. A failed write
// does not fail the session (a lost record only means the client re-opens
// its session after a restart, as after an idle expiry): Err reports it and
// the next change retries.
type SessionStore struct {
	path string
	db   *bbolt.DB

	mu      sync.Mutex
	pending map[string]*sessionRecord // nil value: remove the record
	err     error
	kick    chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup
	closed  sync.Once
	loaded  map[string]sessionRecord // the records found at open
}

// SessionsFile is the name of the sessions database in the state directory.
const SessionsFile = "sessions.db"

var sessionsBucket = []byte("sessions")

// sessionRecord is one session as stored. Settings is the wire form of the
// settings the session was opened with (settings.Values.Wire), decoded and
// checked again on load like any settings off the wire.
type sessionRecord struct {
	Settings    map[string]string `json:"settings,omitempty"`
	Created     time.Time         `json:"created"`
	IdleTimeout *time.Duration    `json:"idle_timeout,omitempty"` // set when the session chose one
	CacheQuota  int64             `json:"cache_quota,omitempty"`
}

// OpenSessionStore opens (creating it if needed) the sessions database in
// dir and reads the sessions it holds; the scheduler given it (Config.
// Sessions) starts with them. A database that cannot be opened or read is
// an I/O error.
func OpenSessionStore(dir string) (*SessionStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, qerr.IOf("scheduler: state dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, SessionsFile)
	db, err := bbolt.Open(path, 0o644, &bbolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, qerr.IOf("scheduler: open session state %s: %w", path, err)
	}
	st := &SessionStore{path: path, db: db, pending: map[string]*sessionRecord{}, loaded: map[string]sessionRecord{},
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(sessionsBucket)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			var rec sessionRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return qerr.IOf("session %q: %w", k, err)
			}
			st.loaded[string(k)] = rec
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, qerr.IOf("scheduler: session state %s: %w", path, err)
	}
	st.wg.Add(1)
	go st.writer()
	return st, nil
}

// put records that session id is now rec (written soon, off the caller).
func (st *SessionStore) put(id string, rec sessionRecord) {
	st.mu.Lock()
	st.pending[id] = &rec
	st.mu.Unlock()
	st.signal()
}

// remove records that session id is gone.
func (st *SessionStore) remove(id string) {
	st.mu.Lock()
	st.pending[id] = nil
	st.mu.Unlock()
	st.signal()
}

func (st *SessionStore) signal() {
	select {
	case st.kick <- struct{}{}:
	default: // a write is due already; it takes this change too
	}
}

// writer writes changes as they come until Close. Owner: SessionStore.
func (st *SessionStore) writer() {
	defer st.wg.Done()
	for {
		select {
		case <-st.kick:
			st.flushSafe()
		case <-st.stop:
			st.flushSafe()
			return
		}
	}
}

func (st *SessionStore) flushSafe() {
	defer func() {
		if r := recover(); r != nil {
			st.mu.Lock()
			st.err = qerr.Internalf("scheduler: write session state %s: panic: %v", st.path, r)
			st.mu.Unlock()
		}
	}()
	st.flush()
}

// flush writes the pending changes in one transaction; on failure they stay
// pending (unless a newer change replaced them) for the next write.
func (st *SessionStore) flush() {
	st.mu.Lock()
	batch := st.pending
	st.pending = map[string]*sessionRecord{}
	st.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	err := st.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(sessionsBucket)
		for id, rec := range batch {
			if rec == nil {
				if err := b.Delete([]byte(id)); err != nil {
					return err
				}
				continue
			}
			v, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(id), v); err != nil {
				return err
			}
		}
		return nil
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		st.err = qerr.IOf("scheduler: write session state %s: %w", st.path, err)
		for id, rec := range batch {
			if _, newer := st.pending[id]; !newer {
				st.pending[id] = rec
			}
		}
		return
	}
	st.err = nil
}

// Sync writes the pending changes now and returns the write's error.
func (st *SessionStore) Sync() error {
	st.flushSafe()
	return st.Err()
}

// Err returns the last write's error, nil once a write succeeded.
func (st *SessionStore) Err() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

// Close writes what is pending, stops the writer and closes the database.
// It is idempotent.
func (st *SessionStore) Close() error {
	var err error
	st.closed.Do(func() {
		close(st.stop)
		st.wg.Wait()
		err = st.Err()
		if cerr := st.db.Close(); err == nil && cerr != nil {
			err = qerr.IOf("scheduler: close session state %s: %w", st.path, cerr)
		}
	})
	return err
}

// restore returns the stored sessions as the loop keeps them, lastUsed now
// (a restart is no client's idleness). A record whose settings no longer
// decode is dropped: its client re-opens the session with its settings.
func (st *SessionStore) restore(now time.Time) map[string]*session {
	out := map[string]*session{}
	for id, rec := range st.loaded {
		vals, err := settings.Decode("scheduler", rec.Settings)
		if err != nil {
			st.remove(id)
			continue
		}
		s := &session{settings: vals, created: rec.Created, lastUsed: now, cacheQuota: rec.CacheQuota}
		if rec.IdleTimeout != nil {
			s.idleTimeout, s.hasIdle = *rec.IdleTimeout, true
		}
		out[id] = s
	}
	return out
}

// record is s as stored.
func (s *session) record() sessionRecord {
	rec := sessionRecord{Settings: s.settings.Wire(), Created: s.created, CacheQuota: s.cacheQuota}
	if s.hasIdle {
		d := s.idleTimeout
		rec.IdleTimeout = &d
	}
	return rec
}
