//go:build linux

package filemap

import (
	"os"
	"syscall"
)

// mapFile maps all of f private and copy-on-write. Pages are faulted in
// as they are read, so the columns a query does not use are never read
// (with MAP_POPULATE every query paid for the whole file). It returns nil
// data for an empty file. The mapping outlives f.
func mapFile(f *os.File) ([]byte, func([]byte) error, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return data, syscall.Munmap, nil
}

// identityOf returns what tells one version of a file from another: a file
// rewritten under the same path (shuffle files are renamed into place, so
// a new inode) or changed in place (size, mtime) gets another identity.
func identityOf(fi os.FileInfo) fileIdentity {
	id := fileIdentity{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), st.Ino
	}
	return id
}
