package quiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/rpc"
	"google.golang.org/grpc"
)

// flakyUncache passes every call to the scheduler but Uncache, which it
// can fail: with lost set the scheduler acts and the reply is lost, without
// it the call never arrives.
type flakyUncache struct {
	rpc.SchedulerServiceClient
	mu   sync.Mutex
	pass int // Uncache calls to let through before failing; < 0: all
	lost bool
}

func (f *flakyUncache) set(pass int, lost bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pass, f.lost = pass, lost
}

func (f *flakyUncache) Uncache(ctx context.Context, in *rpc.UncacheRequest, opts ...grpc.CallOption) (*rpc.UncacheResponse, error) {
	f.mu.Lock()
	fail := f.pass == 0
	if f.pass > 0 {
		f.pass--
	}
	lost := f.lost
	f.mu.Unlock()
	if !fail {
		return f.SchedulerServiceClient.Uncache(ctx, in, opts...)
	}
	if lost {
		f.SchedulerServiceClient.Uncache(ctx, in, opts...)
	}
	return nil, errors.New("injected: connection reset")
}

// newFlakySession is a standalone session whose Uncache calls f decides,
// with table src of the values 1, 2, 3 in the CSV file at path.
func newFlakySession(t *testing.T) (s *Session, f *flakyUncache, path string) {
	t.Helper()
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	s, err := NewSession(ctx, WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		mem.AssertSize(t, 0)
	})
	f = &flakyUncache{SchedulerServiceClient: s.remote.client, pass: -1}
	s.remote.client = f
	path = filepath.Join(t.TempDir(), "src.csv")
	if err := os.WriteFile(path, []byte("v\n1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSQL(t, s, fmt.Sprintf("CREATE EXTERNAL TABLE src (v BIGINT) STORED AS CSV LOCATION '%s'", path))
	return s, f, path
}

func mustSQL(t *testing.T, s *Session, q string) {
	t.Helper()
	if _, err := s.SQL(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// registryIDs lists the cache ids the scheduler holds for s.
func registryIDs(t *testing.T, s *Session) []string {
	t.Helper()
	resp, err := s.remote.client.ListCaches(context.Background(), &rpc.ListCachesRequest{SessionId: s.id})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range resp.Caches {
		ids = append(ids, c.CacheId)
	}
	slices.Sort(ids)
	return ids
}

// checkAgree fails unless the names SHOW CACHES gives are exactly the
// catalog's, each with the catalog's id, and every entry the scheduler
// holds for a name the catalog names under that id (or is an orphan the
// session is removing).
func checkAgree(t *testing.T, s *Session) {
	t.Helper()
	infos, err := s.Caches(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cat := map[string]string{}
	var want []string
	for _, ct := range s.cat.AllCached() {
		cat[ct.CacheID] = ct.Name
		want = append(want, ct.Name+"="+ct.CacheID)
	}
	var got []string
	for _, c := range infos {
		if c.Name != "" {
			got = append(got, c.Name+"="+c.CacheID)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("SHOW CACHES names %v, the catalog %v", got, want)
	}
	orphans := s.orphanSet()
	for _, id := range registryIDs(t, s) {
		if _, ok := cat[id]; !ok && !orphans[id] {
			t.Errorf("the scheduler holds entry %s, which the catalog does not name", id)
		}
	}
}

// TestUncacheLostReply: UNCACHE ... CASCADE whose second removal the
// scheduler performs but whose reply is lost. The statement fails, and yet
// both names are gone: the catalog never keeps a name whose entry the
// scheduler retired (it used to keep base, which then never cached again
// and refused CACHE TABLE base).
func TestUncacheLostReply(t *testing.T) {
	s, f, _ := newFlakySession(t)
	mustSQL(t, s, "CACHE TABLE base AS SELECT v FROM src WHERE v > 1")
	mustSQL(t, s, "CACHE TABLE top AS SELECT max(v) AS m FROM base")
	checkAgree(t, s)

	f.set(1, true)
	_, err := s.SQL(context.Background(), "UNCACHE TABLE base CASCADE")
	if err == nil {
		t.Fatal("UNCACHE with a lost reply succeeded")
	}
	f.set(-1, false)
	checkAgree(t, s)
	if names := s.cat.AllCached(); len(names) != 0 {
		t.Errorf("%d names still cached after UNCACHE CASCADE", len(names))
	}
	if ids := registryIDs(t, s); len(ids) != 0 {
		t.Errorf("entries left on the scheduler: %v", ids)
	}
	// The name is free again, and caches again.
	mustSQL(t, s, "CACHE TABLE base AS SELECT v FROM src WHERE v > 1")
	checkAgree(t, s)
	infos, err := s.Caches(context.Background())
	if err != nil || len(infos) != 1 || infos[0].Name != "base" || infos[0].State != "materialized" {
		t.Fatalf("after caching base again: %+v, %v", infos, err)
	}
}

// TestUncacheSchedulerDown: the scheduler never hears of an UNCACHE. The
// name goes anyway, the entry left behind is not shown under any name, and
// the session removes it with its next cache statement once the scheduler
// answers.
func TestUncacheSchedulerDown(t *testing.T) {
	s, f, _ := newFlakySession(t)
	mustSQL(t, s, "CACHE TABLE c AS SELECT v FROM src")
	f.set(0, false)
	if _, err := s.SQL(context.Background(), "UNCACHE TABLE c"); err == nil {
		t.Fatal("UNCACHE with the scheduler down succeeded")
	}
	checkAgree(t, s)
	if infos, err := s.Caches(context.Background()); err != nil || len(infos) != 0 {
		t.Errorf("SHOW CACHES after the failed UNCACHE: %+v, %v; want nothing", infos, err)
	}
	f.set(-1, false)
	checkAgree(t, s)
	if ids := registryIDs(t, s); len(ids) != 0 {
		t.Errorf("the orphan was not removed: %v", ids)
	}
}

// TestCacheReplacedOrphan: CREATE OR REPLACE of a cached table's source
// declares the cache again under a new id; when the old entry's removal
// fails, SHOW CACHES still shows the name once, with the catalog's id (it
// used to show it twice, the old entry by the scheduler's label), and the
// old entry goes once the scheduler answers.
func TestCacheReplacedOrphan(t *testing.T) {
	s, f, path := newFlakySession(t)
	mustSQL(t, s, "CACHE TABLE c AS SELECT v FROM src")
	old, _ := s.cat.Cached("c")
	f.set(0, false)
	mustSQL(t, s, fmt.Sprintf("CREATE OR REPLACE EXTERNAL TABLE src (v BIGINT) STORED AS CSV LOCATION '%s'", path))
	cur, ok := s.cat.Cached("c")
	if !ok || cur.CacheID == old.CacheID {
		t.Fatalf("c after its source was replaced: %+v, %v; want a new declaration", cur, ok)
	}
	checkAgree(t, s)
	infos, err := s.Caches(context.Background())
	if err != nil || len(infos) != 1 || infos[0].Name != "c" || infos[0].CacheID != cur.CacheID {
		t.Fatalf("SHOW CACHES after the replace: %+v, %v; want c once, id %s", infos, err, cur.CacheID)
	}
	f.set(-1, false)
	checkAgree(t, s)
	if ids := registryIDs(t, s); slices.Contains(ids, old.CacheID) {
		t.Errorf("the old entry %s is still on the scheduler", old.CacheID)
	}
}

// TestCacheBuildFails: CACHE TABLE whose build fails leaves no name, no
// view and no entry, even when the clean-up cannot reach the scheduler at
// first; the name caches afterwards.
func TestCacheBuildFails(t *testing.T) {
	s, f, _ := newFlakySession(t)
	f.set(0, false)
	if _, err := s.SQL(context.Background(), "CACHE TABLE bad AS SELECT 10 / (v - 2) AS x FROM src"); err == nil {
		t.Fatal("a failing build cached")
	}
	checkAgree(t, s)
	if _, ok := s.cat.Cached("bad"); ok {
		t.Error("the failed cache kept its name")
	}
	if _, ok := s.cat.View("bad"); ok {
		t.Error("the failed cache kept its view")
	}
	f.set(-1, false)
	checkAgree(t, s)
	if ids := registryIDs(t, s); len(ids) != 0 {
		t.Errorf("entries left on the scheduler: %v", ids)
	}
	mustSQL(t, s, "CACHE TABLE bad AS SELECT v FROM src")
	checkAgree(t, s)
}

// TestCacheNamesTwoSessions: two sessions on one scheduler cache the same
// data under different names (one copy, shared); each shows only its own
// name, and uncaching in one leaves the other's name and entry as they were.
func TestCacheNamesTwoSessions(t *testing.T) {
	s1, _, path := newFlakySession(t)
	ctx := context.Background()
	s2, err := Connect(ctx, s1.remote.conn.Target())
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	mustSQL(t, s2, fmt.Sprintf("CREATE EXTERNAL TABLE src (v BIGINT) STORED AS CSV LOCATION '%s'", path))
	mustSQL(t, s1, "CACHE TABLE mine AS SELECT v FROM src WHERE v > 1")
	mustSQL(t, s2, "CACHE TABLE yours AS SELECT v FROM src WHERE v > 1")
	checkAgree(t, s1)
	checkAgree(t, s2)
	names := func(s *Session) string {
		infos, err := s.Caches(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range infos {
			out = append(out, c.Name+":"+c.State)
		}
		return strings.Join(out, ",")
	}
	if got := names(s1); got != "mine:materialized" {
		t.Errorf("session 1 shows %s", got)
	}
	if got := names(s2); got != "yours:materialized" {
		t.Errorf("session 2 shows %s", got)
	}
	mustSQL(t, s1, "UNCACHE TABLE mine")
	checkAgree(t, s1)
	checkAgree(t, s2)
	if got := names(s2); got != "yours:materialized" {
		t.Errorf("session 2 after session 1 uncached: %s", got)
	}
}
