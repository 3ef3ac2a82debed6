package hashtable

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/exec/kernel"
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
	tbl, err := New([]arrow.DataType{arrow.PrimitiveTypes.Int64})
	if err != nil {
		b.Fatal(err)
	}
	var p Probe
	bld := array.NewInt64Builder(mem)
	defer bld.Release()
	out := make([]uint32, batch)
	for lo := 0; lo < keys; lo += batch {
		for k := lo; k < min(lo+batch, keys); k++ {
			bld.Append(int64(k) * spread)
		}
		a := bld.NewArray()
		tbl.FindOrInsert(&p, []arrow.Array{a}, a.Len(), nil, out)
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
		tbl.Find(&p, []arrow.Array{a}, batch, nil, out)
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
	tbl, err := New(types)
	if err != nil {
		b.Fatal(err)
	}
	if generic {
		tbl.layout = tbl.storedGeneric()
	}
	var p Probe
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
			tbl.FindOrInsert(&p, cols, cols[0].Len(), nil, out)
			kernel.ReleaseArrays(cols)
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
			kernel.ReleaseArrays(c)
		}
	}()
	b.ResetTimer()
	for i := range b.N {
		tbl.Find(&p, probes[i%len(probes)], batch, nil, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/row")
}

// tpchLikeStrings returns n string keys shaped like the dashboard's group
// and partition keys: kind "nation" (25 names of 5-14 bytes), "priority"
// (5 of 5-15 bytes), "cname" (Customer#%09d, 18 bytes, 150k distinct).
// With runs, each value repeats for 1-7 rows in a row (the line items of
// one order); without, every row draws afresh.
func tpchLikeStrings(kind string, n int, runs bool, rng *rand.Rand) []string {
	nations := []string{"ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE",
		"GERMANY", "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO",
		"MOZAMBIQUE", "PERU", "CHINA", "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA",
		"UNITED KINGDOM", "UNITED STATES"}
	prios := []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	draw := func() string {
		switch kind {
		case "nation":
			return nations[rng.IntN(len(nations))]
		case "priority":
			return prios[rng.IntN(len(prios))]
		default:
			return fmt.Sprintf("Customer#%09d", rng.IntN(150_000)+1)
		}
	}
	out := make([]string, 0, n)
	for len(out) < n {
		v, k := draw(), 1
		if runs {
			k = rng.IntN(7) + 1
		}
		for j := 0; j < k && len(out) < n; j++ {
			out = append(out, v)
		}
	}
	return out
}

// BenchmarkHashColumnsStrings hashes one batch of 8192 string keys per
// iteration (hash repartitioning and the hash aggregate's first step).
// Reports ns per row.
func BenchmarkHashColumnsStrings(b *testing.B) {
	for _, kind := range []string{"nation", "priority", "cname", "nation+cname"} {
		for _, runs := range []bool{false, true} {
			name := kind + "/random"
			if runs {
				name = kind + "/runs"
			}
			b.Run(name, func(b *testing.B) { benchHashStrings(b, kind, runs) })
		}
	}
}

func benchHashStrings(b *testing.B, kind string, runs bool) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	const batch = 8192
	rng := rand.New(rand.NewPCG(3, 4))
	var cols []arrow.Array
	for _, k := range strings.Split(kind, "+") {
		bld := array.NewStringBuilder(mem)
		bld.AppendValues(tpchLikeStrings(k, batch, runs, rng), nil)
		cols = append(cols, bld.NewArray())
		bld.Release()
	}
	defer kernel.ReleaseArrays(cols)
	hashes := make([]uint64, batch)
	b.ResetTimer()
	for range b.N {
		kernel.HashColumns(cols, hashes)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/row")
}

// BenchmarkStringKeyEqual measures the string key comparisons of the
// generic layout: markRepeats over a batch with runs (each row against the
// row before) and bytesKeys.equal of a batch against stored equal keys.
// Reports ns per row.
func BenchmarkStringKeyEqual(b *testing.B) {
	for _, kind := range []string{"nation", "priority", "cname"} {
		b.Run(kind+"/repeats", func(b *testing.B) { benchStringEqual(b, kind, true) })
		b.Run(kind+"/keys", func(b *testing.B) { benchStringEqual(b, kind, false) })
	}
}

func benchStringEqual(b *testing.B, kind string, repeats bool) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	const batch = 8192
	rng := rand.New(rand.NewPCG(5, 6))
	bld := array.NewStringBuilder(mem)
	bld.AppendValues(tpchLikeStrings(kind, batch, true, rng), nil)
	arr := bld.NewArray()
	bld.Release()
	defer arr.Release()
	rep, scratch := make([]bool, batch), make([]bool, batch)
	k := &bytesKeys{dt: arrow.BinaryTypes.String, offs: []int{0}}
	rows, ids, eq := make([]int32, batch), make([]uint32, batch), make([]bool, batch)
	for i := range rows {
		rows[i], ids[i] = int32(i), uint32(i)
	}
	k.appendRows(arr, rows)
	cols := []arrow.Array{arr}
	b.ResetTimer()
	for range b.N {
		if repeats {
			markRepeats(cols, batch, rep, scratch)
		} else {
			for i := range eq {
				eq[i] = true
			}
			k.equal(arr, rows, ids, eq)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/row")
}

// BenchmarkHashTableGroupCustomers runs the dashboard's top-customers
// grouping through one table: keys (custkey, "Customer#%09d", nation) over
// 1.37 M rows, one run of 1-7 rows per order, 90 k distinct customers, in
// batches of 8192 (one partition of d06's partial aggregate).
// Reports ns per input row.
func BenchmarkHashTableGroupCustomers(b *testing.B) { benchGroupOrders(b, true) }

// BenchmarkHashTableGroupNation is the same rows grouped by nation alone
// (25 strings of 5-14 bytes, runs of 1-7 rows): one partition of the
// dashboard's top-nations partial aggregate.
func BenchmarkHashTableGroupNation(b *testing.B) { benchGroupOrders(b, false) }

func benchGroupOrders(b *testing.B, customers bool) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	const rows, batch, ncust = 1_370_000, 8192, 90_000
	nations := tpchLikeStrings("nation", 25, false, rand.New(rand.NewPCG(9, 9)))
	rng := rand.New(rand.NewPCG(7, 8))
	kb, nb, sb := array.NewInt64Builder(mem), array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	defer kb.Release()
	defer nb.Release()
	defer sb.Release()
	var batches [][]arrow.Array
	for k := 0; k < rows; {
		c := rng.IntN(ncust) + 1
		for j := rng.IntN(7) + 1; j > 0 && k < rows; j-- {
			if customers {
				kb.Append(int64(c))
				nb.Append(fmt.Sprintf("Customer#%09d", c))
			}
			sb.Append(nations[c%len(nations)])
			k++
			if sb.Len() == batch || k == rows {
				if customers {
					batches = append(batches, []arrow.Array{kb.NewArray(), nb.NewArray(), sb.NewArray()})
				} else {
					batches = append(batches, []arrow.Array{sb.NewArray()})
				}
			}
		}
	}
	defer func() {
		for _, c := range batches {
			kernel.ReleaseArrays(c)
		}
	}()
	types := []arrow.DataType{arrow.BinaryTypes.String}
	if customers {
		types = []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, arrow.BinaryTypes.String}
	}
	out := make([]uint32, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tbl, err := New(types)
		if err != nil {
			b.Fatal(err)
		}
		var p Probe
		for _, cols := range batches {
			tbl.FindOrInsert(&p, cols, cols[0].Len(), nil, out)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}
