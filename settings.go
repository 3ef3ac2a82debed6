package quiver

import (
	"runtime"
	"strconv"

	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/settings"
)

// Values of the setting quiver.exchange_mode: how a job's exchanges
// (repartitions, coalesces, merges, shared join build sides) run.
const (
	// ExchangeAuto (the default) keeps a job's exchanges in memory, in one
	// whole stage run as one task, when the scheduler has exactly one live
	// executor at planning time (a standalone session's default); between
	// executors they are shuffle files.
	ExchangeAuto = settings.ExchangeAuto
	// ExchangeShuffle cuts a job into stages at every exchange, writing
	// shuffle files, however many executors there are.
	ExchangeShuffle = settings.ExchangeShuffle
)

// The session's settings are a settings.Values: only what SET or an option
// gave, which is all that is sent to the scheduler, so its defaults apply
// to the rest. The functions below read them where this process plans or
// runs a query itself (local execution, EXPLAIN, loading a table into
// memory) and so is the one that applies the defaults.

// localTargetPartitions is quiver.target_partitions, by default the cores
// this process may use.
func localTargetPartitions(v settings.Values) int {
	if n, ok := v.Int(settings.TargetPartitions); ok {
		return int(n)
	}
	return runtime.GOMAXPROCS(0)
}

// localBatchSize is quiver.batch_size.
func localBatchSize(v settings.Values) int {
	n, _ := v.Int(settings.BatchSize)
	return int(n)
}

// localSkipPartial is quiver.aggregate.skip_partial_percent and
// skip_partial_probe_rows.
func localSkipPartial(v settings.Values) execop.SkipPartial {
	pct, _ := v.Int(settings.AggSkipPartialPercent)
	probe, _ := v.Int(settings.AggSkipPartialProbeRows)
	return execop.SkipPartial{Percent: int(pct), ProbeRows: probe}
}

// localMemoryLimit is quiver.memory_limit in bytes (0: none).
func localMemoryLimit(v settings.Values) int64 {
	n, _ := v.Int(settings.MemoryLimit)
	return n
}

// showSetting is the value SHOW prints for st: the value set, else the one
// that applies when this session is the one applying it, else "default"
// when the scheduler chooses (its flags, its executors' cores).
func (s *Session) showSetting(v settings.Values, st *settings.Setting) string {
	if c, ok := v.Lookup(st); ok {
		return st.Display(c)
	}
	if s.remote == nil && st == settings.TargetPartitions {
		return strconv.Itoa(localTargetPartitions(v))
	}
	if st.Default == "" || (st.Flag != "" && s.remote != nil) {
		return "default"
	}
	return st.Display(st.Default)
}

// set applies SET name = value; on error nothing changes.
func (s *Session) set(name, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := s.settings.With(name, value)
	if err != nil {
		return err
	}
	s.settings = next
	return nil
}

// show is SHOW name.
func (s *Session) show(name string) (*DataFrame, error) {
	st, err := settings.Find(name)
	if err != nil {
		return nil, err
	}
	v := s.snapshot()
	return s.table([]string{"name", "setting"}, [][]string{{st.Name, s.showSetting(v, st)}})
}

// showAll is SHOW ALL: every setting, its value in this session, its
// default, its scope and what it does.
func (s *Session) showAll() (*DataFrame, error) {
	v := s.snapshot()
	rows := make([][]string, 0, len(settings.All))
	for _, st := range settings.All {
		rows = append(rows, []string{st.Name, s.showSetting(v, st), st.DefaultText(), st.Scope.String(), st.Description})
	}
	return s.table([]string{"name", "setting", "default", "scope", "description"}, rows)
}
