package filemap

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// FileMaps keeps local shuffle files mapped across reads, for files read
// again and again: a pinned cache file is read by every query over the
// cache. Mapping a file afresh for every read costs, besides mmap and
// munmap themselves, a page fault on the first touch of every page; a
// mapping kept from one read to the next is faulted in once.
//
// Each entry holds one reference of its mapping (see mapping in
// mapped.go); every Acquire adds one for the caller. Forget drops
// the registry's reference, so the pages are unmapped once the last reader
// and the last batch buffer over them are released; until then a batch read
// before Forget stays valid, even after its file is removed (the mapping
// keeps the inode alive).
//
// An entry is keyed by the cleaned path and remembers the file's identity
// (device, inode, size, mtime): a file replaced under the same path (shuffle
// files are renamed into place) is mapped afresh, and the stale mapping is
// dropped like a forgotten one.
//
// A registered mapping also keeps its batches decoded once for all readers
// (decodedFile, decoded.go): they hold the pages like any batch, and
// are dropped when the registry drops the mapping.
//
// Memory: mapped pages are page cache, not heap, and are not charged to
// any allocator (as for a single read); they count in the process's RSS
// while mapped and touched, and the kernel may reclaim them (clean, file
// backed) under pressure.
//
// The zero value is not usable; use NewFileMaps. Safe for concurrent use.
type FileMaps struct {
	mu     sync.Mutex
	files  map[string]*mappedFile
	closed bool
}

type mappedFile struct {
	id fileIdentity
	m  *mapping
}

// fileIdentity tells one version of a file from another (identityOf).
type fileIdentity struct {
	dev, ino uint64
	size     int64
	mtime    int64
}

// NewFileMaps returns an empty registry.
func NewFileMaps() *FileMaps {
	return &FileMaps{files: map[string]*mappedFile{}}
}

// Acquire returns the mapping of the file at path with one reference for
// the caller, who drops it with release (newMappedMessages takes it over).
// The mapping is shared with every other reader of the same unchanged
// file. It returns nil and no error when the file cannot be mapped (empty,
// no mmap on this platform, or mmap failed): the caller reads it as a
// stream. An error means the file cannot be stat'ed or opened. After
// Close, a mapping is made for the caller alone, as without a registry.
func (fm *FileMaps) Acquire(path string) (*mapping, error) {
	path = filepath.Clean(path)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if m := fm.lookup(path, identityOf(fi)); m != nil {
		return m, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives f
	// The identity of what is mapped, should path have changed since.
	fi, err = f.Stat()
	if err != nil {
		return nil, err
	}
	id := identityOf(fi)
	data, unmap, err := mapFile(f)
	if err != nil || data == nil {
		return nil, nil
	}
	m := newMapping(data, unmap) // the registry's reference (or the caller's after Close)

	fm.mu.Lock()
	if fm.closed {
		fm.mu.Unlock()
		return m, nil
	}
	if e, ok := fm.files[path]; ok {
		if e.id == id { // another reader mapped it meanwhile: share that one
			e.m.retain()
			fm.mu.Unlock()
			m.Release()
			return e.m, nil
		}
		e.m.unregister() // a stale version: its readers keep their references
	}
	m.registered = true // not shared yet: no lock needed
	fm.files[path] = &mappedFile{id: id, m: m}
	m.retain() // the caller's
	fm.mu.Unlock()
	return m, nil
}

// lookup returns the registered mapping of path with a reference for the
// caller if it has identity id, else nil.
func (fm *FileMaps) lookup(path string, id fileIdentity) *mapping {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	e, ok := fm.files[path]
	if !ok || e.id != id {
		return nil
	}
	e.m.retain()
	return e.m
}

// Forget drops the registry's reference of every mapping of a file under
// dir (or of dir itself). Call it before removing the files, so that no
// later Acquire shares the old mapping; the pages go when the last reader
// or batch over them is released.
func (fm *FileMaps) Forget(dir string) {
	dir = filepath.Clean(dir)
	prefix := dir + string(filepath.Separator)
	if dir == string(filepath.Separator) {
		prefix = dir
	}
	var drop []*mapping
	fm.mu.Lock()
	for p, e := range fm.files {
		if p == dir || strings.HasPrefix(p, prefix) {
			drop = append(drop, e.m)
			delete(fm.files, p)
		}
	}
	fm.mu.Unlock()
	for _, m := range drop {
		m.unregister()
	}
}

// Close forgets every mapping; a later Acquire maps for its caller alone.
// Idempotent.
func (fm *FileMaps) Close() {
	fm.mu.Lock()
	fm.closed = true
	files := fm.files
	fm.files = map[string]*mappedFile{}
	fm.mu.Unlock()
	for _, e := range files {
		e.m.unregister()
	}
}

// Len returns the number of files mapped by the registry.
func (fm *FileMaps) Len() int {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	return len(fm.files)
}
