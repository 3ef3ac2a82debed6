package physical_test

import (
	"strings"
	"testing"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
)

func TestValidJobID(t *testing.T) {
	for id, want := range map[string]bool{
		"a": true, "job_1-B": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "../etc": false, "a/b": false,
		"a b": false, "a.b": false, "é": false, "a\x00": false,
	} {
		if got := physical.ValidJobID(id); got != want {
			t.Errorf("ValidJobID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestParseCompression(t *testing.T) {
	for in, want := range map[string]physical.Compression{"": physical.CompressLZ4, "lz4": physical.CompressLZ4, "zstd": physical.CompressZstd, "none": physical.CompressNone} {
		if got, err := physical.ParseCompression(in); err != nil || got != want {
			t.Errorf("ParseCompression(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"gzip", "LZ4 ", "snappy"} {
		_, err := physical.ParseCompression(in)
		if !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), "lz4, zstd, none") || !strings.Contains(err.Error(), in) {
			t.Errorf("ParseCompression(%q): %v, want a planning error naming the value and the choices", in, err)
		}
	}
}
