package filemap

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/memcheck"
)

var mapsTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "s", Type: arrow.BinaryTypes.String},
}, nil)

func skipUnlessMmap(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("files are mapped only on linux")
	}
}

// writeIPCFile writes an IPC stream of one batch with keys base..base+n-1
// to a temporary file and renames it to path, as the shuffle writer does.
func writeIPCFile(t *testing.T, mem memory.Allocator, path string, base, n int, opts ...ipc.Option) {
	t.Helper()
	b := array.NewRecordBuilder(mem, mapsTestSchema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(base + i))
		b.Field(1).(*array.StringBuilder).Append("row-" + string(rune('a'+i%26)))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	w := ipc.NewWriter(f, append([]ipc.Option{ipc.WithSchema(mapsTestSchema), ipc.WithAllocator(mem)}, opts...)...)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		t.Fatal(err)
	}
}

// readFirst reads the first batch over m (taking the caller's reference to
// m) and returns it with a reference for the caller; the reader is released.
func readFirst(t *testing.T, m *mapping, mem memory.Allocator) arrow.RecordBatch {
	t.Helper()
	s, err := NewMappedStream(m, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	if !s.Next() {
		t.Fatalf("no batch: %v", s.Err())
	}
	b := s.RecordBatch()
	b.Retain()
	return b
}

func firstKey(b arrow.RecordBatch) int64 { return b.Column(0).(*array.Int64).Value(0) }

func newMapsTest(t *testing.T) (*FileMaps, *memory.CheckedAllocator) {
	skipUnlessMmap(t)
	mem := memcheck.New(t)
	fm := NewFileMaps()
	t.Cleanup(fm.Close)
	return fm, mem
}

func TestFileMapsReusesUnchangedFile(t *testing.T) {
	fm, mem := newMapsTest(t)
	path := filepath.Join(t.TempDir(), "job", "1", "0", "data-0.arrow")
	writeIPCFile(t, mem, path, 100, 50)
	m1, err := fm.Acquire(path)
	if err != nil || m1 == nil {
		t.Fatalf("acquire: %v, %v", m1, err)
	}
	m2, err := fm.Acquire(filepath.Join(filepath.Dir(path), ".", "data-0.arrow")) // same file, uncleaned path
	if err != nil {
		t.Fatal(err)
	}
	if m1 != m2 {
		t.Fatal("second acquire of an unchanged file mapped it again")
	}
	if got := m1.refs.Load(); got != 3 {
		t.Errorf("refs %d, want 3 (registry and two readers)", got)
	}
	b := readFirst(t, m1, mem)
	if firstKey(b) != 100 {
		t.Errorf("first key %d, want 100", firstKey(b))
	}
	b.Release()
	m2.Release()
	if got := m1.refs.Load(); got != 1 || m1.closed.Load() {
		t.Errorf("after readers are done: refs %d, unmapped %v; want the registry's reference only", got, m1.closed.Load())
	}
	if fm.Len() != 1 {
		t.Errorf("registry holds %d files, want 1", fm.Len())
	}
}

func TestFileMapsRemapsReplacedFile(t *testing.T) {
	fm, mem := newMapsTest(t)
	path := filepath.Join(t.TempDir(), "data-0.arrow")
	writeIPCFile(t, mem, path, 100, 50)
	old, err := fm.Acquire(path)
	if err != nil || old == nil {
		t.Fatalf("acquire: %v, %v", old, err)
	}
	oldBatch := readFirst(t, old, mem) // holds the old mapping
	writeIPCFile(t, mem, path, 7, 20)  // a new inode under the same path
	m, err := fm.Acquire(path)
	if err != nil || m == nil {
		t.Fatalf("acquire: %v, %v", m, err)
	}
	if m == old {
		t.Fatal("a replaced file shares the old mapping")
	}
	b := readFirst(t, m, mem)
	defer b.Release()
	if firstKey(b) != 7 || b.NumRows() != 20 {
		t.Errorf("read %d rows from key %d, want 20 from 7", b.NumRows(), firstKey(b))
	}
	if old.closed.Load() {
		t.Fatal("old mapping unmapped while a batch over it is held")
	}
	if firstKey(oldBatch) != 100 {
		t.Errorf("old batch first key %d, want 100", firstKey(oldBatch))
	}
	oldBatch.Release()
	if !old.closed.Load() {
		t.Errorf("old mapping still mapped (refs %d) after its last batch was released", old.refs.Load())
	}
	if fm.Len() != 1 {
		t.Errorf("registry holds %d files, want 1", fm.Len())
	}
}

func TestFileMapsForget(t *testing.T) {
	fm, mem := newMapsTest(t)
	root := t.TempDir()
	stage1 := filepath.Join(root, "job", "1")
	stage10 := filepath.Join(root, "job", "10") // a sibling sharing the prefix "1"
	p1 := filepath.Join(stage1, "0", "data-0.arrow")
	p10 := filepath.Join(stage10, "0", "data-0.arrow")
	writeIPCFile(t, mem, p1, 1, 10)
	writeIPCFile(t, mem, p10, 10, 10)

	m1, err := fm.Acquire(p1)
	if err != nil || m1 == nil {
		t.Fatalf("acquire: %v, %v", m1, err)
	}
	b := readFirst(t, m1, mem) // a batch read before Forget
	m10, err := fm.Acquire(p10)
	if err != nil || m10 == nil {
		t.Fatalf("acquire: %v, %v", m10, err)
	}
	m10.Release()

	fm.Forget(stage1)
	if err := os.RemoveAll(stage1); err != nil {
		t.Fatal(err)
	}
	if fm.Len() != 1 {
		t.Errorf("registry holds %d files after forgetting one of two, want 1", fm.Len())
	}
	if m1.closed.Load() {
		t.Fatal("unmapped while a batch over it is held")
	}
	// The batch stays valid after Forget and removal until released.
	if firstKey(b) != 1 || b.NumRows() != 10 || b.Column(1).(*array.String).Value(9) != "row-j" {
		t.Errorf("batch changed after forget: %d rows from key %d", b.NumRows(), firstKey(b))
	}
	b.Release()
	if !m1.closed.Load() {
		t.Errorf("still mapped after Forget and the last release (refs %d)", m1.refs.Load())
	}
	if m10.closed.Load() {
		t.Error("forgetting stage 1 unmapped stage 10")
	}
	if _, err := fm.Acquire(p1); !os.IsNotExist(err) {
		t.Errorf("acquire of a removed file: %v, want not exist", err)
	}

	fm.Close()
	if !m10.closed.Load() || fm.Len() != 0 {
		t.Errorf("after Close: unmapped %v, %d files", m10.closed.Load(), fm.Len())
	}
	// After Close a mapping is the caller's alone.
	writeIPCFile(t, mem, p1, 5, 5)
	m, err := fm.Acquire(p1)
	if err != nil || m == nil {
		t.Fatalf("acquire after close: %v, %v", m, err)
	}
	m.Release()
	if !m.closed.Load() || fm.Len() != 0 {
		t.Errorf("a mapping made after Close outlived its reader or was registered")
	}
}

func TestFileMapsEmptyFileNotMapped(t *testing.T) {
	fm, _ := newMapsTest(t)
	path := filepath.Join(t.TempDir(), "empty.arrow")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := fm.Acquire(path)
	if m != nil || err != nil {
		t.Errorf("empty file: %v, %v; want nil, nil (read as a stream)", m, err)
	}
}

func TestFileMapsConcurrent(t *testing.T) {
	fm, mem := newMapsTest(t)
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	for i, p := range paths {
		writeIPCFile(t, mem, p, i*1000, 100)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() { // owner: the test; exits after its reads
			defer wg.Done()
			for i := range 50 {
				m, err := fm.Acquire(paths[(g+i)%2])
				if err != nil {
					errs <- err
					return
				}
				s, err := NewMappedStream(m, mem)
				if err != nil {
					errs <- err
					return
				}
				for s.Next() {
				}
				s.Release()
				if i%17 == 0 {
					fm.Forget(dir)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	fm.Close()
}

// A registered file's batches are decoded once and shared: a second
// reader gets the same batches; a reader's reference keeps them (and the
// pages) after Forget, and the last release unmaps. A mapping made after
// Close is not registered and has no shared batches.
func TestFileMapsDecodedBatches(t *testing.T) {
	fm, mem := newMapsTest(t)
	p := filepath.Join(t.TempDir(), "job", "1", "0", "data-0.arrow")
	writeIPCFile(t, mem, p, 7, 10)
	m, err := fm.Acquire(p)
	if err != nil || m == nil {
		t.Fatalf("acquire: %v, %v", m, err)
	}
	d1, err := m.Decoded()
	if err != nil || d1 == nil {
		t.Fatalf("decoded: %v, %v", d1, err)
	}
	m.Release()
	m2, err := fm.Acquire(p)
	if err != nil || m2 != m {
		t.Fatalf("second acquire: %v, %v", m2, err)
	}
	d2, err := m2.Decoded()
	if err != nil || d2 != d1 {
		t.Fatalf("second reader decoded afresh: %p vs %p (%v)", d2, d1, err)
	}
	m2.Release()
	d2.Release()
	if len(d1.Batches) != 1 || firstKey(d1.Batches[0]) != 7 || d1.Batches[0].NumRows() != 10 {
		t.Fatalf("decoded %d batches", len(d1.Batches))
	}
	fm.Forget(filepath.Dir(p))
	if m.closed.Load() {
		t.Fatal("unmapped while a reader holds the decoded batches")
	}
	if firstKey(d1.Batches[0]) != 7 {
		t.Error("batch changed after forget")
	}
	d1.Release()
	if !m.closed.Load() {
		t.Errorf("still mapped after Forget and the last reader (refs %d)", m.refs.Load())
	}
	fm.Close()
	m3, err := fm.Acquire(p)
	if err != nil || m3 == nil {
		t.Fatalf("acquire after close: %v, %v", m3, err)
	}
	if d, err := m3.Decoded(); d != nil || err != nil {
		t.Errorf("a mapping made after Close has shared batches: %v, %v", d, err)
	}
	m3.Release()
}

// A compressed file's batches are decompressed onto the heap, not views of
// the pages: they are not kept, and readers stream the file as before.
func TestFileMapsCompressedNotDecoded(t *testing.T) {
	fm, mem := newMapsTest(t)
	p := filepath.Join(t.TempDir(), "job", "1", "0", "data-0.arrow")
	writeIPCFile(t, mem, p, 3, 10, ipc.WithLZ4())
	m, err := fm.Acquire(p)
	if err != nil || m == nil {
		t.Fatalf("acquire: %v, %v", m, err)
	}
	if d, err := m.Decoded(); d != nil || err != nil {
		t.Fatalf("compressed file decoded for sharing: %v, %v", d, err)
	}
	b := readFirst(t, m, mem) // takes over m's reference
	if firstKey(b) != 3 || b.NumRows() != 10 {
		t.Errorf("streamed %d rows from key %d", b.NumRows(), firstKey(b))
	}
	b.Release()
	fm.Close()
}
