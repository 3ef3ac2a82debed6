package aggregate

import (
	"context"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/eval"
	"github.com/quiverdb/quiver/exec/filemap"
	"github.com/quiverdb/quiver/exec/kernel"
	"github.com/quiverdb/quiver/physical"
)

// Grouping on dictionary codes. A Partial aggregate whose string group key
// is a column read straight from a decoded cache file with a file-wide
// dictionary (filemap.DictCodes) groups on integer ids instead of the
// strings: the hash table gets an Int32 key (the direct or packed layout,
// no string compares), and the ids become strings again only for the
// output groups. The ids are the aggregate's own, so batches from files
// with other dictionaries, and batches without codes (a filter's output, a
// file too varied for a dictionary), map to the same ids: the latter one
// row at a time through a map, slower but the same groups. Whether a key is
// grouped on ids is decided at the first batch, by whether it has codes,
// while the table is empty.

// dictCodes finds a batch array's file dictionary codes (a variable for
// tests that give arrays codes without a file).
var dictCodes = filemap.DictCodes

// dictRows counts the rows grouped on file dictionary codes (DictKeyRows).
var dictRows atomic.Int64

// DictKeyRows is the number of rows partial aggregates have grouped on
// file dictionary codes since the process started (for tests and profiles).
func DictKeyRows() int64 { return dictRows.Load() }

// dictKeys is the per-aggregate state of the keys grouped on ids.
type dictKeys struct {
	decided bool
	on      []bool     // per group key: grouped on ids
	keys    []*dictKey // per group key, nil where off
	cand    []bool     // per group key: a plain string column (may go on)
	scratch [][]int32  // per group key: the batch's ids
	// cases, per group key: a CASE of string constants, always on ids
	// (its results' ids, eval.CaseCodes); nil where not.
	cases []*eval.CaseCodes
}

// dictKey is one key's ids: values[id] is the string of id. The first file
// dictionary's codes are the ids themselves (base), so an aggregate that
// reads one file, as most do, neither remaps nor copies a value; ids is
// built only when another dictionary or a batch without codes comes.
type dictKey struct {
	base   *filemap.Dict
	ids    map[string]int32 // nil until needed
	values []string
	bytes  int64
	last   *filemap.Dict // the file dictionary remap is for
	remap  []int32       // last's code → id, -1 where not seen yet
}

// newDictKeys returns the state for n's group keys, or nil when no key can
// be grouped on ids (only a Partial aggregate over rows, by a plain string
// column, can).
func newDictKeys(n *physical.HashAggregate, mergeStates bool) *dictKeys {
	if n.Mode != physical.AggPartial || mergeStates {
		return nil
	}
	d := &dictKeys{cand: make([]bool, len(n.GroupBy)), cases: make([]*eval.CaseCodes, len(n.GroupBy))}
	any := false
	for i, g := range n.GroupBy {
		if c, ok := g.(*physical.Column); ok && c.Index >= 0 && g.DataType().ID() == arrow.STRING {
			d.cand[i], any = true, true
		}
		if cc, ok := eval.CompileCaseCodes(g); ok {
			d.cases[i], any = cc, true
		}
	}
	if !any {
		return nil
	}
	return d
}

// decide turns on the keys whose first batch has codes and reports whether
// any did; types are then the table's key types.
func (d *dictKeys) decide(keys []arrow.Array, types []arrow.DataType) bool {
	d.decided = true
	d.on = make([]bool, len(keys))
	d.keys = make([]*dictKey, len(keys))
	d.scratch = make([][]int32, len(keys))
	any := false
	for i, k := range keys {
		if cc := d.cases[i]; cc != nil {
			vals := cc.Values()
			d.on[i], any = true, true
			d.keys[i] = &dictKey{base: &filemap.Dict{Values: vals}, values: vals[:len(vals):len(vals)]}
			types[i] = arrow.PrimitiveTypes.Int32
			continue
		}
		if !d.cand[i] {
			continue
		}
		if _, _, ok := dictCodes(k); ok {
			d.on[i], any = true, true
			d.keys[i] = &dictKey{}
			types[i] = arrow.PrimitiveTypes.Int32
		}
	}
	return any
}

// encode replaces each key grouped on ids by an Int32 array of the ids of
// its rows (with the key's validity), releasing the string array.
func (d *dictKeys) encode(keys []arrow.Array) {
	for i, k := range keys {
		if !d.on[i] {
			continue
		}
		if _, done := k.(*array.Int32); done && d.cases[i] != nil {
			continue // a CASE's ids, made by evalKeys
		}
		s := k.(*array.String)
		data := s.Data()
		off, n := data.Offset(), data.Len()
		buf := kernel.GrowSlice(d.scratch[i][:0], off+n)
		d.scratch[i] = buf
		dk := d.keys[i]
		dict, codes, ok := dictCodes(k)
		if ok && dk.base == nil && dk.ids == nil {
			dk.base = dict
			dk.values = dict.Values[:len(dict.Values):len(dict.Values)] // an append copies
		}
		vals := buf
		switch {
		case ok && dict == dk.base && off == 0:
			vals = codes[:n] // the file's codes are the ids: no copy (NULL rows' are ignored through validity)
			dictRows.Add(int64(n))
		case ok && dict == dk.base:
			copy(buf[off:off+n], codes[:n])
			dictRows.Add(int64(n))
		case ok:
			dk.remapFor(dict)
			for r := range n {
				if s.IsNull(r) {
					continue
				}
				id := dk.remap[codes[r]]
				if id < 0 {
					id = dk.intern(dict.Values[codes[r]])
					dk.remap[codes[r]] = id
				}
				buf[off+r] = id
			}
			dictRows.Add(int64(n))
		default:
			for r := range n {
				if !s.IsNull(r) {
					buf[off+r] = dk.intern(s.Value(r))
				}
			}
		}
		bufs := []*memory.Buffer{data.Buffers()[0], memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(vals))}
		idData := array.NewData(arrow.PrimitiveTypes.Int32, n, bufs, nil, data.NullN(), off)
		keys[i] = array.NewInt32Data(idData)
		idData.Release()
		k.Release()
	}
}

