package temporal

import (
	"math/rand"
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	us := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"2024-01-02 03:04:05", us("2024-01-02 03:04:05")},
		{"2024-01-02T03:04:05.5", us("2024-01-02 03:04:05.5")},
		{" 2024-01-02 ", us("2024-01-02 00:00:00")},
		{"2024-1-2 3:04", us("2024-01-02 03:04:00")},
		{"2024-02-29 23:59:59.9999999", us("2024-02-29 23:59:59.999999")},
		{"2024-01-02 03:04:05Z", us("2024-01-02 03:04:05")},
		{"2024-01-02 03:04:05+02", us("2024-01-02 01:04:05")},
		{"2024-01-02 03:04:05 -0130", us("2024-01-02 04:34:05")},
		{"1969-12-31 23:59:59.5", -500000},
		{"2024-01-01 24:00:00", us("2024-01-02 00:00:00")},
	} {
		got, ok := ParseTimestamp(c.in)
		if !ok || got != c.want {
			t.Errorf("ParseTimestamp(%q) = %d, %v; want %d", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{"", "2024", "2024-13-01", "2023-02-29", "2024-01-01 25:00", "2024-01-01 10:60", "2024-01-01 10:00:60",
		"2024-01-01x10:00", "2024-01-01 10:00:00.", "2024-01-01 10:00:00+25", "24-01-01", "2024-01-01 10", "2024-01-01 24:00:01"} {
		if v, ok := ParseTimestamp(bad); ok {
			t.Errorf("ParseTimestamp(%q) = %d, want a failure", bad, v)
		}
	}
}

func TestTimestampText(t *testing.T) {
	for _, c := range []struct {
		us   int64
		want string
	}{
		{0, "1970-01-01 00:00:00"},
		{-1, "1969-12-31 23:59:59.999999"},
		{1500000, "1970-01-01 00:00:01.5"},
		{1709251199999999, "2024-02-29 23:59:59.999999"},
		{-62135596800000000, "0001-01-01 00:00:00"},
	} {
		if got := FormatTimestamp(c.us); got != c.want {
			t.Errorf("FormatTimestamp(%d) = %q, want %q", c.us, got, c.want)
		}
	}
	// Every timestamp from year 1 to 9999 reads back as itself.
	r := rand.New(rand.NewSource(1))
	lo, hi := int64(-62135596800000000), int64(253402300799999999)
	for i := 0; i < 20000; i++ {
		us := lo + r.Int63n(hi-lo)
		if i%3 == 0 {
			us -= us % MicrosPerSecond // whole seconds: no fraction printed
		}
		s := FormatTimestamp(us)
		back, ok := ParseTimestamp(s)
		if !ok || back != us {
			t.Fatalf("%d formats as %q, which reads back as %d, %v", us, s, back, ok)
		}
		if tm := time.UnixMicro(us).UTC(); tm.Format("2006-01-02 15:04:05.999999") != s {
			t.Fatalf("%d: %q, time package says %q", us, s, tm.Format("2006-01-02 15:04:05.999999"))
		}
	}
}

func TestParseTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"00:00", 0}, {"12:34:56", 12*MicrosPerHour + 34*MicrosPerMinute + 56*MicrosPerSecond},
		{"23:59:59.999999", MicrosPerDay - 1}, {"1:02:03.5", MicrosPerHour + 2*MicrosPerMinute + 3500000},
	} {
		if got, ok := ParseTime(c.in); !ok || got != c.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d", c.in, got, ok, c.want)
		}
		if c.in[1] != ':' && FormatTime(c.want) != c.in && len(c.in) == 8 {
			t.Errorf("FormatTime(%d) = %q, want %q", c.want, FormatTime(c.want), c.in)
		}
	}
	for _, bad := range []string{"", "12", "12:3", "123:00", "12:00:5", "12:60", "24:00:01", "ab:cd"} {
		if _, ok := ParseTime(bad); ok {
			t.Errorf("ParseTime(%q) succeeded", bad)
		}
	}
}

