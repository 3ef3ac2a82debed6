package parquet

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/quiverdb/quiver/exec/memcheck"
)

// tpcdsDir holds the TPC-DS SF 0.01 tables as DuckDB wrote them (Parquet
// v1, SNAPPY, every column OPTIONAL, decimals on INT32 and INT64): files
// from another writer than the arrow-go files the other tests make.
const tpcdsDir = "../../../testdata/tpcds/sf0.01"

// TestParquetOtherWriters reads every DuckDB-written TPC-DS file through
// our direct page decoder (with and without its helper goroutine) and
// through arrow-go's record reader, at two batch sizes, and requires the
// same values from each. The direct path must actually be chosen for every
// file: all their columns are flat types it decodes.
func TestParquetOtherWriters(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(tpcdsDir, "*.parquet"))
	if err != nil || len(paths) != 24 {
		t.Fatalf("want the 24 TPC-DS files in %s, found %d (%v)", tpcdsDir, len(paths), err)
	}
	mem := memcheck.New(t)
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".parquet")
		t.Run(name, func(t *testing.T) {
			schema := fileSchema(t, path)
			var ref arrow.RecordBatch
			defer func() {
				if ref != nil {
					ref.Release()
				}
			}()
			for _, mode := range []readPath{{false, false}, {true, true}, {true, false}} {
				for _, bs := range []int{1000, 8192} {
					mode.use(t)
					if mode.direct && !directChosen(t, mem, path, schema) {
						t.Fatalf("%s: the direct path was not chosen", mode)
					}
					got := scanFile(t, mem, path, schema, bs)
					if ref == nil {
						ref = got
						continue
					}
					if !array.RecordEqual(ref, got) {
						t.Errorf("%s, batch size %d: values differ from the record reader's", mode, bs)
					}
					got.Release()
				}
			}
			if ref.NumRows() == 0 {
				t.Errorf("no rows read")
			}
		})
	}
}

// fileSchema is the file's Arrow schema as arrow-go maps its footer.
func fileSchema(t *testing.T, path string) *arrow.Schema {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	s, err := pqarrow.FromParquet(rdr.MetaData().Schema, nil, rdr.MetaData().KeyValueMetadata())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// directChosen reports whether opening path under the current read path
// picks the direct decoder.
func directChosen(t *testing.T, mem memory.Allocator, path string, schema *arrow.Schema) bool {
	t.Helper()
	r, err := Open(context.Background(), path, wholeFile, schemaOptions(mem, schema, 1024))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.direct != nil
}

// schemaOptions reads every column of schema, bs rows a batch.
func schemaOptions(mem memory.Allocator, schema *arrow.Schema, bs int) Options {
	names := make([]string, schema.NumFields())
	for i := range names {
		names[i] = schema.Field(i).Name
	}
	return Options{Table: "t", Columns: names, BatchRows: bs, Mem: mem, OnlyPartition: true}
}

// scanFile reads all of path as one batch, bs rows per batch read.
func scanFile(t *testing.T, mem memory.Allocator, path string, schema *arrow.Schema, bs int) arrow.RecordBatch {
	t.Helper()
	got, err := readAll(path, wholeFile, schemaOptions(mem, schema, bs))
	defer func() {
		for _, b := range got {
			b.Release()
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]arrow.Array, schema.NumFields())
	rows := int64(0)
	for _, b := range got {
		rows += b.NumRows()
	}
	for c := range cols {
		chunks := make([]arrow.Array, len(got))
		for j, b := range got {
			chunks[j] = b.Column(c)
		}
		if len(chunks) == 0 {
			cols[c] = array.MakeArrayOfNull(mem, schema.Field(c).Type, 0)
			continue
		}
		all, err := array.Concatenate(chunks, mem)
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = all
	}
	out := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return out
}
