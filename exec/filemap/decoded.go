package filemap

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DecodedFile is a registered mapping's batches, decoded from the IPC
// stream once and then handed to every reader of the file: a pinned cache
// file is read by every query over the cache, and decoding a batch (its
// flatbuffer metadata, an array per column) costs about as much as a
// simple query's work on it. The batches are views over the mapping's
// pages (their body buffers hold references to the mapping), allocated
// from no task's allocator.
//
// refs counts the registry's reference (held while the mapping is
// registered, see FileMaps) and one per reader; the last release releases
// the batches, so the pages are unmapped once nothing else holds them.
// Safe for concurrent use: readers only retain the batches.
type DecodedFile struct {
	Schema  *arrow.Schema
	Batches []arrow.RecordBatch
	refs    atomic.Int64
	// dictKeys are the string arrays registered for DictCodes (dict.go).
	dictKeys []arrow.ArrayData
	// dictCols are its string columns, whose codes unregisterDicts frees.
	dictCols []*dictColumn
	// intKeys are the integer arrays registered for Dependency (dep.go),
	// and deps the dependencies found between its columns.
	intKeys []arrow.ArrayData
	deps    depMemo
	// side holds what readers derive from the file once (Side).
	sideMu sync.Mutex
	side   map[any]any
}

// Side returns the value kept with d under key, made by mk on the first
// call for key: for what a reader derives from the file alone and every
// reader would derive again (the zone maps of its sidecar). mk runs under
// d's lock, at most once per key while d is decoded.
func (d *DecodedFile) Side(key any, mk func() any) any {
	d.sideMu.Lock()
	defer d.sideMu.Unlock()
	if v, ok := d.side[key]; ok {
		return v
	}
	if d.side == nil {
		d.side = map[any]any{}
	}
	v := mk()
	d.side[key] = v
	return v
}

func (d *DecodedFile) retain() { d.refs.Add(1) }

func (d *DecodedFile) Release() {
	if d.refs.Add(-1) == 0 {
		unregisterDicts(d)
		unregisterInts(d)
		releaseBatches(d.Batches)
		d.Batches = nil
	}
}

// Decoded returns m's decoded batches with a reference for the caller,
// decoding them on the first call; nil, nil when m is not registered or
// its batches are not views of its pages (a compressed file, whose
// decompressed batches would hold the file's data again on the heap): the
// caller then reads a stream, as without a registry.
func (m *mapping) Decoded() (*DecodedFile, error) {
	m.decodeMu.Lock()
	defer m.decodeMu.Unlock()
	if !m.registered || m.noShare {
		return nil, nil
	}
	if m.dec == nil {
		d, err := decodeMapping(m)
		if err != nil {
			return nil, err
		}
		if d == nil {
			m.noShare = true
			return nil, nil
		}
		d.refs.Store(1) // the registry's
		registerDicts(d)
		registerInts(d)
		m.dec = d
	}
	m.dec.retain()
	return m.dec, nil
}

// unregister drops the registry's references: to the decoded batches,
// then to the mapping itself.
func (m *mapping) unregister() {
	m.decodeMu.Lock()
	d := m.dec
	m.dec, m.registered = nil, false
	m.decodeMu.Unlock()
	if d != nil {
		d.Release()
	}
	m.Release()
}

// decodeMapping reads every batch of m's stream; nil when a batch holds a
// buffer that is not part of the mapping.
func decodeMapping(m *mapping) (*DecodedFile, error) {
	m.retain() // newMappedStream takes it over
	s, err := NewMappedStream(m, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	d := &DecodedFile{Schema: s.Schema()}
	for s.Next() {
		b := s.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		d.Batches = append(d.Batches, b)
		for _, c := range b.Columns() {
			if !viewsOf(m.data, c.Data()) {
				releaseBatches(d.Batches)
				return nil, nil
			}
		}
	}
	if err := s.Err(); err != nil && !errors.Is(err, io.EOF) {
		releaseBatches(d.Batches)
		return nil, err
	}
	return d, nil
}

// viewsOf reports whether every buffer of d and its children lies within
// data.
func viewsOf(data []byte, d arrow.ArrayData) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	hi := lo + uintptr(len(data))
	for _, b := range d.Buffers() {
		if b == nil || b.Len() == 0 {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b.Bytes())))
		if p < lo || p+uintptr(b.Len()) > hi {
			return false
		}
	}
	for _, c := range d.Children() {
		if !viewsOf(data, c) {
			return false
		}
	}
	return true
}

// releaseBatches drops the file's reference to each decoded batch.
func releaseBatches(bs []arrow.RecordBatch) {
	for _, b := range bs {
		b.Release()
	}
}
