package shuffle

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quiverdb/quiver/physical"
)

// TestInlineReader reads an inline file back, and reports bytes that are
// not a whole Arrow IPC stream (they came over the wire) as an error naming
// the location, never a panic.
func TestInlineReader(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	b := zoneBatch(t, []*int32{p(int32(1)), nil, p(int32(3))}, []*string{p("a"), p("b"), nil})
	defer b.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(zoneSchema))
	if err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	whole := buf.Bytes()
	ctx := context.Background()
	// read drains an inline location of data and returns its rows, or the
	// first error.
	read := func(data []byte) (int64, error) {
		op := NewInlineReader(mem, physical.PartitionLocation{JobID: "j", StageID: 1, Inline: data})
		defer op.Close()
		if err := op.Open(ctx); err != nil {
			return 0, err
		}
		var rows int64
		for {
			got, err := op.Next(ctx)
			if errors.Is(err, io.EOF) {
				return rows, nil
			}
			if err != nil {
				return rows, err
			}
			rows += got.NumRows()
			got.Release()
		}
	}
	if rows, err := read(whole); err != nil || rows != 3 {
		t.Fatalf("the whole stream: %d rows, %v", rows, err)
	}
	for name, data := range map[string][]byte{
		"garbage":   []byte("not an arrow stream at all, no"),
		"truncated": whole[:len(whole)/2],
		"flipped":   append(append([]byte{}, whole[:12]...), bytes.Repeat([]byte{0xff}, len(whole)-12)...),
	} {
		if _, err := read(data); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
