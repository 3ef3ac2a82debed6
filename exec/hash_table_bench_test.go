package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkHashTableProbeLarge probes a table of 1.5M integer keys (the
// orders of TPC-H SF 1, far larger than the CPU caches) with batches of
// random keys of which a quarter are present: the lookup is bound by memory
// latency, not by hashing. Reports ns per probed row. "direct": keys spaced
// 4 apart, as TPC-H order keys are (the direct layout); "hashed": keys
// spaced 2^20 apart, too wide a range for it.
func BenchmarkHashTableProbeLarge(b *testing.B) {
	for _, c := range []struct {
		name   string
		spread int64
	}{{"direct", 4}, {"hashed", 1 << 20}} {
		b.Run(c.name, func(b *testing.B) { benchProbeLarge(b, c.spread) })
	}
}

func benchProbeLarge(b *testing.B, spread int64) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	const keys, batch = 1_500_000, 8192
	tbl, err := newHashTable([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	if err != nil {
		b.Fatal(err)
	}
	var p probe
	bld := array.NewInt64Builder(mem)
	defer bld.Release()
	out := make([]uint32, batch)
	for lo := 0; lo < keys; lo += batch {
		for k := lo; k < min(lo+batch, keys); k++ {
			bld.Append(int64(k) * spread)
		}
		a := bld.NewArray()
		tbl.findOrInsert(&p, []arrow.Array{a}, a.Len(), nil, out)
		a.Release()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var probes []arrow.Array
	for range 64 {
		for range batch {
			bld.Append(rng.Int64N(keys*4) * (spread / 4))
		}
		probes = append(probes, bld.NewArray())
	}
	defer func() {
		for _, a := range probes {
			a.Release()
		}
	}()
	b.ResetTimer()
	for i := range b.N {
		a := probes[i%len(probes)]
		tbl.find(&p, []arrow.Array{a}, batch, nil, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/row")
}
