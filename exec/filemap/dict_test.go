package filemap

import (
	"fmt"
	"sync"
	"testing"

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
