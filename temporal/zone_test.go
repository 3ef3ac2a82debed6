package temporal

import "testing"

func TestZones(t *testing.T) {
	ny, ok := LoadZone("America/New_York")
	if !ok {
		t.Fatal("America/New_York not found")
	}
	for _, bad := range []string{"", "Mars/Olympus", "+25", "../etc/passwd", "Local"} {
		if _, ok := LoadZone(bad); ok {
			t.Errorf("LoadZone(%q) accepted", bad)
		}
	}
	ist, _ := LoadZone("+05:30")
	utc, _ := LoadZone("UTC")
	ts := func(s string) int64 {
		us, ok := ParseTimestamp(s)
		if !ok {
			t.Fatalf("bad timestamp %q", s)
		}
		return us
	}
	for _, c := range []struct {
		in   string
		zone string
		want string
	}{
		{"2024-01-02 03:04:05", "UTC", "2024-01-02 03:04:05+00"},
		{"2024-01-02 03:04:05", "America/New_York", "2024-01-02 03:04:05-05"},
		{"2024-07-02 03:04:05", "America/New_York", "2024-07-02 03:04:05-04"},
		{"2024-01-02 03:04:05+02", "America/New_York", "2024-01-01 20:04:05-05"},
		{"2024-01-02 03:04:05.5 Europe/Berlin", "UTC", "2024-01-02 02:04:05.5+00"},
		{"2024-01-02 03:04:05", "+05:30", "2024-01-02 03:04:05+05:30"},
		// In the spring-forward gap: read with the offset before it.
		{"2024-03-10 02:30:00", "America/New_York", "2024-03-10 03:30:00-04"},
		// In the fall-back overlap: the later instant.
		{"2024-11-03 01:30:00", "America/New_York", "2024-11-03 01:30:00-05"},
		{"2024-03-10", "America/New_York", "2024-03-10 00:00:00-05"},
	} {
		loc, _ := LoadZone(c.zone)
		us, ok := ParseTimestampTZ(c.in, loc)
		if !ok {
			t.Errorf("ParseTimestampTZ(%q) failed", c.in)
			continue
		}
		if got := FormatTimestampTZ(us, loc); got != c.want {
			t.Errorf("%q in %s: got %s, want %s", c.in, c.zone, got, c.want)
		}
	}
	if _, ok := ParseTimestampTZ("2024-01-02 03:04 Nowhere/Zone", utc); ok {
		t.Error("unknown zone name accepted")
	}
	// Across the spring-forward change a day is 23 hours and keeps the
	// wall-clock time; the time part of an interval is elapsed time.
	start, _ := ParseTimestampTZ("2024-03-09 12:00", ny)
	for _, c := range []struct {
		iv   Interval
		want string
	}{
		{Interval{Days: 1}, "2024-03-10 12:00:00-04"},
		{Interval{Nanoseconds: 24 * MicrosPerHour * NanosPerMicro}, "2024-03-10 13:00:00-04"},
		{Interval{Months: 1}, "2024-04-09 12:00:00-04"},
	} {
		if got := FormatTimestampTZ(AddToTimestampTZ(start, c.iv, 1, ny), ny); got != c.want {
			t.Errorf("+ %s: got %s, want %s", FormatInterval(c.iv), got, c.want)
		}
	}
	if got := ToLocal(ts("2024-01-02 00:00:00"), ist); got != ts("2024-01-02 05:30:00") {
		t.Errorf("ToLocal +05:30: %s", FormatTimestamp(got))
	}
}
