package eval

import (
	"math/rand"
	"testing"
	"time"
)

// Formatting with a pattern that has every field and reading the text back
// with the same pattern gives the timestamp again, and the text agrees with
// the time package's.
func TestTimestampFormatsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	lo, hi := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).UnixMicro()
	pg := compilePGFormat("YYYY-MM-DD HH24:MI:SS.US")
	pg12 := compilePGFormat("FMDay, DD Mon YYYY HH12:MI:SS.US AM (DDD)")
	c := compileStrftime("%A %d %B %Y %I:%M:%S.%f %p %j")
	for i := 0; i < 5000; i++ {
		us := lo + r.Int63n(hi-lo)
		tm := time.UnixMicro(us).UTC()
		for _, f := range []struct {
			pieces []fmtPiece
			layout string
		}{
			{pg, "2006-01-02 15:04:05.000000"},
			{pg12, "Monday, 02 Jan 2006 03:04:05.000000 PM (002)"},
			{c, "Monday 02 January 2006 03:04:05.000000 PM 002"},
		} {
			s := appendFormatted(nil, f.pieces, us)
			if want := tm.Format(f.layout); string(s) != want {
				t.Fatalf("%d formats as %q, want %q", us, s, want)
			}
			back, ok := parseFormatted(s, f.pieces)
			if !ok || back != us {
				t.Fatalf("%q reads back as %d, %v; want %d", s, back, ok, us)
			}
		}
	}
}

func TestParseFormattedRejects(t *testing.T) {
	f := compilePGFormat("YYYY-MM-DD HH24:MI")
	for _, s := range []string{"2024-02-30 10:00", "2024-01-01 24:00", "2024-01-01 10:60", "2024-01-01", "2024-01-01 10:00 x", "abcd-01-01 10:00"} {
		if v, ok := parseFormatted([]byte(s), f); ok {
			t.Errorf("%q read as %d, want a failure", s, v)
		}
	}
	if _, ok := parseFormatted([]byte("13:00 PM"), compilePGFormat("HH12:MI AM")); ok {
		t.Error("hour 13 of a 12-hour clock was accepted")
	}
}
