package execop

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

// AccountingAllocator is the per-query allocator: it wraps a parent
// allocator, counts the bytes currently held, records the high-water mark
// and enforces a limit.
//
// arrow-go's Allocator cannot return an error, so exceeding the limit panics
// with a *LimitError. The panic is recovered at the operator boundary
// (every operator Build returns is wrapped) and at every goroutine root of
// this package, and becomes a qerr.Resources error. Non-Arrow memory (hash
// tables, sort indices) is reserved with Reserve/Release (TaskContext.Grow
// and Shrink), which return an error instead of panicking.
//
// Safe for concurrent use.
type AccountingAllocator struct {
	parent memory.Allocator
	limit  int64
	cur    atomic.Int64
	peak   atomic.Int64
	// pool, when set, is the executor-wide count this task's memory also
	// counts against: every byte counted here is counted there too. It
	// only counts; allocations go to parent.
	pool *AccountingAllocator
	// scope names the limit in errors: "" for a query's
	// quiver.memory_limit, or the executor's.
	scope string
	// spillers and spillHeld are the spillable consumers registered with
	// this count (spill.go) and the bytes they report holding.
	spillers  atomic.Int64
	spillHeld atomic.Int64
}

// NewAccountingAllocator returns an allocator over parent (DefaultAllocator
// if nil) with the given limit in bytes; limit ≤ 0 means no limit.
func NewAccountingAllocator(parent memory.Allocator, limit int64) *AccountingAllocator {
	if parent == nil {
		parent = memory.DefaultAllocator
	}
	return &AccountingAllocator{parent: parent, limit: limit}
}

// NewPool returns the executor-wide memory count with the given limit
// (≤ 0: none). Tasks allocate through NewTaskAllocator, so that every
// task's Arrow buffers and reservations count against it as well as
// against the task's own limit: the executor stays under its limit
// whatever limits (or none) its clients set. The pool is only a count;
// do not allocate from it.
func NewPool(limit int64) *AccountingAllocator {
	a := NewAccountingAllocator(nil, limit)
	a.scope = "the executor's memory limit (--memory-limit)"
	return a
}

// NewTaskAllocator returns a task's allocator over parent with the given
// limit (≤ 0: none) whose every byte also counts against pool, failing
// when either limit would be crossed. A nil pool makes it
// NewAccountingAllocator.
func NewTaskAllocator(parent memory.Allocator, limit int64, pool *AccountingAllocator) *AccountingAllocator {
	a := NewAccountingAllocator(parent, limit)
	a.pool = pool
	return a
}

// LimitError is the panic value of an allocation over the limit, and the
// cause wrapped by the Resources error it is turned into.
type LimitError struct {
	Limit     int64  // the limit in bytes
	Requested int64  // the bytes the failing request asked for
	Current   int64  // the bytes held when it failed
	Scope     string // which limit: "" for the query's quiver.memory_limit
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("requested %s with %s already in use", physical.FormatBytes(e.Requested), physical.FormatBytes(e.Current))
}

// ResourcesExhausted marks the panic value so that packages which recover
// panics themselves (and cannot import exec) can recognise it and re-panic.
func (e *LimitError) ResourcesExhausted() {}

// toError turns the limit panic into the error every caller sees.
func (e *LimitError) toError() error {
	if e.Scope != "" {
		return qerr.Resourcesf("exec: %s of %s exceeded (%w); the executor is running more than it can hold at once, retry later or lower quiver.memory_limit",
			e.Scope, physical.FormatBytes(e.Limit), e)
	}
	return qerr.Resourcesf("exec: memory limit of %s exceeded (%w); raise quiver.memory_limit or reduce the data the query holds at once",
		physical.FormatBytes(e.Limit), e)
}

// reserve adds n bytes to the count (and the pool's), or returns a
// *LimitError and leaves both counts unchanged if that would cross either
// limit.
func (a *AccountingAllocator) reserve(n int64) *LimitError {
	if err := a.reserveOwn(n); err != nil {
		return err
	}
	if a.pool != nil {
		if err := a.pool.reserveOwn(n); err != nil {
			a.cur.Add(-n)
			return err
		}
	}
	return nil
}

// uncount takes n bytes off the count and the pool's.
func (a *AccountingAllocator) uncount(n int64) {
	a.cur.Add(-n)
	if a.pool != nil {
		a.pool.cur.Add(-n)
	}
}

