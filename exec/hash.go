package exec

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Hashing of key columns, shared by hash repartitioning, the hash aggregate
// and the hash join.
//
// The hash is deterministic across processes (no random seed): a hash
// repartition on one executor and a partitioned join on another must agree
// on which partition a key belongs to. Integers of every width and Date32
// hash as their int64 value, so equal integer keys of different widths hash
// equally. Consumers that index tables should use the HIGH bits of the hash
// (see hashTable): a repartition takes the hash modulo the partition count,
// so within one partition the low bits are correlated.

const (
	hashSeed  uint64 = 0x243f6a8885a308d3 // first column's starting state
	hashNull  uint64 = 0x9e3779b97f4a7c15 // value hashed for a NULL
	hashPrime uint64 = 0x100000001b3
	hashMulA  uint64 = 0x87c37b91114253d5
	hashMulB  uint64 = 0x4cf5ad432745937f
)

// fmix64 is the murmur3 64-bit finalizer: a cheap full-avalanche mix.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb93fe53e88b3
	h ^= h >> 33
	return h
}

// hashCombine folds value hash v into the running row hash h.
func hashCombine(h, v uint64) uint64 { return fmix64(h*hashPrime + v) }

// hashBytes hashes a byte string 8 bytes at a time.
func hashBytes(b []byte) uint64 {
	h := uint64(len(b))*hashMulA + hashSeed
	for len(b) >= 8 {
		k := binary.LittleEndian.Uint64(b) * hashMulB
		h = bits.RotateLeft64(h^k, 31) * hashMulA
		b = b[8:]
	}
	if len(b) > 0 {
		var k uint64
		for i, c := range b {
			k |= uint64(c) << (8 * uint(i))
		}
		h = bits.RotateLeft64(h^(k*hashMulB), 31) * hashMulA
	}
	return fmix64(h)
}

// hashFloat normalises -0 to 0 and every NaN to one NaN so that values SQL
// groups together hash together.
func hashFloat(f float64) uint64 {
	if f == 0 {
		return 0
	}
	if f != f {
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

// HashColumns writes into hashes[i] a hash of row i's values of cols (equal
// values, including equal decimals and strings, hash equally; NULL hashes to
// a fixed value). len(hashes) must equal the arrays' length. Decimal values
// hash by their unscaled value: callers comparing decimals of different
// scales must rescale first. Unsupported types panic (the planner only
// hashes the supported key types: Boolean, Int8/16/32/64, Uint8/16/32/64,
// Float32/64, Decimal128, Utf8, LargeUtf8, Binary, Date32, Date64, Timestamp).
func HashColumns(cols []arrow.Array, hashes []uint64) {
	for i := range hashes {
		hashes[i] = hashSeed
	}
	for _, c := range cols {
		hashColumn(c, hashes)
	}
}

// hashColumn combines column c into hashes: one type switch, then a tight
// typed loop. NULL rows are first combined with the NULL constant and their
// results restored after the typed loop (which hashed undefined bytes).
func hashColumn(c arrow.Array, hashes []uint64) {
	hashes = hashes[:c.Len()]
	var saved []uint64
	if c.NullN() > 0 {
		saved = make([]uint64, 0, c.NullN())
		for i := range hashes {
			if c.IsNull(i) {
				saved = append(saved, hashCombine(hashes[i], hashNull))
			}
		}
	}
	hashValues(c, hashes)
	if saved != nil {
		k := 0
		for i := range hashes {
			if c.IsNull(i) {
				hashes[i] = saved[k]
				k++
			}
		}
	}
}

// hashValues combines every slot of c (NULL or not) into hashes.
func hashValues(c arrow.Array, hashes []uint64) {
	switch a := c.(type) {
	case *array.Null:
		// every row is NULL; hashColumn restores them all.
	case *array.Boolean:
		for i := range hashes {
			v := uint64(0)
			if a.Value(i) {
				v = 1
			}
			hashes[i] = hashCombine(hashes[i], v)
		}
	case *array.Int8:
		hashInts(a.Int8Values(), hashes)
	case *array.Int16:
		hashInts(a.Int16Values(), hashes)
	case *array.Int32:
		hashInts(a.Int32Values(), hashes)
	case *array.Int64:
		hashInts(a.Int64Values(), hashes)
	case *array.Uint8:
		hashUints(a.Uint8Values(), hashes)
	case *array.Uint16:
		hashUints(a.Uint16Values(), hashes)
	case *array.Uint32:
		hashUints(a.Uint32Values(), hashes)
	case *array.Uint64:
		hashUints(a.Uint64Values(), hashes)
	case *array.Date32:
		hashInts(a.Date32Values(), hashes)
	case *array.Date64:
		hashInts(a.Date64Values(), hashes)
	case *array.Timestamp:
		hashInts(a.TimestampValues(), hashes)
	case *array.Float32:
		for i, v := range a.Float32Values() {
			hashes[i] = hashCombine(hashes[i], hashFloat(float64(v)))
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			hashes[i] = hashCombine(hashes[i], hashFloat(v))
		}
	case *array.Decimal128:
		for i, v := range arrow.GetValues[decimal128.Num](a.Data(), 1) {
			hashes[i] = hashCombine(hashes[i], fmix64(v.LowBits())^uint64(v.HighBits()))
		}
	case *array.String:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for i := range hashes {
			hashes[i] = hashCombine(hashes[i], hashBytes(data[offs[i]-base:offs[i+1]-base]))
		}
	case *array.LargeString:
		offs, data := a.ValueOffsets(), a.ValueBytes()
		base := offs[0]
		for i := range hashes {
			hashes[i] = hashCombine(hashes[i], hashBytes(data[offs[i]-base:offs[i+1]-base]))
		}
	case *array.Binary:
		for i := range hashes {
			hashes[i] = hashCombine(hashes[i], hashBytes(a.Value(i)))
		}
	default:
		panic("exec: HashColumns: unsupported key type " + c.DataType().String())
	}
}

func hashInts[T ~int8 | ~int16 | ~int32 | ~int64](vals []T, hashes []uint64) {
	for i, v := range vals {
		hashes[i] = hashCombine(hashes[i], uint64(int64(v)))
	}
}

func hashUints[T ~uint8 | ~uint16 | ~uint32 | ~uint64](vals []T, hashes []uint64) {
	for i, v := range vals {
		hashes[i] = hashCombine(hashes[i], uint64(v))
	}
}