// idsAreCodes reports whether, for each key with a file dependency (fds,
// nil at the lead), the key's ids are that file's dictionary codes: its
// first dictionary, whose codes encode keeps as they are, is the file's.
func (d *dictKeys) idsAreCodes(fds []*filemap.FileDep) bool {
	for i, fd := range fds {
		if fd == nil {
			continue
		}
		if !d.on[i] || d.keys[i] == nil || d.keys[i].base != fd.Dict {
			return false
		}
	}
	return true
}

// remapFor makes remap translate dict's codes.
func (k *dictKey) remapFor(dict *filemap.Dict) {
	if k.last == dict {
		return
	}
	k.last = dict
	k.remap = kernel.GrowSlice(k.remap[:0], len(dict.Values))
	for i := range k.remap {
		k.remap[i] = -1
	}
}

// intern returns v's id, giving it the next one if it has none.
func (k *dictKey) intern(v string) int32 {
	if k.ids == nil {
		k.ids = make(map[string]int32, len(k.values))
		for i, s := range k.values {
			k.ids[s] = int32(i)
		}
		k.bytes += int64(len(k.values)) * dictEntryBytes
	}
	if id, ok := k.ids[v]; ok {
		return id
	}
	v = string([]byte(v)) // the key may be a view of a batch's buffer
	id := int32(len(k.values))
	k.ids[v] = id
	k.values = append(k.values, v)
	k.bytes += int64(len(v)) + dictEntryBytes
	return id
}

// dictEntryBytes approximates a value's overhead: its string header in
// values and its map entry.
const dictEntryBytes = 64

// decode replaces, in cols (an output batch's key columns), each Int32 id
// column of a key grouped on ids by the strings it stands for.
func (d *dictKeys) decode(mem memory.Allocator, cols []arrow.Array) {
	for i, c := range cols {
		if !d.on[i] {
			continue
		}
		ids := c.(*array.Int32)
		b := array.NewStringBuilder(mem)
		vals := d.keys[i].values
		total := 0
		for r, id := range ids.Int32Values() {
			if ids.IsValid(r) {
				total += len(vals[id])
			}
		}
		// Room for every row and byte first, so each row appends without
		// the builder's checks.
		b.Reserve(ids.Len())
		b.ReserveData(total)
		for r, id := range ids.Int32Values() {
			if !ids.IsValid(r) {
				b.AppendNull()
				continue
			}
			v := vals[id]
			b.BinaryBuilder.UnsafeAppend(unsafe.Slice(unsafe.StringData(v), len(v)))
		}
		cols[i] = b.NewArray()
		b.Release()
		c.Release()
	}
}

// memSize is the bytes of the ids' dictionaries and scratch.
func (d *dictKeys) memSize() int64 {
	n := int64(0)
	for i, k := range d.keys {
		if k != nil {
			n += k.bytes + int64(cap(k.remap))*4
		}
		n += int64(cap(d.scratch[i])) * 4
	}
	return n
}

// evalKeys evaluates b's group keys, a CASE of string constants grouped on
// ids as its results' ids (an Int32 array encode leaves alone) when its
// conditions evaluate over the whole batch, else as strings.
func (d *dictKeys) evalKeys(ctx context.Context, mem memory.Allocator, runners []kernel.ExprRunner, b arrow.RecordBatch) ([]arrow.Array, error) {
	keys := make([]arrow.Array, 0, len(runners))
	for i, r := range runners {
		if cc := d.cases[i]; cc != nil && (!d.decided || d.on[i]) {
			if a, ok := cc.Eval(ctx, mem, b); ok {
				caseRows.Add(int64(a.Len()))
				keys = append(keys, a)
				continue
			}
		}
		a, err := r.Eval(ctx, mem, b)
		if err != nil {
			kernel.ReleaseArrays(keys)
			return nil, err
		}
		keys = append(keys, a)
	}
	return keys, nil
}

// caseRows counts the rows grouped on a CASE's result ids (CaseKeyRows).
var caseRows atomic.Int64

// CaseKeyRows is the number of rows partial aggregates have grouped on the
// result ids of a CASE of string constants since the process started (for
// tests and profiles).
func CaseKeyRows() int64 { return caseRows.Load() }

// hasCases reports whether some key is a CASE of string constants.
func (d *dictKeys) hasCases() bool {
	for _, c := range d.cases {
		if c != nil {
			return true
		}
	}
	return false
}
