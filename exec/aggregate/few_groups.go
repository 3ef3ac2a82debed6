package aggregate

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Few-group accumulation. With few groups, consecutive rows mostly share
// one, so `sums[g] += v` row after row is a chain of store-to-load forwards
// through the same memory: each add waits for the one before. The loops
// below keep fewLanes partial sums per group
// on the stack, row i feeding lane i%fewLanes, so fewLanes chains run side
// by side, and fold the lanes into the group's sum once per batch.

const (
	fewLanes  = 4  // the unrolled loops below assume 4
	fewGroups = 16 // most groups the few-group loops take (stack lanes)
)

// addDecimalsFew adds vals[i] to sums[groups[i]] for every row (no NULLs),
// marks the groups it adds to in seen and, with counts, counts each row;
// len(sums) <= fewGroups, and seen and counts may be nil.
func addDecimalsFew(vals []decimal128.Num, groups []uint32, sums []decimal128.Num, seen []bool, counts []int64) {
	var lo [fewGroups * fewLanes]uint64
	var hi [fewGroups * fewLanes]int64
	var cnt [fewGroups * fewLanes]int64
	vals = vals[:len(groups)]
	i := 0
	for ; i+fewLanes <= len(groups); i += fewLanes {
		// Unrolled by hand (the compiler does not unroll): one lane a line.
		g, v := groups[i:i+fewLanes:i+fewLanes], vals[i:i+fewLanes:i+fewLanes]
		j0, j1, j2, j3 := (g[0]%fewGroups)*fewLanes, (g[1]%fewGroups)*fewLanes+1, (g[2]%fewGroups)*fewLanes+2, (g[3]%fewGroups)*fewLanes+3
		var c0, c1, c2, c3 uint64
		lo[j0], c0 = bits.Add64(lo[j0], v[0].LowBits(), 0)
		lo[j1], c1 = bits.Add64(lo[j1], v[1].LowBits(), 0)
		lo[j2], c2 = bits.Add64(lo[j2], v[2].LowBits(), 0)
		lo[j3], c3 = bits.Add64(lo[j3], v[3].LowBits(), 0)
		hi[j0] += v[0].HighBits() + int64(c0)
		hi[j1] += v[1].HighBits() + int64(c1)
		hi[j2] += v[2].HighBits() + int64(c2)
		hi[j3] += v[3].HighBits() + int64(c3)
		cnt[j0]++
		cnt[j1]++
		cnt[j2]++
		cnt[j3]++
	}
	for ; i < len(groups); i++ {
		j := (groups[i] % fewGroups) * fewLanes
		v := vals[i]
		var c uint64
		lo[j], c = bits.Add64(lo[j], v.LowBits(), 0)
		hi[j] += v.HighBits() + int64(c)
		cnt[j]++
	}
	for g := range sums {
		s := sums[g]
		var n int64
		for k := range fewLanes {
			j := g*fewLanes + k
			s = s.Add(decimal128.New(hi[j], lo[j]))
			n += cnt[j]
		}
		sums[g] = s
		if seen != nil && n > 0 {
			seen[g] = true
		}
		if counts != nil {
			counts[g] += n
		}
	}
}

// countFew counts each row into counts[groups[i]]; len(counts) <= fewGroups.
func countFew(groups []uint32, counts []int64) {
	var cnt [fewGroups * fewLanes]int64
	i := 0
	for ; i+fewLanes <= len(groups); i += fewLanes {
		g := groups[i : i+fewLanes : i+fewLanes]
		cnt[(g[0]%fewGroups)*fewLanes]++
		cnt[(g[1]%fewGroups)*fewLanes+1]++
		cnt[(g[2]%fewGroups)*fewLanes+2]++
		cnt[(g[3]%fewGroups)*fewLanes+3]++
	}
	for ; i < len(groups); i++ {
		cnt[(groups[i]%fewGroups)*fewLanes]++
	}
	for g := range counts {
		for k := range fewLanes {
			counts[g] += cnt[g*fewLanes+k]
		}
	}
}
