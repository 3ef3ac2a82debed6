package settings_test

import (
	"flag"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/settings"
)

func TestParseBytes(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1048576": 1 << 20, "none": 0, "Unlimited": 0, " 12 ": 12,
		"1B": 1, "2k": 2 << 10, "2KB": 2 << 10, "2KiB": 2 << 10,
		"512MB": 512 << 20, "512mib": 512 << 20, "512 M": 512 << 20,
		"4GiB": 4 << 30, "2GB": 2 << 30, "2 gb": 2 << 30, "1.5G": 3 << 29, ".5K": 512,
		"1T": 1 << 40, "1TiB": 1 << 40,
		"0.3KB":               307, // fractions round down to whole bytes
		"9223372036854775807": math.MaxInt64,
		"8388607TiB":          8388607 << 40,
	}
	for in, want := range good {
		got, err := settings.ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                    "want a size",
		"lots":                "want a size",
		"-1":                  "want a size",
		"-1GB":                "want a size",
		"1.2.3":               "want a size",
		".":                   "want a size",
		"GB":                  "want a size",
		"1PB":                 "want a size",
		"1 G B":               "want a size",
		"1e3":                 "want a size",
		"0x10":                "want a size",
		"NaN":                 "want a size",
		"inf":                 "want a size",
		"9223372036854775808": "too large",
		"8388608TiB":          "too large",
	}
	for in, want := range bad {
		_, err := settings.ParseBytes(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "\""+in+"\"") {
			t.Errorf("ParseBytes(%q) error %v: want one saying %q and quoting the input", in, err, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "0s": 0, "300ms": 300 * time.Millisecond, " 10m ": 10 * time.Minute, "1h30m": 90 * time.Minute} {
		if got, err := settings.ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "10", "-1s", "ten minutes", "1d"} {
		if _, err := settings.ParseDuration(in); err == nil || !strings.Contains(err.Error(), "want a non-negative duration") || !strings.Contains(err.Error(), "\""+in+"\"") {
			t.Errorf("ParseDuration(%q) error %v: want one saying what is wanted and quoting the input", in, err)
		}
	}
}

// TestRegistry checks the table itself: sorted unique names, defaults that
// parse to themselves, enums with their default first, a description each.
func TestRegistry(t *testing.T) {
	names := settings.Names()
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("names not sorted and unique: %v", names)
	}
	seen := map[string]bool{}
	for _, s := range settings.All {
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			if seen[n] || n != strings.ToLower(n) {
				t.Errorf("%s: name %q is repeated or not lower case", s.Name, n)
			}
			seen[n] = true
			if got, ok := settings.Lookup(strings.ToUpper(n)); !ok || got != s {
				t.Errorf("Lookup(%q) = %v, %v", strings.ToUpper(n), got, ok)
			}
		}
		if s.Description == "" {
			t.Errorf("%s has no description", s.Name)
		}
		if s.Default == "" {
			if s.DefaultDoc == "" {
				t.Errorf("%s: a computed default needs a DefaultDoc", s.Name)
			}
			continue
		}
		if c, err := s.Parse(s.Default); err != nil || c != s.Default {
			t.Errorf("%s: default %q is not canonical: %q, %v", s.Name, s.Default, c, err)
		}
		if s.Kind == settings.Enum && s.Values[0] != s.Default {
			t.Errorf("%s: the default %q is not the first value of %v", s.Name, s.Default, s.Values)
		}
	}
	if _, ok := settings.Lookup("quiver.no_such"); ok {
		t.Error("Lookup found an unknown setting")
	}
}

