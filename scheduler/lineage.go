package scheduler

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/quiverdb/quiver/cache"
	"github.com/quiverdb/quiver/catalog"
	"github.com/quiverdb/quiver/logical"
	lcodec "github.com/quiverdb/quiver/logical/codec"
)

// Cache freshness (ARCHITECTURE.md §4). Every entry records its lineage, the
// fingerprints of the sources its plan reads (through views and nested
// caches): each file's path, size and modification time, and each memory
// table's version. A query whose plan has Cache nodes first stats every file
// its plan reads, once, in a goroutine (actStat → evStatted), so no stat
// runs on the loop; resolution then compares each materialized entry's
// lineage with the current one. A changed source makes a strict entry
// stale: it is invalidated and rebuilt, and the query's cache event says
// which tables changed. A snapshot entry keeps serving and is marked stale.

// actStat asks the runtime to stat paths for job (at its planGen) and
// answer with evStatted.
type actStat struct {
	jobID string
	gen   int
	paths []string
}

// evStatted carries the fingerprints of a job's files (Path, Size,
// ModTime, Missing; Table is not set).
type evStatted struct {
	jobID string
	gen   int
	files map[string]cache.Source
}

// statFiles fingerprints paths; a file that cannot be stat'ed is Missing
// (its table changed as far as a cache can tell). A Parquet file's
// fingerprint also has its footer's length and row count. It does I/O:
// never call it on the loop.
func statFiles(paths []string) map[string]cache.Source {
	out := make(map[string]cache.Source, len(paths))
	for _, p := range paths {
		out[p] = statFile(p)
	}
	return out
}

// statFile fingerprints one file (its footer only when it can be read).
func statFile(p string) cache.Source {
	st, err := os.Stat(p)
	if err != nil {
		return cache.Source{Path: p, Missing: true}
	}
	src := cache.Source{Path: p, Size: st.Size(), ModTime: st.ModTime().UnixNano()}
	if !st.Mode().IsRegular() {
		return src
	}
	f, err := os.Open(p)
	if err != nil {
		return src
	}
	defer f.Close()
	src.FooterLen, src.Rows = parquetFooter(f, p, st.Size())
	return src
}

// footerMemo keeps, per path, the last footer decoded and its row count:
// every cache hit fingerprints its sources again, and a footer whose bytes
// are those decoded before has the same row count without decoding it.
var footerMemo struct {
	sync.Mutex
	m    map[string]memoFooter
	hits int // footers answered from the memo (for tests)
}

type memoFooter struct {
	footer []byte
	rows   int64
}

// footerMemoLimit bounds the paths footerMemo keeps (it starts afresh past
// it) and maxMemoFooter the bytes of a footer it keeps.
const (
	footerMemoLimit = 4096
	maxMemoFooter   = 4 << 20
)

// memoRows returns the row count of footer when it is the one last
// decoded for path.
func memoRows(path string, footer []byte) (int64, bool) {
	footerMemo.Lock()
	defer footerMemo.Unlock()
	e, ok := footerMemo.m[path]
	if !ok || !bytes.Equal(e.footer, footer) {
		return 0, false
	}
	footerMemo.hits++
	return e.rows, true
}

func memoStore(path string, footer []byte, rows int64) {
	if len(footer) > maxMemoFooter {
		return
	}
	footerMemo.Lock()
	defer footerMemo.Unlock()
	if footerMemo.m == nil || len(footerMemo.m) >= footerMemoLimit {
		footerMemo.m = map[string]memoFooter{}
	}
	footerMemo.m[path] = memoFooter{footer: footer, rows: rows}
}

// parquetMagic ends a Parquet file, after the footer's 4-byte length.
const parquetMagic = "PAR1"

// maxFooterDecode bounds the footer statFile decodes for its row count: a
// longer one (or a length that does not fit the file) gives Rows -1.
const maxFooterDecode = 64 << 20

