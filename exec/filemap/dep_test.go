package filemap

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// depFile makes a decoded file of batches of (k BIGINT, s VARCHAR): row r
// of batch b has k = key(b, r) and s = name(b, r) (nil: NULL).
func depFile(t *testing.T, batches, rows int, key func(b, r int) *int64, name func(b, r int) *string) *DecodedFile {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	d := &DecodedFile{Schema: schema}
	for b := range batches {
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for r := range rows {
			if k := key(b, r); k != nil {
				kb.Append(*k)
			} else {
				kb.AppendNull()
			}
			if s := name(b, r); s != nil {
				sb.Append(*s)
			} else {
				sb.AppendNull()
			}
		}
		ka, sa := kb.NewArray(), sb.NewArray()
		kb.Release()
		sb.Release()
		d.Batches = append(d.Batches, array.NewRecordBatch(schema, []arrow.Array{ka, sa}, int64(rows)))
		ka.Release()
		sa.Release()
	}
	d.retain()
	registerDicts(d)
	registerInts(d)
	t.Cleanup(d.Release)
	return d
}

func ptr[T any](v T) *T { return &v }

// TestDependency: a string column that follows from an integer column over
// the whole file gets its codes by integer value, computed once for the
// pair; one integer with two strings (in a later batch than its first),
// a NULL on either side, a range too wide, arrays of two batches or two
// files, and arrays of no decoded file get none.
func TestDependency(t *testing.T) {
	const batches, rows = 3, 500
	key := func(b, r int) *int64 { return ptr(int64((b*rows + r*7) % 900)) }
	name := func(b, r int) *string { return ptr(fmt.Sprintf("n-%d", *key(b, r)%40)) }

	good := depFile(t, batches, rows, key, name)
	built := DepsBuilt()
	fd := Dependency(good.Batches[1].Column(0), good.Batches[1].Column(1))
	if fd == nil {
		t.Fatal("no dependency found where the names follow from the keys")
	}
	for b := range batches {
		for r := range rows {
			k, want := *key(b, r), *name(b, r)
			if c := fd.Codes[k-fd.Base]; c < 0 || fd.Dict.Values[c] != want {
				t.Fatalf("key %d: code %d, want the code of %q", k, c, want)
			}
		}
	}
	absent := 0
	for _, c := range fd.Codes {
		if c < 0 {
			absent++
		}
	}
	if int64(len(fd.Codes))-int64(absent) != 900 {
		t.Errorf("%d keys have a code, want the 900 in the file", len(fd.Codes)-absent)
	}
	if again := Dependency(good.Batches[2].Column(0), good.Batches[2].Column(1)); again != fd {
		t.Error("a second batch of the same file did not get the same dependency")
	}
	if n := DepsBuilt() - built; n != 1 {
		t.Errorf("computed %d times, want once", n)
	}

	cases := map[string]*DecodedFile{
		// the last row has key 0, first seen on batch 0's first row
		"a second name in a later batch": depFile(t, batches, rows, func(b, r int) *int64 {
			if b == 2 && r == rows-1 {
				return ptr(int64(0))
			}
			return key(b, r)
		}, func(b, r int) *string {
			if b == 2 && r == rows-1 {
				return ptr("other")
			}
			return name(b, r)
		}),
		"a NULL key":  depFile(t, batches, rows, func(b, r int) *int64 { return map[bool]*int64{true: nil, false: key(b, r)}[b == 1 && r == 3] }, name),
		"a NULL name": depFile(t, batches, rows, key, func(b, r int) *string { return map[bool]*string{true: nil, false: name(b, r)}[b == 2 && r == 9] }),
		"too wide":    depFile(t, batches, rows, func(b, r int) *int64 { return ptr(*key(b, r) * (DepSpanLimit / 100)) }, name),
	}
	for what, f := range cases {
		if fd := Dependency(f.Batches[0].Column(0), f.Batches[0].Column(1)); fd != nil {
			t.Errorf("%s: a dependency was found", what)
		}
	}
	other := depFile(t, batches, rows, key, name)
	if Dependency(good.Batches[0].Column(0), good.Batches[1].Column(1)) != nil {
		t.Error("arrays of two batches got a dependency")
	}
	if Dependency(good.Batches[0].Column(0), other.Batches[0].Column(1)) != nil {
		t.Error("arrays of two files got a dependency")
	}
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	kb.Append(1)
	loose := kb.NewArray()
	kb.Release()
	defer loose.Release()
	if Dependency(loose, good.Batches[0].Column(1)) != nil {
		t.Error("an array of no decoded file got a dependency")
	}
}
