package filemap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Reading a local shuffle file by mapping it into memory.
//
// A shuffle file (above all a pinned cache file, read by every query over
// the cache) is read whole, once per read. Through an io.Reader each
// message body is copied from the page cache into a freshly zeroed buffer;
// mapped, an uncompressed body's column buffers are the file's pages
// themselves (zero-copy, no zeroing), and a compressed body is decoded
// straight from them.
//
// Lifetime: decoded batches may outlive the reader (ownership of a batch
// moves to the caller), and their buffers point into the mapping. So the
// mapping is reference counted: the reader holds one reference and every
// message body one more; the body's memory.Buffer has the mapping as its
// "allocator", whose Free drops the reference. The pages are unmapped when
// the reader is closed and the last batch buffer sliced from a body is
// released. A batch that is never released keeps its file mapped (it would
// leak its memory anyway).
//
// The mapping is private and read-only: an operator that wrongly wrote
// into a buffer it received faults at once, and the file never changes.
//
// Memory accounting: mapped pages are the kernel's page cache, not heap;
// they are not charged to the task's allocator (as they would not be for
// any other file read through the page cache). Decompressed buffers are.

// mapping is a mapped file shared by a reader and the buffers of the
// batches it decoded. It implements memory.Allocator only so that a
// memory.Buffer over its bytes calls Free (drop a reference) when the
// buffer's own count reaches zero; it never allocates.
type mapping struct {
	data   []byte
	refs   atomic.Int64
	unmap  func([]byte) error
	closed atomic.Bool

	decodeMu   sync.Mutex
	registered bool         // a FileMaps entry holds it (see decoded)
	dec        *DecodedFile // decoded batches, once a reader asked
	noShare    bool         // its batches are not views of it: readers stream
}

func newMapping(data []byte, unmap func([]byte) error) *mapping {
	m := &mapping{data: data, unmap: unmap}
	m.refs.Store(1) // the reader's
	return m
}

func (m *mapping) retain() { m.refs.Add(1) }

func (m *mapping) Release() {
	if m.refs.Add(-1) == 0 && m.closed.CompareAndSwap(false, true) {
		_ = m.unmap(m.data) // nothing refers to the pages any more
		m.data = nil
	}
}

func (m *mapping) Allocate(int) []byte {
	panic("exec: a mapped shuffle file allocates no memory")
}

func (m *mapping) Reallocate(int, []byte) []byte {
	panic("exec: a mapped shuffle file cannot resize a buffer")
}

// Free is called once per body buffer, when its count reaches zero.
func (m *mapping) Free([]byte) { m.Release() }

// mappedMessages is an ipc.MessageReader over the bytes of an Arrow IPC
// stream held by a mapping: message bodies are buffers over the mapping's
// bytes, not copies. Not safe for concurrent use (nor is ipc.Reader).
type mappedMessages struct {
	m     *mapping
	pos   int
	refs  atomic.Int64
	msg   *ipc.Message // the last message returned, released by the next call
	empty *memory.Buffer
}

func newMappedMessages(m *mapping) *mappedMessages {
	r := &mappedMessages{m: m, empty: memory.NewBufferBytes(nil)}
	r.refs.Store(1)
	return r
}

func (r *mappedMessages) Retain() { r.refs.Add(1) }

// Release drops a reference; the last one releases the current message
// and the reader's reference to the mapping.
func (r *mappedMessages) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	r.dropMsg()
	r.m.Release()
}

func (r *mappedMessages) dropMsg() {
	if r.msg != nil {
		r.msg.Release()
		r.msg = nil
	}
}

// Message returns the next message, valid until the next call; io.EOF at
// the end-of-stream marker or the end of the file (at a message boundary).
func (r *mappedMessages) Message() (msg *ipc.Message, err error) {
	defer func() {
		if p := recover(); p != nil { // a corrupt flatbuffer panics inside arrow
			msg, err = nil, fmt.Errorf("arrow ipc: invalid message metadata: %v", p)
		}
	}()
	r.dropMsg()
	data := r.m.data
	if r.pos == len(data) {
		return nil, io.EOF
	}
	if len(data)-r.pos < 4 {
		return nil, errors.New("arrow ipc: truncated message header")
	}
	metaLen := int64(binary.LittleEndian.Uint32(data[r.pos:]))
	r.pos += 4
	switch {
	case metaLen == 0: // end-of-stream marker (pre-0.15 form)
		return nil, io.EOF
	case metaLen == 0xFFFFFFFF: // continuation token, then the length
		if len(data)-r.pos < 4 {
			return nil, errors.New("arrow ipc: truncated message length")
		}
		metaLen = int64(binary.LittleEndian.Uint32(data[r.pos:]))
		r.pos += 4
		if metaLen == 0 {
			return nil, io.EOF
		}
	}
	if metaLen < 4 || metaLen > int64(len(data)-r.pos) {
		return nil, fmt.Errorf("arrow ipc: message metadata of %d bytes at offset %d does not fit the file of %d bytes", metaLen, r.pos, len(data))
	}
	meta := memory.NewBufferBytes(data[r.pos : r.pos+int(metaLen)])
	r.pos += int(metaLen)
	head := ipc.NewMessage(meta, r.empty) // parses the metadata: the body's length
	bodyLen := head.BodyLen()
	head.Release()
	if bodyLen < 0 || bodyLen > int64(len(data)-r.pos) {
		return nil, fmt.Errorf("arrow ipc: message body of %d bytes at offset %d does not fit the file of %d bytes", bodyLen, r.pos, len(data))
	}
	r.m.retain() // dropped by mapping.Free when the body buffer is released
	body := memory.NewBufferWithAllocator(data[r.pos:r.pos+int(bodyLen)], r.m)
	r.pos += int(bodyLen)
	r.msg = ipc.NewMessage(meta, body)
	body.Release() // the message holds it now
	return r.msg, nil
}

// OpenMappedStream maps the shuffle file f and returns an IPC stream reader
// over the mapping, or ok == false when the file cannot be mapped (empty,
// or the platform has no mmap): the caller then reads f as a stream. f
// may be closed as soon as this returns.
func OpenMappedStream(f *os.File, mem memory.Allocator) (s *ipc.Reader, ok bool, err error) {
	data, unmap, err := mapFile(f)
	if err != nil || data == nil {
		return nil, false, nil
	}
	s, err = NewMappedStream(newMapping(data, unmap), mem)
	return s, true, err
}

// NewMappedStream returns an IPC stream reader over m, taking over the
// caller's reference to m (dropped when the reader is released, or at once
// when this fails).
func NewMappedStream(m *mapping, mem memory.Allocator) (*ipc.Reader, error) {
	mr := newMappedMessages(m)
	s, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(mem))
	if err != nil {
		return nil, err // the failed reader released mr, and so the reference
	}
	return s, nil
}