// parquetFooter returns the footer length and row count of the Parquet file
// f (at path) of size bytes; 0, 0 when f does not end like a Parquet file, and rows
// -1 when its footer does not decode. A malformed footer is a fingerprint
// like any other, never an error or a panic.
func parquetFooter(f *os.File, path string, size int64) (footerLen, rows int64) {
	if size < 12 {
		return 0, 0
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil || string(tail[4:]) != parquetMagic {
		return 0, 0
	}
	footerLen = int64(binary.LittleEndian.Uint32(tail[:4]))
	if footerLen > size-12 || footerLen > maxFooterDecode {
		return footerLen, -1
	}
	buf := make([]byte, footerLen)
	if _, err := f.ReadAt(buf, size-8-footerLen); err != nil {
		return footerLen, -1
	}
	if n, ok := memoRows(path, buf); ok {
		return footerLen, n
	}
	rows = decodeRows(buf)
	memoStore(path, buf, rows)
	return footerLen, rows
}

// decodeRows is the row count footer gives; -1 when it does not decode.
func decodeRows(footer []byte) (rows int64) {
	defer func() {
		if recover() != nil {
			rows = -1
		}
	}()
	md, err := metadata.NewFileMetaData(footer, nil)
	if err != nil {
		return -1
	}
	return md.GetNumRows()
}

// planFiles returns the sorted distinct paths of the files every Scan under
// a Cache node of p reads; nil if p has no Cache node.
func planFiles(p logical.Plan) []string {
	var files []string
	logical.Inspect(p, func(n logical.Plan) bool {
		if c, ok := n.(*logical.Cache); ok {
			logical.Inspect(c.Input, func(m logical.Plan) bool {
				if s, ok := m.(*logical.Scan); ok && s.Table != nil && s.Table.Format != catalog.Memory {
					files = append(files, s.Table.Files...)
				}
				return true
			})
			return false
		}
		return true
	})
	slices.Sort(files)
	return slices.Compact(files)
}

// needStat starts the stat of j's files when its plan has cached inputs
// over files and they were not stat'ed yet; it reports whether j must wait
// for evStatted before resolving its caches.
func (c *core) needStat(j *job) bool {
	if j.plan == nil || j.files != nil {
		return false
	}
	if j.statting {
		return true
	}
	paths := append(planFiles(j.plan), c.globalRefFiles(j)...)
	if len(paths) == 0 {
		return false
	}
	j.statting = true
	c.actions = append(c.actions, actStat{jobID: j.id, gen: j.planGen, paths: paths})
	return true
}

// statted records a job's file fingerprints and starts it.
func (c *core) statted(e evStatted) {
	j := c.jobs[e.jobID]
	if j == nil || j.terminal() || !j.statting {
		return
	}
	j.statting = false
	j.files = e.files
	if j.files == nil {
		j.files = map[string]cache.Source{}
	}
	c.startJob(j)
}

// sourcesOf is the current lineage of Cache node n as job j sees it: every
// file of every file table its input scans (with j's fingerprints) and
// every memory table's version, sorted by table and path.
func (c *core) sourcesOf(j *job, n *logical.Cache) []cache.Source {
	return lineageOf(j.files, n)
}

// lineageOf is Cache node n's lineage with files' fingerprints (a file
// files lacks is Missing).
func lineageOf(files map[string]cache.Source, n *logical.Cache) []cache.Source {
	out := []cache.Source{}
	logical.Inspect(n.Input, func(m logical.Plan) bool {
		s, ok := m.(*logical.Scan)
		if !ok || s.Table == nil {
			return true
		}
		t := s.Table
		if t.Format == catalog.Memory {
			out = append(out, cache.Source{Table: t.Name, Version: t.Version})
			return true
		}
		for _, f := range t.Files {
			src, ok := files[f]
			if !ok {
				src = cache.Source{Path: f, Missing: true}
			}
			src.Table = t.Name
			out = append(out, src)
		}
		return true
	})
	slices.SortFunc(out, func(a, b cache.Source) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return slices.CompactFunc(out, func(a, b cache.Source) bool { return a == b })
}

// contentKey fingerprints what Cache node n would hold: its input plan
// (encoded deterministically) and its sources' fingerprints. Two caches of
// the same plan over the same unchanged files, in any session, have one
// content key and may share one copy. An input over a memory table (its
// data lives in one client's process) or another cache (ids differ per
// session) gets none, and so does one reading no file (nothing worth
// sharing): "" is never shared. A sort_by option (cache.SortByOption)
// counts too: its copy is laid out differently.
func contentKey(n *logical.Cache, srcs []cache.Source) string {
	shareable, files := true, false
	logical.Inspect(n.Input, func(p logical.Plan) bool {
		switch p := p.(type) {
		case *logical.Cache:
			shareable = false
		case *logical.Scan:
			if p.Table == nil || p.Table.Format == catalog.Memory {
				shareable = false
			}
			files = true
		}
		return shareable
	})
	if !shareable || !files {
		return ""
	}
	m, err := lcodec.EncodePlan(n.Input)
	if err != nil {
		return ""
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write(b)
	js, err := json.Marshal(srcs)
	if err != nil {
		return ""
	}
	h.Write(js)
	// The layout is part of what is held: a sort_by cache shares only a
	// copy sorted alike.
	for _, c := range sortByOf(n) {
		fmt.Fprintf(h, "\x00sort_by %q %v", strings.ToLower(c.Name), c.Desc)
	}
	return hex.EncodeToString(h.Sum(nil))
}
