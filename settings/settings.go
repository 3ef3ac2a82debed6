package settings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quiverdb/quiver/physical"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/temporal"
)

// Kind is the type of a setting's values.
type Kind int

const (
	// Int is a whole number from Setting.Min to Setting.Max.
	Int Kind = iota
	// Bytes is a size, as ParseBytes reads it; 0 means no limit.
	Bytes
	// Duration is a non-negative duration, as ParseDuration reads it.
	Duration
	// Enum is one of Setting.Values, case-insensitive.
	Enum
	// Zone is a time zone: an IANA name, UTC, or a fixed UTC offset
	// (temporal.LoadZone).
	Zone
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "integer"
	case Bytes:
		return "size"
	case Duration:
		return "duration"
	case Enum:
		return "enum"
	case Zone:
		return "time zone"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Scope says how far a setting reaches and who applies it. Under local
// execution (no scheduler) the session itself applies every setting.
type Scope int

const (
	// Session settings apply to the session's own jobs; the scheduler
	// reads them when it takes and plans them.
	Session Scope = iota
	// Scheduler settings change the scheduler itself, for every session.
	Scheduler
	// Executor settings apply to the session's tasks; each executor reads
	// them when it runs one.
	Executor
)

func (s Scope) String() string {
	switch s {
	case Session:
		return "session"
	case Scheduler:
		return "scheduler"
	case Executor:
		return "executor"
	}
	return "scope(" + strconv.Itoa(int(s)) + ")"
}

// Setting describes one setting. The registry's Settings are the only
// ones; nothing else constructs a Setting.
type Setting struct {
	// Name is the canonical name, lower case ("quiver.batch_size").
	Name string
	// Aliases are other names SET accepts for it (DataFusion's).
	Aliases []string
	Kind    Kind
	Scope   Scope
	// Default is the canonical value that applies when nobody sets it;
	// "" when whoever applies the setting computes it (DefaultDoc says how).
	Default string
	// DefaultDoc describes a computed default for people, when Default is "".
	DefaultDoc string
	// Flag, if set, is the `quiver scheduler` flag that replaces Default for
	// every session of that scheduler (a session's SET still wins).
	Flag string
	// Description says what the setting does, for SHOW ALL and flag help.
	Description string
	// Min and Max bound an Int.
	Min, Max int64
	// Values are an Enum's values, lower case, the default first.
	Values []string
}

// Values of the setting quiver.exchange_mode.
const (
	// ExchangeAuto keeps a job's exchanges in memory, in one whole stage
	// run as one task, when exactly one executor is alive at planning time;
	// between executors they are shuffle files.
	ExchangeAuto = "auto"
	// ExchangeShuffle cuts a job into stages at every exchange, writing
	// shuffle files, however many executors there are.
	ExchangeShuffle = "shuffle"
)

// The settings. Each is documented by its Description, which SHOW ALL
// prints.
var (
	BatchSize = &Setting{
		Name: "quiver.batch_size", Aliases: []string{"datafusion.execution.batch_size"},
		Kind: Int, Min: 1, Max: 1 << 20, Default: "8192", Scope: Executor,
		Description: "rows per batch the operators aim for",
	}
	AggSkipPartialPercent = &Setting{
		Name: "quiver.aggregate.skip_partial_percent", Kind: Int, Min: 0, Max: 100, Default: "80", Scope: Executor,
		Description: "a partial aggregate whose groups exceed this percentage of its first quiver.aggregate.skip_partial_probe_rows input rows stops aggregating and passes each later row on as its own partial state (0 or 100: never)",
	}
	AggSkipPartialProbeRows = &Setting{
		Name: "quiver.aggregate.skip_partial_probe_rows", Kind: Int, Min: 1, Max: 1 << 40, Default: "100000", Scope: Executor,
		Description: "input rows a partial aggregate folds before deciding by quiver.aggregate.skip_partial_percent whether to pass the rest through",
	}
	CacheMaxBytes = &Setting{
		Name: "quiver.cache.max_bytes", Kind: Bytes, Default: "0", Scope: Scheduler, Flag: "cache-max-bytes",
		Description: "cap on the bytes of cached datasets: the scheduler's flag caps all sessions (past it the entries nobody reads that are worth least per byte — build time × recent hits ÷ bytes — are evicted); a session may SET a lower quota of its own; an entry larger than the cap fails its build (0: no cap)",
	}
	CacheTTL = &Setting{
		Name: "quiver.cache.ttl", Kind: Duration, Default: "0s", Scope: Session, Flag: "cache-ttl",
		Description: "time a cached dataset lives after its last use (0: forever); a cache's own ttl option wins",
	}
	ExchangeMode = &Setting{
		Name: "quiver.exchange_mode", Kind: Enum, Values: []string{ExchangeAuto, ExchangeShuffle}, Default: ExchangeAuto, Scope: Session,
		Description: "auto: a job's exchanges stay in memory when it runs on one executor; shuffle: shuffle files at every exchange",
	}
	MaxRecursionDepth = &Setting{
		Name: "quiver.max_recursion_depth", Kind: Int, Min: 0, Max: 1 << 31, Default: "10000", Scope: Session,
		Description: "how many times a WITH RECURSIVE query may run its recursive term; one more is an error naming the query (0: no limit)",
	}
	MemoryLimit = &Setting{
		Name: "quiver.memory_limit", Kind: Bytes, Default: "0", Scope: Executor,
		Description: "memory one task may use (under local execution, one query): sorts, hash aggregates and hash joins spill to disk to stay under it; past it the query fails (0: no limit)",
	}
	SessionIdleTimeout = &Setting{
		Name: "quiver.session.idle_timeout", Kind: Duration, Default: "0s", Scope: Session, Flag: "session-idle-timeout",
		Description: "the scheduler closes a session, dropping its caches, after this long without requests or running jobs (0: never)",
	}
	ShuffleCompression = &Setting{
		Name: "quiver.shuffle_compression", Kind: Enum, Values: compressionNames(), Default: string(physical.CompressLZ4), Scope: Session,
		Description: "compression of the files between stages and of result files (cache files are never compressed): lz4 (fast), zstd (smaller) or none",
	}
	ShuffleInlineBytes = &Setting{
		Name: "quiver.shuffle_inline_bytes", Kind: Bytes, Default: "65536", Scope: Session,
		Description: "a query's result file of at most this many bytes (shared among the result's partitions, at most 4 MiB in all) stays in the executor's memory and travels to the client with the job's status, instead of being written to disk and fetched (0: always a file)",
	}
	TimeZone = &Setting{
		Name: "quiver.timezone", Aliases: []string{"timezone"}, Kind: Zone, Default: "UTC", Scope: Session,
		Description: "the session's time zone (an IANA name such as America/New_York, UTC, or an offset such as +02:00): TIMESTAMPTZ values print in it, and casts between TIMESTAMP and TIMESTAMPTZ, TIMESTAMPTZ fields and date_trunc and TIMESTAMPTZ + INTERVAL read its calendar",
	}
	TargetPartitions = &Setting{
		Name: "quiver.target_partitions", Aliases: []string{"datafusion.execution.target_partitions"},
		Kind: Int, Min: 1, Max: 1024, Scope: Session,
		DefaultDoc:  "the live executors' cores in total (local execution: GOMAXPROCS)",
		Description: "partitions a query runs in parallel",
	}
)

// All lists every setting, sorted by name.
var All = []*Setting{AggSkipPartialPercent, AggSkipPartialProbeRows, BatchSize, CacheMaxBytes, CacheTTL, ExchangeMode, MaxRecursionDepth, MemoryLimit, SessionIdleTimeout, ShuffleCompression, ShuffleInlineBytes, TargetPartitions, TimeZone}

func compressionNames() []string {
	out := make([]string, len(physical.Compressions))
	for i, c := range physical.Compressions {
		out[i] = string(c)
	}
	return out
}

// Lookup finds a setting by its name or an alias, case-insensitively.
func Lookup(name string) (*Setting, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, s := range All {
		if s.Name == n || slices.Contains(s.Aliases, n) {
			return s, true
		}
	}
	return nil, false
}

// Find is Lookup for a name from the user: an unknown name is a planning
// error that lists the settings.
func Find(name string) (*Setting, error) {
	if s, ok := Lookup(name); ok {
		return s, nil
	}
	return nil, qerr.Planf("unknown setting %q; settings are: %s", name, strings.Join(Names(), ", "))
}

// Names lists the canonical names, sorted.
func Names() []string {
	out := make([]string, len(All))
	for i, s := range All {
		out[i] = s.Name
	}
	return out
}

// Parse checks text as a value of s and returns its canonical form: an
// Int or Bytes as a plain decimal number, a Duration in Go's form ("1h30m", "10m"),
// an Enum in lower case. The error says what was wanted and what was given;
// callers name the setting and where.
func (s *Setting) Parse(text string) (string, error) {
	switch s.Kind {
	case Int:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil || n < s.Min || n > s.Max {
			return "", fmt.Errorf("want an integer from %d to %d, got %q", s.Min, s.Max, text)
		}
		return strconv.FormatInt(n, 10), nil
	case Bytes:
		n, err := ParseBytes(text)
		if err != nil {
			return "", err
		}
		return strconv.FormatInt(n, 10), nil
	case Duration:
		d, err := ParseDuration(text)
		if err != nil {
			return "", err
		}
		return formatDuration(d), nil
	case Zone:
		v := strings.TrimSpace(text)
		if _, ok := temporal.LoadZone(v); !ok {
			return "", fmt.Errorf("want a time zone (an IANA name such as America/New_York, UTC, or an offset such as +02:00), got %q", text)
		}
		return v, nil
	case Enum:
		v := strings.ToLower(strings.TrimSpace(text))
		if slices.Contains(s.Values, v) {
			return v, nil
		}
		return "", fmt.Errorf("want one of %s, got %q", strings.Join(s.Values, ", "), text)
	}
	return "", fmt.Errorf("setting %s has unknown kind %v", s.Name, s.Kind)
}

// formatDuration is d in Go's syntax without the zero minutes and seconds
// time.Duration.String adds ("10m", not "10m0s"; "2h", not "2h0m0s").
func formatDuration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

// Display renders a canonical value for people: sizes exactly in the
// largest binary unit that divides them ("4GiB"), 0 as "unlimited"; other
// kinds as they are.
func (s *Setting) Display(canonical string) string {
	if s.Kind == Bytes {
		n, err := strconv.ParseInt(canonical, 10, 64)
		if err != nil {
			return canonical
		}
		if n == 0 {
			return "unlimited"
		}
		return exactBytes(n)
	}
	return canonical
}

// DefaultText describes the default for people: the default value, with
// the scheduler flag that may replace it, or DefaultDoc.
func (s *Setting) DefaultText() string {
	if s.Default == "" {
		return s.DefaultDoc
	}
	t := s.Display(s.Default)
	if s.Flag != "" {
		t += " (or the scheduler's -" + s.Flag + ")"
	}
	return t
}
