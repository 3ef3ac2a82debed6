package eval

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/quiverdb/quiver/physical"
)

// randDec draws decimals that stress the int64 fast paths: small values of
// both signs, values at and next to the int64 limits, random int64s, and
// (when wide) values that do not fit an int64 at all, up to the 128-bit limits.
func randDec(rng *rand.Rand, wide bool) decimal128.Num {
	k := rng.IntN(9)
	if !wide && k >= 7 {
		k = rng.IntN(7)
	}
	switch k {
	case 0:
		return decimal128.FromI64(rng.Int64N(2001) - 1000)
	case 1:
		return decimal128.FromI64(math.MaxInt64 - rng.Int64N(3))
	case 2:
		return decimal128.FromI64(math.MinInt64 + rng.Int64N(3))
	case 3:
		return decimal128.FromI64(int64(rng.Uint64()))
	case 4:
		return decimal128.FromI64(int64(rng.Uint64()) >> rng.IntN(64))
	case 5:
		return decimal128.FromI64(1<<62 - rng.Int64N(5) + 2)
	case 6:
		return decimal128.FromI64(-(1 << 32) + rng.Int64N(1<<33))
	case 7:
		// just past the int64 range
		if rng.IntN(2) == 0 {
			return decimal128.New(0, 1<<63+uint64(rng.IntN(3)))
		}
		return decimal128.New(-1, 1<<63-1-uint64(rng.IntN(3)))
	}
	// anywhere in 128 bits, including near ±2^127
	return decimal128.New(int64(rng.Uint64())>>rng.IntN(64), rng.Uint64())
}

func bigOf(n decimal128.Num) *big.Int { return n.BigInt() }

func fitsI64(n decimal128.Num) bool { return fit64Bad(n) == 0 }

var (
	minI128 = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
	maxI128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
)

// refArith is the exact result of p op q through math/big; ok is false when
// it does not fit 128 bits.
func refArith(op physical.BinaryOp, p, q decimal128.Num) (decimal128.Num, bool) {
	r := new(big.Int)
	switch op {
	case physical.OpAdd:
		r.Add(bigOf(p), bigOf(q))
	case physical.OpSub:
		r.Sub(bigOf(p), bigOf(q))
	case physical.OpMul:
		r.Mul(bigOf(p), bigOf(q))
	}
	if r.Cmp(minI128) < 0 || r.Cmp(maxI128) > 0 {
		return decimal128.Num{}, false
	}
	return decimal128.FromBigInt(r), true
}

// TestDecimalFastArithMatchesSlow is the differential test of the int64
// decimal kernels against the 128-bit ones and math/big: whenever the fast
// path accepts a batch its results are exact, and it refuses exactly the
// batches holding a value outside the int64 range.
func TestDecimalFastArithMatchesSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ops := []physical.BinaryOp{physical.OpAdd, physical.OpSub, physical.OpMul}
	slow := map[physical.BinaryOp]func(a, b decimal128.Num) (decimal128.Num, bool){
		physical.OpAdd: addDec, physical.OpSub: subDec, physical.OpMul: mulDec,
	}
	accepted, refused := 0, 0
	for iter := 0; iter < 3000; iter++ {
		n := 1 + rng.IntN(40)
		wide := rng.IntN(4) == 0
		x := make([]decimal128.Num, n)
		y := make([]decimal128.Num, n)
		for i := range x {
			x[i], y[i] = randDec(rng, wide), randDec(rng, wide)
		}
		xm, ym := -1, -1
		switch rng.IntN(3) {
		case 1:
			xm, x = 0, x[:1]
		case 2:
			ym, y = 0, y[:1]
		}
		allFit := true
		for _, v := range append(append([]decimal128.Num{}, x...), y...) {
			allFit = allFit && fitsI64(v)
		}
		op := ops[rng.IntN(len(ops))]
		out := make([]decimal128.Num, n)
		ok := decArith64(op, x, y, xm, ym, out)
		if ok != allFit {
			t.Fatalf("%s: fast path accepted=%v, but all operands fit int64=%v (x=%v y=%v)", op, ok, allFit, x, y)
		}
		if !ok {
			refused++
			continue
		}
		accepted++
		for i := range out {
			p, q := x[i&xm], y[i&ym]
			want, wok := refArith(op, p, q)
			if !wok {
				t.Fatalf("%s %s %s: two int64s overflowed 128 bits in the reference", p.BigInt(), op, q.BigInt())
			}
			if out[i] != want {
				t.Fatalf("%s %s %s: fast %s, want %s", p.BigInt(), op, q.BigInt(), out[i].BigInt(), want.BigInt())
			}
			if s, sok := slow[op](p, q); !sok || s != out[i] {
				t.Fatalf("%s %s %s: fast %s, slow %s (ok=%v)", p.BigInt(), op, q.BigInt(), out[i].BigInt(), s.BigInt(), sok)
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("test data exercised only one path: accepted %d, refused %d", accepted, refused)
	}
}

// TestDecimalSlowArithMatchesBig checks the 128-bit kernels (the fallback)
// against math/big on the same value mix, overflow included.
func TestDecimalSlowArithMatchesBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for iter := 0; iter < 20000; iter++ {
		p, q := randDec(rng, true), randDec(rng, true)
		for op, f := range map[physical.BinaryOp]func(a, b decimal128.Num) (decimal128.Num, bool){
			physical.OpAdd: addDec, physical.OpSub: subDec, physical.OpMul: mulDec,
		} {
			got, ok := f(p, q)
			want, wok := refArith(op, p, q)
			if ok != wok || (ok && got != want) {
				t.Fatalf("%s %s %s: got %s ok=%v, want %s ok=%v", p.BigInt(), op, q.BigInt(), got.BigInt(), ok, want.BigInt(), wok)
			}
		}
	}
}