// reserveOwn is reserve for this allocator's count alone.
//
// A request over the limit never touches the count: were it added and
// taken back, a small request racing with it could see the sum of both
// and fail although it alone fits (a grace join's probe failed so while
// another partition's build was asking for more than was left).
func (a *AccountingAllocator) reserveOwn(n int64) *LimitError {
	var cur int64
	if a.limit > 0 && n > 0 {
		for {
			old := a.cur.Load()
			if old+n > a.limit {
				return &LimitError{Limit: a.limit, Requested: n, Current: old, Scope: a.scope}
			}
			if a.cur.CompareAndSwap(old, old+n) {
				cur = old + n
				break
			}
		}
	} else {
		cur = a.cur.Add(n)
	}
	for {
		p := a.peak.Load()
		if cur <= p || a.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	return nil
}

// Allocate implements memory.Allocator; it panics with a *LimitError over the limit.
func (a *AccountingAllocator) Allocate(size int) []byte {
	if err := a.reserve(int64(size)); err != nil {
		panic(err)
	}
	return a.parent.Allocate(size)
}

// Reallocate implements memory.Allocator; it panics with a *LimitError over the limit.
func (a *AccountingAllocator) Reallocate(size int, b []byte) []byte {
	if err := a.reserve(int64(size - len(b))); err != nil {
		panic(err)
	}
	return a.parent.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *AccountingAllocator) Free(b []byte) {
	a.uncount(int64(len(b)))
	a.parent.Free(b)
}

// Reserve accounts n bytes of non-Arrow memory; it returns a Resources
// error (and reserves nothing) if that would cross the limit.
func (a *AccountingAllocator) Reserve(n int64) error {
	if err := a.reserve(n); err != nil {
		return err.toError()
	}
	return nil
}

// Release returns n bytes reserved with Reserve.
func (a *AccountingAllocator) Release(n int64) { a.uncount(n) }

// Current is the number of bytes held now (Arrow buffers plus reservations).
func (a *AccountingAllocator) Current() int64 { return a.cur.Load() }

// Peak is the high-water mark of Current.
func (a *AccountingAllocator) Peak() int64 { return a.peak.Load() }

// Headroom is how many more bytes can be counted before this allocator's
// limit or its pool's is crossed (math.MaxInt64 without either). Operators
// that can spill compare what they are about to need with it.
func (a *AccountingAllocator) Headroom() int64 {
	h := int64(math.MaxInt64)
	if a.limit > 0 {
		h = a.limit - a.cur.Load()
	}
	if a.pool != nil && a.pool.limit > 0 {
		h = min(h, a.pool.limit-a.pool.cur.Load())
	}
	return max(h, 0)
}

// Headroom is the task allocator's Headroom, or math.MaxInt64 when the
// task's memory is not accounted.
func (tc *TaskContext) Headroom() int64 {
	if a := tc.accounting(); a != nil {
		return a.Headroom()
	}
	return math.MaxInt64
}

// Limit is the limit in bytes (≤ 0: none).
func (a *AccountingAllocator) Limit() int64 { return a.limit }

// Grow reserves n bytes of non-Arrow memory (hash tables, sort indices)
// against the query's memory limit; it returns a Resources error if over.
// Without an AccountingAllocator (tc.Mem of another kind) it only counts.
func (tc *TaskContext) Grow(n int64) error {
	if a := tc.accounting(); a != nil {
		return a.Reserve(n)
	}
	tc.untracked.Add(n)
	return nil
}

// Shrink returns n bytes reserved with Grow.
func (tc *TaskContext) Shrink(n int64) {
	if a := tc.accounting(); a != nil {
		a.Release(n)
		return
	}
	tc.untracked.Add(-n)
}

func (tc *TaskContext) accounting() *AccountingAllocator {
	a, _ := tc.Mem.(*AccountingAllocator)
	return a
}

// recoverLimit converts a recovered *LimitError panic into its error and
// re-panics anything else. Call it as `defer recoverLimit(&err)` at the
// operator boundary, where other panics must keep unwinding to the
// goroutine root.
func recoverLimit(err *error) {
	if r := recover(); r != nil {
		if le, ok := r.(*LimitError); ok {
			*err = le.toError()
			return
		}
		panic(r)
	}
}

// LimitErr turns an error that wraps a *LimitError (Arrow code that
// recovered our panic and returned it as an error, such as
// array.Concatenate) into the Resources error, unless it already is one.
func LimitErr(err error) error {
	if err == nil || err == io.EOF || qerr.Is(err, qerr.Resources) {
		return err
	}
	var le *LimitError
	if errors.As(err, &le) {
		return le.toError()
	}
	return err
}

// RecoverRoot converts any recovered panic into an error. Goroutine roots
// use it as `defer recoverRoot(&err, "what")`.
func RecoverRoot(err *error, what string) {
	if r := recover(); r != nil {
		*err = PanicError(r, what)
	}
}

func PanicError(r any, what string) error {
	if le, ok := r.(*LimitError); ok {
		return le.toError()
	}
	if e, ok := r.(error); ok {
		return qerr.Internalf("exec: panic in %s: %w", what, e)
	}
	return qerr.Internalf("exec: panic in %s: %v", what, r)
}

// sharedState holds per-node state shared by the partitions of one query.
type sharedState struct {
	mu sync.Mutex
	m  map[any]any
}

// Shared returns the value stored under key, creating it with mk on first
// use. Partitions of one query use it to share exchanges and join build
// sides. Safe for concurrent use; mk runs at most once per key, under a lock,
// so it must be cheap (start nothing expensive in it).
func (tc *TaskContext) Shared(key any, mk func() any) any {
	tc.shared.mu.Lock()
	defer tc.shared.mu.Unlock()
	if tc.shared.m == nil {
		tc.shared.m = map[any]any{}
	}
	v, ok := tc.shared.m[key]
	if !ok {
		v = mk()
		tc.shared.m[key] = v
	}
	return v
}

// AllocateDirty is Allocate without the promise of zeroed memory, when the
// parent can skip the zeroing (a Recycler); it panics with a *LimitError
// over the limit.
func (a *AccountingAllocator) AllocateDirty(size int) []byte {
	if err := a.reserve(int64(size)); err != nil {
		panic(err)
	}
	if d, ok := a.parent.(dirtyAllocator); ok {
		return d.AllocateDirty(size)
	}
	return a.parent.Allocate(size)
}

// dirtyAllocator is an allocator that can hand out memory without zeroing
// it first.
type dirtyAllocator interface {
	AllocateDirty(size int) []byte
}

// NewDirtyBuffer returns a buffer of size bytes (capacity rounded up to 64
// as arrow-go does) whose contents are unspecified: the caller writes every
// byte it or a reader will read. Over an allocator without AllocateDirty it
// is an ordinary zeroed buffer.
func NewDirtyBuffer(mem memory.Allocator, size int) *memory.Buffer {
	d, ok := mem.(dirtyAllocator)
	if !ok {
		b := memory.NewResizableBuffer(mem)
		b.Resize(size)
		return b
	}
	b := memory.NewBufferWithAllocator(d.AllocateDirty((size+63)&^63), mem)
	b.ResizeNoShrink(size)
	return b
}

// SoftLimited returns an allocator over mem for code that is not safe
// against a panic raised inside one of its allocations (arrow-go's Parquet
// readers keep what they already allocated when such a panic unwinds
// through them, and nothing frees it). It counts every allocation against
// the query's limit as mem would but never panics; crossed reports the
// first crossing of the limit as a Resources error, for the caller to check
// at a point where it can release what it holds. Over an allocator without
// a limit it returns mem, and crossed always reports nil.
func SoftLimited(mem memory.Allocator) (soft memory.Allocator, crossed func() error) {
	a, ok := mem.(*AccountingAllocator)
	if !ok || (a.limit <= 0 && (a.pool == nil || a.pool.limit <= 0)) {
		return mem, func() error { return nil }
	}
	s := &softLimit{a: a}
	return s, func() error {
		if le := s.over.Load(); le != nil {
			return le.toError()
		}
		return nil
	}
}

// softLimit is SoftLimited's allocator.
type softLimit struct {
	a    *AccountingAllocator
	over atomic.Pointer[LimitError]
}

// count adds n bytes to the query's count, past the limit too, and
// remembers the first crossing.
func (s *softLimit) count(n int64) {
	if err := s.a.reserve(n); err != nil {
		s.over.CompareAndSwap(nil, err)
		s.a.cur.Add(n)
		if s.a.pool != nil {
			s.a.pool.cur.Add(n)
		}
	}
}

func (s *softLimit) Allocate(size int) []byte {
	s.count(int64(size))
	return s.a.parent.Allocate(size)
}

func (s *softLimit) AllocateDirty(size int) []byte {
	s.count(int64(size))
	if d, ok := s.a.parent.(dirtyAllocator); ok {
		return d.AllocateDirty(size)
	}
	return s.a.parent.Allocate(size)
}

func (s *softLimit) Reallocate(size int, b []byte) []byte {
	s.count(int64(size - len(b)))
	return s.a.parent.Reallocate(size, b)
}

func (s *softLimit) Free(b []byte) { s.a.Free(b) }