func TestInterval(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"1 year 2 months 3 days 04:05:06", "1 year 2 mons 3 days 04:05:06"},
		{"1 mon", "1 mon"},
		{"-1 year 2 months", "-10 mons"},
		{"-1 day +02:00", "-1 days +02:00:00"},
		{"1 day -02:00", "1 day -02:00:00"},
		{"1.5 years", "1 year 6 mons"},
		{"1.5 months", "1 mon 15 days"},
		{"1.5 days", "1 day 12:00:00"},
		{"-1.5 days", "-1 days -12:00:00"},
		{"90 minutes", "01:30:00"},
		{"100 hours", "100:00:00"},
		{"2 days ago", "-2 days"},
		{"3d4h", "3 days 04:00:00"},
		{"0 seconds", "00:00:00"},
		{"7 us", "00:00:00.000007"},
		{"1 century 1 decade", "110 years"},
		{"@ 1 week", "7 days"},
		{"90", "00:01:30"},
	} {
		iv, ok := ParseInterval(c.in)
		if !ok {
			t.Errorf("ParseInterval(%q) failed", c.in)
			continue
		}
		if got := FormatInterval(iv); got != c.want {
			t.Errorf("ParseInterval(%q) formats as %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "ago", "one day", "1 fortnight", "1 day 25:61", "1:2", "day 1", "1e400 days"} {
		if iv, ok := ParseInterval(bad); ok {
			t.Errorf("ParseInterval(%q) = %v, want a failure", bad, iv)
		}
	}
	// Every interval's text reads back as the same parts.
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 20000; i++ {
		iv := Interval{Months: int32(r.Intn(2001) - 1000), Days: int32(r.Intn(2001) - 1000), Nanoseconds: (r.Int63n(2e17) - 1e17) / 1000 * 1000}
		switch i % 4 {
		case 0:
			iv.Months = 0
		case 1:
			iv.Days = 0
		case 2:
			iv.Nanoseconds = iv.Nanoseconds / 1e9 * 1e9
		}
		s := FormatInterval(iv)
		back, ok := ParseInterval(s)
		if !ok || back != iv {
			t.Fatalf("%+v formats as %q, which reads back as %+v, %v", iv, s, back, ok)
		}
	}
}

func TestIntervalArithmetic(t *testing.T) {
	ts := func(s string) int64 {
		v, ok := ParseTimestamp(s)
		if !ok {
			t.Fatalf("bad timestamp %q", s)
		}
		return v
	}
	iv := func(s string) Interval {
		v, ok := ParseInterval(s)
		if !ok {
			t.Fatalf("bad interval %q", s)
		}
		return v
	}
	for _, c := range []struct {
		ts, iv string
		sign   int
		want   string
	}{
		{"2024-01-31 10:00", "1 month", 1, "2024-02-29 10:00:00"},
		{"2023-01-31 10:00", "1 month", 1, "2023-02-28 10:00:00"},
		{"2024-02-29 00:00", "1 year", 1, "2025-02-28 00:00:00"},
		{"2024-02-29 00:00", "1 year", -1, "2023-02-28 00:00:00"},
		{"2024-03-31 00:00", "1 month 1 day", -1, "2024-02-28 00:00:00"},
		{"2024-01-31 23:00", "1 month 2 hours", 1, "2024-03-01 01:00:00"},
		{"1970-01-01 00:00", "1 microsecond", -1, "1969-12-31 23:59:59.999999"},
	} {
		if got := FormatTimestamp(AddToTimestamp(ts(c.ts), iv(c.iv), c.sign)); got != c.want {
			t.Errorf("%s %+d * %s = %s, want %s", c.ts, c.sign, c.iv, got, c.want)
		}
	}
	if got := FormatInterval(SubTimestamps(ts("2024-01-01"), ts("2024-01-02 02:00"))); got != "-1 days -02:00:00" {
		t.Errorf("SubTimestamps = %s", got)
	}
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1 month", "30 days", 0}, {"1 day", "24 hours", 0}, {"1 month", "29 days", 1},
		{"-1 day", "0 days", -1}, {"1 year", "366 days", -1}, {"1 day 1 us", "24 hours", 1},
	} {
		if got := CompareIntervals(iv(c.a), iv(c.b)); got != c.want {
			t.Errorf("CompareIntervals(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		iv   string
		f    float64
		div  bool
		want string
	}{
		{"1 day", 2.5, false, "2 days 12:00:00"}, {"1 month", 1.5, false, "1 mon 15 days"},
		{"1 year", 12, true, "1 mon"}, {"1 month", 2, true, "15 days"}, {"1 hour", 4, true, "00:15:00"},
		{"1 day 01:00", -2, false, "-2 days -02:00:00"},
	} {
		var got Interval
		var ok bool
		if c.div {
			got, ok = DivInterval(iv(c.iv), c.f)
		} else {
			got, ok = MulInterval(iv(c.iv), c.f)
		}
		if !ok || FormatInterval(got) != c.want {
			t.Errorf("%s by %v (div %v) = %s, %v; want %s", c.iv, c.f, c.div, FormatInterval(got), ok, c.want)
		}
	}
	if _, ok := DivInterval(iv("1 day"), 0); ok {
		t.Error("division by zero succeeded")
	}
	if _, ok := MulInterval(iv("1000000000 days"), 10); ok {
		t.Error("overflow of the days succeeded")
	}
	if _, ok := AddIntervals(Interval{Nanoseconds: 1 << 62}, Interval{Nanoseconds: 1 << 62}, 1); ok {
		t.Error("overflow of the time succeeded")
	}
}

func TestAge(t *testing.T) {
	ts := func(s string) int64 {
		v, ok := ParseTimestamp(s)
		if !ok {
			t.Fatalf("bad timestamp %q", s)
		}
		return v
	}
	for _, c := range []struct{ a, b, want string }{
		{"2024-03-01", "2024-01-31", "1 mon 1 day"},
		{"2024-01-31", "2024-03-01", "-1 mons -1 days"},
		{"2025-02-28", "2024-02-29", "11 mons 28 days"},
		{"2024-02-29 10:00", "2023-03-01 12:00", "11 mons 27 days 22:00:00"},
		{"2024-05-06 07:08:09", "1999-05-06 07:08:09", "25 years"},
		{"2024-01-01", "2024-01-01", "00:00:00"},
	} {
		if got := FormatInterval(Age(ts(c.a), ts(c.b))); got != c.want {
			t.Errorf("Age(%s, %s) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}