func TestSettingParse(t *testing.T) {
	for _, c := range []struct {
		s        *settings.Setting
		in, want string
	}{
		{settings.TargetPartitions, " 8 ", "8"},
		{settings.TargetPartitions, "1024", "1024"},
		{settings.BatchSize, "1", "1"},
		{settings.MemoryLimit, "4GiB", "4294967296"},
		{settings.MemoryLimit, "unlimited", "0"},
		{settings.CacheMaxBytes, "2GB", "2147483648"},
		{settings.CacheTTL, "90m", "1h30m"},
		{settings.CacheTTL, "120m", "2h"},
		{settings.CacheTTL, "600s", "10m"},
		{settings.CacheTTL, "1.5s", "1.5s"},
		{settings.CacheTTL, "1h0m1s", "1h0m1s"},
		{settings.SessionIdleTimeout, "0", "0s"},
		{settings.ExchangeMode, "SHUFFLE", "shuffle"},
		{settings.ShuffleCompression, "Zstd", "zstd"},
		{settings.ShuffleCompression, "none", "none"},
		{settings.TimeZone, " Europe/Berlin ", "Europe/Berlin"},
		{settings.TimeZone, "+05:30", "+05:30"},
		{settings.TimeZone, "utc", "utc"},
	} {
		if got, err := c.s.Parse(c.in); err != nil || got != c.want {
			t.Errorf("%s.Parse(%q) = %q, %v; want %q", c.s.Name, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		s        *settings.Setting
		in, want string
	}{
		{settings.TargetPartitions, "0", "want an integer from 1 to 1024"},
		{settings.TargetPartitions, "1025", "want an integer from 1 to 1024"},
		{settings.TargetPartitions, "many", "want an integer from 1 to 1024"},
		{settings.BatchSize, "1.5", "want an integer from 1 to 1048576"},
		{settings.MemoryLimit, "lots", "want a size"},
		{settings.CacheTTL, "-1m", "want a non-negative duration"},
		{settings.ExchangeMode, "memory", "want one of auto, shuffle"},
		{settings.TimeZone, "Mars/Olympus", "want a time zone"},
		{settings.TimeZone, "+99", "want a time zone"},
		{settings.ShuffleCompression, "gzip", "want one of lz4, zstd, none"},
	} {
		if _, err := c.s.Parse(c.in); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "\""+c.in+"\"") {
			t.Errorf("%s.Parse(%q) error %v: want %q and the value", c.s.Name, c.in, err, c.want)
		}
	}
}

func TestDisplay(t *testing.T) {
	for in, want := range map[string]string{"0": "unlimited", "4294967296": "4GiB", "1572864": "1536KiB", "1000": "1000", "1099511627776": "1TiB"} {
		if got := settings.MemoryLimit.Display(in); got != want {
			t.Errorf("Display(%q) = %q, want %q", in, got, want)
		}
	}
	if got := settings.CacheTTL.DefaultText(); got != "0s (or the scheduler's -cache-ttl)" {
		t.Errorf("cache ttl default text %q", got)
	}
	if got := settings.TargetPartitions.DefaultText(); !strings.Contains(got, "executors' cores") {
		t.Errorf("target partitions default text %q", got)
	}
}

func TestValues(t *testing.T) {
	var v settings.Values
	if n, given := v.Int(settings.BatchSize); given || n != 8192 {
		t.Errorf("default batch size %d, %v", n, given)
	}
	if n, given := v.Int(settings.TargetPartitions); given || n != 0 {
		t.Errorf("unset target partitions %d, %v: a computed default is the reader's", n, given)
	}
	if got := v.Text(settings.ShuffleCompression); got != "lz4" {
		t.Errorf("default compression %q", got)
	}
	w, err := v.With("DataFusion.Execution.Target_Partitions", "3")
	if err != nil {
		t.Fatal(err)
	}
	if n, given := w.Int(settings.TargetPartitions); !given || n != 3 {
		t.Errorf("target partitions %d, %v after an alias SET", n, given)
	}
	if v.Len() != 0 {
		t.Error("With changed its receiver")
	}
	w, err = w.With("quiver.memory_limit", "1.5GiB")
	if err != nil {
		t.Fatal(err)
	}
	if d, given := w.Duration(settings.CacheTTL); given || d != 0 {
		t.Errorf("unset ttl %v %v", d, given)
	}
	wire := w.Wire()
	if len(wire) != 2 || wire["quiver.target_partitions"] != "3" || wire["quiver.memory_limit"] != "1610612736" {
		t.Errorf("wire %v: want exactly the two settings given, canonical", wire)
	}
	wire["quiver.batch_size"] = "1" // the caller's copy
	if w.Len() != 2 {
		t.Error("Wire shares its map")
	}

	// Bad input: an error naming the setting and the value, nothing changed.
	for name, val := range map[string]string{"quiver.memory_limit": "lots", "quiver.target_partitions": "0", "quiver.shuffle_compression": "gzip"} {
		got, err := w.With(name, val)
		if !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "\""+val+"\"") {
			t.Errorf("With(%s, %s): %v; want a planning error naming both", name, val, err)
		}
		if got.Len() != 2 || w.Len() != 2 || got.Text(settings.TargetPartitions) != "3" {
			t.Errorf("With(%s, %s) failed but changed the values", name, val)
		}
	}
	if _, err := w.With("quiver.no_such", "1"); err == nil || !strings.Contains(err.Error(), `unknown setting "quiver.no_such"`) || !strings.Contains(err.Error(), "quiver.batch_size") {
		t.Errorf("unknown setting: %v", err)
	}

	// Decode: what With wrote, read back; errors say where.
	d, err := settings.Decode("scheduler", wire)
	if err != nil || d.Text(settings.BatchSize) != "1" || d.Text(settings.MemoryLimit) != "1610612736" {
		t.Fatalf("Decode(%v) = %v, %v", wire, d.Wire(), err)
	}
	if _, err := settings.Decode("executor", map[string]string{"quiver.batch_size": "1", "quiver.target_partitions": "zero"}); !qerr.Is(err, qerr.Plan) ||
		err.Error() != `planning error: executor: setting quiver.target_partitions: want an integer from 1 to 1024, got "zero"` {
		t.Errorf("Decode of a bad value: %v", err)
	}
	if _, err := settings.Decode("scheduler", map[string]string{"x": "1"}); err == nil || !strings.Contains(err.Error(), `scheduler: unknown setting "x"`) {
		t.Errorf("Decode of an unknown setting: %v", err)
	}
	m := d.Merge(settings.Values{})
	if m.Len() != 3 {
		t.Errorf("merge with nothing: %v", m.Wire())
	}
	over, _ := settings.Values{}.With("quiver.batch_size", "7")
	if m = d.Merge(over); m.Text(settings.BatchSize) != "7" || d.Text(settings.BatchSize) != "1" {
		t.Errorf("merge: %v (and d %v)", m.Wire(), d.Wire())
	}
}

