package scheduler

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quiverdb/quiver/settings"
)

// TestSessionStoreRestart: a scheduler given a session store starts with
// the sessions the previous one kept — their settings and the session-wide
// effects of their queries' settings — and a closed session is gone.
func TestSessionStoreRestart(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenSessionStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{Sessions: st})
	opened, err := settings.Decode("test", map[string]string{"quiver.target_partitions": "3"})
	if err != nil {
		t.Fatal(err)
	}
	h.send(evCreateSession{id: "kept", settings: opened, reply: make(chan struct{}, 1)})
	h.send(evCreateSession{id: "closed", reply: make(chan struct{}, 1)})
	h.send(evSubmit{jobID: "q", session: "kept", plan: memScan(1), reply: make(chan error, 1),
		settings: map[string]string{"quiver.session.idle_timeout": "90s", "quiver.cache.max_bytes": "1MiB"}})
	h.send(evCloseSession{id: "closed", reply: make(chan struct{}, 1)})
	// The loop only recorded the changes; the writer writes them.
	if err := st.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, err := OpenSessionStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	h2 := newHarness(t, Config{Sessions: st2})
	s := h2.c.sessions["kept"]
	if s == nil {
		t.Fatalf("after the restart the session is unknown; sessions %v", h2.c.sessions)
	}
	if v, _ := s.settings.Lookup(settings.TargetPartitions); v != "3" {
		t.Errorf("settings after the restart: target partitions %q, want 3", v)
	}
	if !s.hasIdle || s.idleTimeout != 90*time.Second || s.cacheQuota != 1<<20 {
		t.Errorf("session after the restart: idle %v (%v), quota %d", s.idleTimeout, s.hasIdle, s.cacheQuota)
	}
	if _, ok := h2.c.sessions["closed"]; ok {
		t.Error("a closed session came back after the restart")
	}
	// A restart is no client's idleness: the idle clock starts again.
	if !s.lastUsed.Equal(h2.clock.now()) {
		t.Errorf("lastUsed %v, want the restart's %v", s.lastUsed, h2.clock.now())
	}
}

// TestSessionStoreBadFile: a sessions file that is not a database is a
// clear error, not a crash or an empty start that would hide it.
func TestSessionStoreBadFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SessionsFile), []byte("not a bbolt database, just text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := OpenSessionStore(dir); err == nil {
		st.Close()
		t.Fatal("opened a corrupt sessions file")
	}
}