// TestDecimalFastCompareMatchesSlow compares the int64 comparison kernels
// with the 128-bit ones, for every operator, array/scalar and array/array,
// on lengths that are and are not multiples of eight.
func TestDecimalFastCompareMatchesSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	ops := []physical.BinaryOp{physical.OpEq, physical.OpLt, physical.OpLtEq, physical.OpGt, physical.OpGtEq}
	for iter := 0; iter < 3000; iter++ {
		n := rng.IntN(70)
		wide := rng.IntN(4) == 0
		x := make([]decimal128.Num, n)
		y := make([]decimal128.Num, n)
		for i := range x {
			x[i], y[i] = randDec(rng, wide), randDec(rng, wide)
			if rng.IntN(4) == 0 {
				y[i] = x[i] // equal values matter for Eq / LtEq
			}
		}
		s := randDec(rng, wide)
		if n > 0 && rng.IntN(3) == 0 {
			s = x[rng.IntN(n)]
		}
		op := ops[rng.IntN(len(ops))]
		nb := (n + 7) / 8
		fast, slow := make([]byte, nb), make([]byte, nb)
		allFit := fitsI64(s)
		for _, v := range x {
			allFit = allFit && fitsI64(v)
		}
		ok := cmpDecAS64(op, x, s, fast)
		cmpDecAS(op, x, s, slow)
		if ok != allFit {
			t.Fatalf("%s scalar: fast path accepted=%v, all fit=%v", op, ok, allFit)
		}
		if ok && string(fast) != string(slow) {
			t.Fatalf("%s scalar %s over %v: fast %08b, slow %08b", op, s.BigInt(), x, fast, slow)
		}
		clear(fast)
		clear(slow)
		for _, v := range y {
			allFit = allFit && fitsI64(v)
		}
		allFitAA := true
		for i := range x {
			allFitAA = allFitAA && fitsI64(x[i]) && fitsI64(y[i])
		}
		ok = cmpDecAA64(op, x, y, fast)
		cmpDecAA(op, x, y, slow)
		if ok != allFitAA {
			t.Fatalf("%s arrays: fast path accepted=%v, all fit=%v", op, ok, allFitAA)
		}
		if ok && string(fast) != string(slow) {
			t.Fatalf("%s arrays %v vs %v: fast %08b, slow %08b", op, x, y, fast, slow)
		}
	}
}

