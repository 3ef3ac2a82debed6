package quiver

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/physical/stage"
	"github.com/quiverdb/quiver/qerr"
)

// settings are a session's SET-table values.
type settings struct {
	targetPartitions int
	batchSize        int
	memoryLimit      int64 // bytes, 0 = none
	// Cache and session lifetimes, sent to the scheduler with each query
	// ("" = the scheduler's default).
	cacheTTL           string
	cacheMaxBytes      string
	sessionIdleTimeout string
	// exchangeMode is quiver.exchange_mode: ExchangeAuto or ExchangeShuffle.
	exchangeMode string
}

// Values of the setting quiver.exchange_mode: how a job's exchanges
// (repartitions, coalesces, merges, shared join build sides) run.
const (
	// ExchangeAuto (the default) keeps a job's exchanges in memory, in one
	// whole stage run as one task, when the scheduler has exactly one live
	// executor at planning time (a standalone session's default); between
	// executors they are shuffle files.
	ExchangeAuto = "auto"
	// ExchangeShuffle cuts a job into stages at every exchange, writing
	// shuffle files, however many executors there are.
	ExchangeShuffle = "shuffle"
)

func defaultSettings() settings {
	return settings{targetPartitions: runtime.GOMAXPROCS(0), batchSize: execop.DefaultBatchSize, exchangeMode: ExchangeAuto}
}

// settingNames lists the settings SET accepts.
var settingNames = []string{"quiver.batch_size", "quiver.cache.max_bytes", "quiver.cache.ttl", "quiver.exchange_mode", "quiver.memory_limit", "quiver.session.idle_timeout", "quiver.target_partitions"}

// set applies SET name = value, validating value; it changes nothing on error.
func (st *settings) set(name, value string) error {
	switch strings.ToLower(name) {
	case "quiver.target_partitions", "datafusion.execution.target_partitions":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 1024 {
			return qerr.Planf("SET %s: want an integer from 1 to 1024, got %q", name, value)
		}
		st.targetPartitions = n
	case "quiver.batch_size", "datafusion.execution.batch_size":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 1<<20 {
			return qerr.Planf("SET %s: want an integer from 1 to 1048576, got %q", name, value)
		}
		st.batchSize = n
	case "quiver.memory_limit":
		n, err := ParseBytes(value)
		if err != nil {
			return qerr.Planf("SET %s: %w", name, err)
		}
		st.memoryLimit = n
	case "quiver.cache.ttl", "quiver.session.idle_timeout":
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return qerr.Planf("SET %s: want a duration like '10m' or '0s' (none), got %q", name, value)
		}
		if strings.ToLower(name) == "quiver.cache.ttl" {
			st.cacheTTL = d.String()
		} else {
			st.sessionIdleTimeout = d.String()
		}
	case "quiver.cache.max_bytes":
		n, err := ParseBytes(value)
		if err != nil {
			return qerr.Planf("SET %s: %w", name, err)
		}
		st.cacheMaxBytes = strconv.FormatInt(n, 10)
	case "quiver.exchange_mode":
		mode, err := parseExchangeMode(value)
		if err != nil {
			return qerr.Planf("SET %s: %w", name, err)
		}
		st.exchangeMode = mode
	default:
		return qerr.Planf("unknown setting %q; settings are: %s", name, strings.Join(settingNames, ", "))
	}
	return nil
}

func (st *settings) get(name string) (string, error) {
	switch strings.ToLower(name) {
	case "quiver.target_partitions":
		return strconv.Itoa(st.targetPartitions), nil
	case "quiver.batch_size":
		return strconv.Itoa(st.batchSize), nil
	case "quiver.memory_limit":
		if st.memoryLimit == 0 {
			return "unlimited", nil
		}
		return FormatBytes(st.memoryLimit), nil
	case "quiver.cache.ttl":
		return orDefault(st.cacheTTL), nil
	case "quiver.cache.max_bytes":
		return orDefault(st.cacheMaxBytes), nil
	case "quiver.session.idle_timeout":
		return orDefault(st.sessionIdleTimeout), nil
	case "quiver.exchange_mode":
		return st.exchangeMode, nil
	}
	return "", qerr.Planf("unknown setting %q; settings are: %s", name, strings.Join(settingNames, ", "))
}

func (st *settings) all() [][2]string {
	var out [][2]string
	for _, n := range settingNames {
		v, _ := st.get(n)
		out = append(out, [2]string{n, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// explainSplit is how EXPLAIN DISTRIBUTED cuts a physical plan into
// stages: as the scheduler would cut this session's next job (see the
// scheduler's exchange mode choice), with a line saying which way and why.
func (s *Session) explainSplit() (stage.Options, string) {
	mode := s.snapshot().exchangeMode
	cut := "a stage per exchange, shuffle files between them"
	switch {
	case mode == ExchangeShuffle:
		return stage.Options{}, "exchange_mode=shuffle: " + cut
	case s.remote == nil:
		return stage.Options{}, "local execution runs the physical plan directly, exchanges in memory; on several executors: " + cut
	case s.standaloneExecutors == 1:
		return stage.Options{InMemory: true}, "exchange_mode=auto, one executor: one whole stage run as one task, exchanges in memory"
	case s.standaloneExecutors > 1:
		return stage.Options{}, fmt.Sprintf("exchange_mode=auto, %d executors: %s", s.standaloneExecutors, cut)
	}
	return stage.Options{}, "exchange_mode=auto on a cluster: " + cut + " (one whole stage with in-memory exchanges if exactly one executor is alive when the job is planned)"
}

// parseExchangeMode validates a quiver.exchange_mode value (any case).
func parseExchangeMode(v string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(v)); m {
	case ExchangeAuto, ExchangeShuffle:
		return m, nil
	}
	return "", fmt.Errorf("want %s (in-memory exchanges when the job runs on one executor) or %s (shuffle files at every exchange), got %q", ExchangeAuto, ExchangeShuffle, v)
}

var byteUnits = []struct {
	suffix string
	mult   float64
}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}

// ParseBytes parses a size such as "2GB", "512 MB", "1.5G" or "1048576";
// units are powers of 1024. "0", "none" and "unlimited" mean no limit (0).
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "NONE" || t == "UNLIMITED" {
		return 0, nil
	}
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("want a size like '2GB' or '512MB', got %q", s)
	}
	return int64(f * mult), nil
}

// FormatBytes renders n bytes with a binary unit ("1.5 GB").
func FormatBytes(n int64) string {
	f := float64(n)
	for _, u := range []struct {
		s string
		m float64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if f >= u.m {
			return strconv.FormatFloat(f/u.m, 'f', 1, 64) + " " + u.s
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

func orDefault(v string) string {
	if v == "" {
		return "default"
	}
	return v
}
