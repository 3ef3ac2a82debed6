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

// BenchmarkHashTableProbeComposite probes a table of 800k (partkey,
// suppkey) pairs (TPC-H SF 1 partsupp, as q9 joins it) with batches of
// random pairs of which about half are present, in the packed layout and
// in the generic layout it replaced. Reports ns per probed row.
func BenchmarkHashTableProbeComposite(b *testing.B) {
	for _, layout := range []string{"packed", "generic"} {
		b.Run(layout, func(b *testing.B) { benchProbeComposite(b, layout == "generic") })
	}
}

func benchProbeComposite(b *testing.B, generic bool) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	const parts, perPart, batch = 200_000, 4, 8192
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}
	tbl, err := newHashTable(types)
	if err != nil {
		b.Fatal(err)
	}
	if generic {
		tbl.toGeneric()
	}
	var p probe
	pb, sb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	defer pb.Release()
	defer sb.Release()
	out := make([]uint32, batch)
	flush := func() []arrow.Array { return []arrow.Array{pb.NewArray(), sb.NewArray()} }
	for k := 0; k < parts*perPart; k++ {
		part := int64(k/perPart + 1)
		pb.Append(part)
		sb.Append((part+int64(k%perPart)*2501)%10_000 + 1)
		if pb.Len() == batch || k == parts*perPart-1 {
			cols := flush()
			tbl.findOrInsert(&p, cols, cols[0].Len(), nil, out)
			releaseCols(cols)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var probes [][]arrow.Array
	for range 32 {
		for range batch {
			part := rng.Int64N(parts) + 1
			pb.Append(part)
			sb.Append((part+rng.Int64N(perPart*2)*2501)%10_000 + 1)
		}
		probes = append(probes, flush())
	}
	defer func() {
		for _, c := range probes {
			releaseCols(c)
		}
	}()
	b.ResetTimer()
	for i := range b.N {
		tbl.find(&p, probes[i%len(probes)], batch, nil, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/row")
}
