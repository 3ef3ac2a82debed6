package physical

import "testing"

// TestFormatBytes: the one way sizes are shown to people (EXPLAIN ANALYZE,
// limit errors, cache lines, bench output): binary units named as such.
func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 3 << 29: "1.5 GiB", 2 << 40: "2.0 TiB", 5 << 50: "5.0 PiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
