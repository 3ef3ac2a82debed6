package join

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/quiverdb/quiver/exec/execop"
)

// contiguousRun reports whether idx is the run lo, lo+1, ..., lo+len(idx)-1
// (non-empty). A join with unique build keys whose probe rows all match
// pairs each probe row with exactly one build row in order, so its probe
// side is such a run: the output can share the probe columns instead of
// copying them.
func contiguousRun(idx []int32) (lo int32, ok bool) {
	if len(idx) == 0 {
		return 0, false
	}
	lo = idx[0]
	// One comparison rules out most non-runs before the loop.
	if idx[len(idx)-1] != lo+int32(len(idx)-1) {
		return 0, false
	}
	for i, r := range idx {
		if r != lo+int32(i) {
			return 0, false
		}
	}
	return lo, true
}

// pickColumns returns cols[which[i]] at rows idx, appended to dst: shared
// (retained, or zero-copy slices) when idx is a contiguous run covering at
// least half the column, else gathered. The caller releases the arrays (on error too: dst keeps what
// was appended before the failure).
func pickColumns(ctx context.Context, tc *execop.TaskContext, dst []arrow.Array, cols []arrow.Array, which []int, idx []int32) ([]arrow.Array, error) {
	if lo, ok := contiguousRun(idx); ok {
		hi := int64(lo) + int64(len(idx))
		for _, w := range which {
			c := cols[w]
			switch {
			case lo == 0 && hi == int64(c.Len()):
				c.Retain()
				dst = append(dst, c)
			case 2*len(idx) >= c.Len():
				dst = append(dst, array.NewSlice(c, int64(lo), hi))
			default:
				// A short run of a long column: a slice would keep the
				// whole column alive downstream, so copy it.
				out, err := takeColumns(ctx, tc, cols[w:w+1], idx)
				if err != nil {
					return dst, err
				}
				dst = append(dst, out[0])
			}
		}
		return dst, nil
	}
	if len(which) == 0 {
		return dst, nil
	}
	sel := make([]arrow.Array, len(which))
	for i, w := range which {
		sel[i] = cols[w]
	}
	out, err := takeColumns(ctx, tc, sel, idx)
	return append(dst, out...), err
}
