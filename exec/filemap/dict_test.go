package filemap

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// stringFile makes a decoded file of two batches of one string column,
// row r of batch b holding fmt.Sprintf("%s-%d", prefix, (b*rows+r)%5).
func stringFile(t *testing.T, prefix string, rows int) *DecodedFile {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	d := &DecodedFile{Schema: schema}
	for b := range 2 {
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for r := range rows {
			sb.Append(fmt.Sprintf("%s-%d", prefix, (b*rows+r)%5))
		}
		a := sb.NewArray()
		sb.Release()
		d.Batches = append(d.Batches, array.NewRecordBatch(schema, []arrow.Array{a}, int64(rows)))
		a.Release()
	}
	d.retain()
	registerDicts(d)
	return d
}

// TestDictBudgetEvicts: readers of several files' columns at once, under a
// budget that holds one column, each get codes that decode to their rows'
// values or none; the budget is never passed; released files give their
// bytes back.
func TestDictBudgetEvicts(t *testing.T) {
	const rows = 1000
	base := DictBytes()
	restore := SetDictBudget(base + rows*2*4 + 1000) // one column's codes and values
	defer restore()
	files := []*DecodedFile{stringFile(t, "a", rows), stringFile(t, "b", rows), stringFile(t, "c", rows)}
	evicted := DictEvictions()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	coded := make([]int, len(files))
	var mu sync.Mutex
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 50 {
				f := files[(g+it)%len(files)]
				for _, b := range f.Batches {
					col := b.Column(0).(*array.String)
					dict, codes, ok := DictCodes(col)
					if used := DictBytes(); used > base+rows*2*4+1000 {
						errs <- fmt.Errorf("dictionaries hold %d bytes, over the budget", used)
						return
					}
					if !ok {
						continue
					}
					for r := range col.Len() {
						if dict.Values[codes[r]] != col.Value(r) {
							errs <- fmt.Errorf("row %d: code %d stands for %q, the row holds %q", r, codes[r], dict.Values[codes[r]], col.Value(r))
							return
						}
					}
					mu.Lock()
					coded[(g+it)%len(files)]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, n := range coded {
		if n == 0 {
			t.Errorf("file %d never got codes", i)
		}
	}
	if DictEvictions() == evicted {
		t.Error("no column was evicted, though the budget holds one")
	}
	for _, f := range files {
		f.Release()
	}
	if used := DictBytes(); used != base {
		t.Errorf("%d bytes held after every file was released, %d before", used, base)
	}
}

// gather builds rows sel of a as a new array.
func gather(a *array.String, sel []int32) *array.String {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	for _, r := range sel {
		sb.Append(a.Value(int(r)))
	}
	return sb.NewArray().(*array.String)
}

// TestDeriveGather: a recorded gather of a coded column, and a gather of
// that, get the column's dictionary and codes that decode to their rows;
// an equal array not recorded, and a gather of a column without codes,
// get none; the entries go once the gathers are collected.
func TestDeriveGather(t *testing.T) {
	live := derivedLive.Load()
	f := stringFile(t, "g", 100)
	defer f.Release()
	src := f.Batches[1].Column(0).(*array.String)
	srcDict, _, ok := DictCodes(src)
	if !ok {
		t.Fatal("the decoded column has no codes")
	}
	check := func(name string, a *array.String) {
		t.Helper()
		dict, codes, ok := DictCodes(a)
		if !ok || dict != srcDict || len(codes) != a.Len() {
			t.Fatalf("%s: codes %v (dictionary shared: %v, %d codes for %d rows)", name, ok, dict == srcDict, len(codes), a.Len())
		}
		for r := range a.Len() {
			if dict.Values[codes[r]] != a.Value(r) {
				t.Fatalf("%s: row %d: code %d stands for %q, the row holds %q", name, r, codes[r], dict.Values[codes[r]], a.Value(r))
			}
		}
	}
	func() {
		sel := []int32{3, 7, 7, 42, 99, 0}
		g1 := gather(src, sel)
		defer g1.Release()
		DeriveGather([]arrow.Array{src}, []arrow.Array{g1}, sel)
		sel[0] = 1 // DeriveGather copied it
		check("gather", g1)
		sel2 := []int32{5, 1, 2}
		g2 := gather(g1, sel2)
		defer g2.Release()
		DeriveGather([]arrow.Array{g1}, []arrow.Array{g2}, sel2)
		check("gather of a gather", g2)
		same := gather(src, []int32{3, 7, 7, 42, 99, 0})
		defer same.Release()
		if _, _, ok := DictCodes(same); ok {
			t.Error("an array not recorded as a gather has codes")
		}
		plain := gather(src, []int32{1, 2})
		defer plain.Release()
		pg := gather(plain, []int32{1})
		defer pg.Release()
		DeriveGather([]arrow.Array{plain}, []arrow.Array{pg}, []int32{1})
		if _, _, ok := DictCodes(pg); ok {
			t.Error("a gather of a column without codes has codes")
		}
	}()
	for range 100 {
		runtime.GC()
		if derivedLive.Load() == live {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d gather entries left after the gathers were collected", derivedLive.Load()-live)
}