func TestFlagVar(t *testing.T) {
	fs := flag.NewFlagSet("quiver scheduler", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var maxBytes int64 = -1
	var ttl time.Duration = -1
	settings.CacheMaxBytes.FlagVar(fs, &maxBytes)
	settings.CacheTTL.FlagVar(fs, &ttl)
	if maxBytes != 0 || ttl != 0 {
		t.Errorf("flags start at %d, %v; want the registry defaults", maxBytes, ttl)
	}
	if err := fs.Parse([]string{"-cache-max-bytes", "4GiB", "-cache-ttl", "90m"}); err != nil {
		t.Fatal(err)
	}
	if maxBytes != 4<<30 || ttl != 90*time.Minute {
		t.Errorf("parsed %d, %v", maxBytes, ttl)
	}
	err := fs.Parse([]string{"-cache-max-bytes", "lots"})
	if err == nil || !strings.Contains(err.Error(), "-cache-max-bytes") || !strings.Contains(err.Error(), `"lots"`) || maxBytes != 4<<30 {
		t.Errorf("bad flag: %v (value now %d)", err, maxBytes)
	}
	if u := fs.Lookup("cache-max-bytes").Usage; !strings.Contains(u, "quiver.cache.max_bytes") {
		t.Errorf("usage %q does not name the setting", u)
	}
}