// TestCompareKernelsMatchNaive checks the eight-lane comparison kernels
// against a per-row comparison for every operator and several lengths.
func TestCompareKernelsMatchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	ops := []physical.BinaryOp{physical.OpEq, physical.OpLt, physical.OpLtEq, physical.OpGt, physical.OpGtEq}
	naive := func(op physical.BinaryOp, a, b int64) bool {
		switch op {
		case physical.OpEq:
			return a == b
		case physical.OpLt:
			return a < b
		case physical.OpLtEq:
			return a <= b
		case physical.OpGt:
			return a > b
		}
		return a >= b
	}
	for _, n := range []int{0, 1, 7, 8, 9, 16, 63, 1000} {
		a := make([]int64, n)
		b := make([]int64, n)
		for i := range a {
			a[i], b[i] = rng.Int64N(5), rng.Int64N(5)
		}
		for _, op := range ops {
			for _, scalar := range []bool{false, true} {
				bm := make([]byte, (n+7)/8)
				var bs []int64
				if !scalar {
					bs = b
				}
				cmpDispatch(op, a, bs, 2, bm)
				for i := range a {
					want := naive(op, a[i], 2)
					if !scalar {
						want = naive(op, a[i], b[i])
					}
					if got := bm[i>>3]>>(i&7)&1 == 1; got != want {
						t.Fatalf("n=%d %s scalar=%v row %d: got %v want %v", n, op, scalar, i, got, want)
					}
				}
				if n%8 != 0 && bm[len(bm)-1]>>(n%8) != 0 {
					t.Fatalf("n=%d %s: bits set past the end", n, op)
				}
			}
		}
	}
}

// TestDecimalEvalFastAndFallback runs decimal arithmetic and comparisons
// through the evaluator over batches that take the fast path, batches with
// one value outside the int64 range (fallback), and a batch whose product
// overflows 128 bits (an error, also when other rows fit).
func TestDecimalEvalFastAndFallback(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	dt := tDec(38, 2)
	rng := rand.New(rand.NewPCG(19, 20))
	a, b := col(0, "a", dt), col(1, "b", dt)
	exprs := []struct {
		e  physical.Expr
		op physical.BinaryOp
	}{
		{bin(physical.OpAdd, a, b, dt), physical.OpAdd},
		{bin(physical.OpSub, a, b, dt), physical.OpSub},
		{bin(physical.OpMul, a, b, tDec(38, 4)), physical.OpMul},
	}
	for batch := 0; batch < 40; batch++ {
		n := 1 + rng.IntN(100)
		wide := batch%3 == 0
		xs, ys := make([]any, n), make([]any, n)
		for i := range xs {
			xs[i], ys[i] = randDec(rng, wide), randDec(rng, wide)
			if rng.IntN(10) == 0 {
				xs[i] = nil
			}
		}
		xa, ya := buildArray(mem, dt, xs), buildArray(mem, dt, ys)
		sch := arrow.NewSchema([]arrow.Field{{Name: "a", Type: dt, Nullable: true}, {Name: "b", Type: dt, Nullable: true}}, nil)
		rec := array.NewRecordBatch(sch, []arrow.Array{xa, ya}, int64(n))
		xa.Release()
		ya.Release()
		for _, c := range exprs {
			ev, err := Compile(c.e)
			if err != nil {
				t.Fatal(err)
			}
			// the reference: NULL rows are skipped, any other row that
			// overflows makes the whole batch fail
			wantErr := false
			for i := range xs {
				if xs[i] == nil {
					continue
				}
				if _, ok := refArith(c.op, xs[i].(decimal128.Num), ys[i].(decimal128.Num)); !ok {
					wantErr = true
				}
			}
			out, err := ev.Eval(ctx, mem, rec)
			if wantErr {
				if err == nil {
					out.Release()
					t.Fatalf("batch %d %s: no overflow error", batch, c.e)
				}
				continue
			}
			if err != nil {
				t.Fatalf("batch %d %s: %v", batch, c.e, err)
			}
			got := out.(*array.Decimal128)
			for i := range xs {
				if xs[i] == nil {
					if got.IsValid(i) {
						t.Fatalf("batch %d %s row %d: want NULL", batch, c.e, i)
					}
					continue
				}
				want, _ := refArith(c.op, xs[i].(decimal128.Num), ys[i].(decimal128.Num))
				if got.Value(i) != want {
					t.Fatalf("batch %d %s row %d: got %s want %s", batch, c.e, i, got.Value(i).BigInt(), want.BigInt())
				}
			}
			out.Release()
		}
		rec.Release()
	}
}
