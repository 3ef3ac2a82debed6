package kernel

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
	HashSeed  uint64 = 0x243f6a8885a308d3 // first column's starting state
	hashNull  uint64 = 0x9e3779b97f4a7c15 // value hashed for a NULL
	HashPrime uint64 = 0x100000001b3
	HashMulA  uint64 = 0x87c37b91114253d5
	hashMulB  uint64 = 0x4cf5ad432745937f
	hashMulC  uint64 = 0x9fb21c651e98df25
)

// Fmix64 is the murmur3 64-bit finalizer: a cheap full-avalanche mix.
func Fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb93fe53e88b3
	h ^= h >> 33
	return h
}

// HashCombine folds value hash v into the running row state h. It is
// cheap (one multiply) and, for a fixed h, a bijection of v, so one column
// never collides by itself; it does not avalanche: HashColumns finishes
// every row with one fmix64 after the last column, so the finished hash's
// high bits (hash table slots) and low bits (partition = hash mod N, slot
// tags) both depend on every bit of every value. The rotation brings the
// previous product's well-mixed high bits down, so two columns whose
// values differ only in high bits do not leave the low bits equal.
func HashCombine(h, v uint64) uint64 { return (bits.RotateLeft64(h, 29) ^ v) * hashMulC }

// HashFinish is the finalising mix of a row state.
func HashFinish(h uint64) uint64 { return Fmix64(h) }

// mum multiplies a by b to 128 bits and folds the halves: one MUL that
// mixes every bit of both inputs into the middle bits of the result.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// HashBytes hashes a byte string into a value hash (unfinalised: fold it
// in with hashCombine). Strings of 4 to 16 bytes, the usual group and
// partition keys, take four possibly overlapping 4-byte loads and one
// multiply, with no loop and no branch on the length within that range
// (mixed lengths would mispredict): the loads and the length determine the
// string. Other lengths go to hashBytesOther.
func HashBytes(b []byte) uint64 {
	n := uint(len(b))
	if n-4 > 12 {
		return hashBytesOther(b)
	}
	lo, hi := Load4x2(b)
	return mum(lo^hashMulB, hi^HashSeed^uint64(n)*HashMulA)
}

// Load4x2 packs a string of 4 to 16 bytes into two words: bytes [0, 4),
// [j, j+4), [n-4, n) and [n-4-j, n-j), where j is 4 when n >= 8 and 0
// otherwise. Together they cover every byte, so with n they determine
// the string.
func Load4x2(b []byte) (lo, hi uint64) {
	n := len(b)
	j := (n >> 3) << 2
	lo = uint64(binary.LittleEndian.Uint32(b))<<32 | uint64(binary.LittleEndian.Uint32(b[j:]))
	hi = uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32 | uint64(binary.LittleEndian.Uint32(b[n-4-j:]))
	return lo, hi
}

// hashBytesOther hashes strings of 0-3 bytes and longer than 16 bytes
// (see hashBytes). Longer strings take 16 bytes per multiply and finish on
// their last 16 bytes.
func hashBytesOther(b []byte) uint64 {
	n := len(b)
	seed := HashSeed ^ uint64(n)*HashMulA
	if n > 16 {
		h := seed
		for p := b; len(p) > 16; p = p[16:] {
			h = mum(binary.LittleEndian.Uint64(p)^hashMulB, binary.LittleEndian.Uint64(p[8:])^h)
		}
		// The last 16 bytes of the whole string (overlapping bytes already
		// hashed when n is not a multiple of 16).
		t := b[n-16:]
		return mum(binary.LittleEndian.Uint64(t)^hashMulC, binary.LittleEndian.Uint64(t[8:])^h)
	}
	var lo uint64
	if n > 0 {
		lo = uint64(b[0])<<16 | uint64(b[n>>1])<<8 | uint64(b[n-1])
	}
	return mum(lo^hashMulB, seed)
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
		hashes[i] = HashSeed
	}
	for _, c := range cols {
		hashColumn(c, hashes)
	}
	// One finalising mix per row, not per value: the combines above are
	// cheap and not avalanching.
	for i, h := range hashes {
		hashes[i] = HashFinish(h)
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
				saved = append(saved, HashCombine(hashes[i], hashNull))
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
			hashes[i] = HashCombine(hashes[i], v)
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
	case *array.Time64:
		hashInts(a.Time64Values(), hashes)
	case *array.Float32:
		for i, v := range a.Float32Values() {
			hashes[i] = HashCombine(hashes[i], hashFloat(float64(v)))
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			hashes[i] = HashCombine(hashes[i], hashFloat(v))
		}
	case *array.Decimal128:
		for i, v := range arrow.GetValues[decimal128.Num](a.Data(), 1) {
			hashes[i] = HashCombine(hashes[i], v.LowBits()^uint64(v.HighBits())*hashMulB)
		}
	case *array.String:
		hashStrings(a.ValueOffsets(), a.ValueBytes(), hashes)
	case *array.LargeString:
		hashStrings(a.ValueOffsets(), a.ValueBytes(), hashes)
	case *array.Binary:
		hashStrings(a.ValueOffsets(), a.ValueBytes(), hashes)
	case *array.LargeBinary:
		hashStrings(a.ValueOffsets(), a.ValueBytes(), hashes)
	default:
		panic("exec: HashColumns: unsupported key type " + c.DataType().String())
	}
}

func hashInts[T ~int8 | ~int16 | ~int32 | ~int64](vals []T, hashes []uint64) {
	for i, v := range vals {
		hashes[i] = HashCombine(hashes[i], uint64(int64(v)))
	}
}

func hashUints[T ~uint8 | ~uint16 | ~uint32 | ~uint64](vals []T, hashes []uint64) {
	for i, v := range vals {
		hashes[i] = HashCombine(hashes[i], uint64(v))
	}
}

// hashStrings combines variable-width values (offsets into data, offs[0]
// at data[0]) into hashes. A value longer than 16 bytes that equals the
// row before's (rows of one order or customer arrive together) reuses
// that row's value hash: comparing costs less than hashing it again.
// Shorter values hash in about the time a comparison would take, so they
// are always hashed (and skip the unpredictable branch).
func hashStrings[O int32 | int64](offs []O, data []byte, hashes []uint64) {
	base := offs[0]
	offs = offs[:len(hashes)+1]
	var prev []byte
	var prevHash uint64
	for i := range hashes {
		s := data[offs[i]-base : offs[i+1]-base]
		var v uint64
		if n := uint(len(s)); n-4 <= 12 {
			// hashBytes by hand: the compiler does not inline it.
			lo, hi := Load4x2(s)
			v = mum(lo^hashMulB, hi^HashSeed^uint64(n)*HashMulA)
		} else if n < 4 {
			v = hashBytesOther(s)
		} else {
			// The last 8 bytes first: keys such as Customer#000012345
			// differ there, and it spares a memequal call.
			if !(len(s) == len(prev) &&
				binary.LittleEndian.Uint64(s[len(s)-8:]) == binary.LittleEndian.Uint64(prev[len(prev)-8:]) &&
				string(s) == string(prev)) {
				prevHash = HashBytes(s)
			}
			prev, v = s, prevHash
		}
		hashes[i] = HashCombine(hashes[i], v)
	}
}
