package quiver_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/exec/execop"
	"github.com/quiverdb/quiver/qerr"
	"github.com/quiverdb/quiver/settings"
)

// settingCases gives every setting a good value (not its default), how SHOW
// prints it, and a bad value. TestSettingsSQL fails for a setting missing
// here, so a new setting comes with its test.
var settingCases = map[string]struct{ good, shown, bad string }{
	"quiver.aggregate.skip_partial_percent":    {"50", "50", "101"},
	"quiver.aggregate.skip_partial_probe_rows": {"5000", "5000", "0"},
	"quiver.batch_size":                        {"7", "7", "0"},
	"quiver.cache.max_bytes":                   {"64GB", "64GiB", "-1"},
	"quiver.cache.ttl":                         {"90m", "1h30m", "soon"},
	"quiver.exchange_mode":                     {"SHUFFLE", "shuffle", "memory"},
	"quiver.memory_limit":                      {"4GiB", "4GiB", "lots"},
	"quiver.max_recursion_depth":               {"500", "500", "-1"},
	"quiver.session.idle_timeout":              {"1h", "1h", "-1s"},
	"quiver.shuffle_compression":               {"zstd", "zstd", "gzip"},
	"quiver.shuffle_inline_bytes":              {"1MiB", "1MiB", "-1"},
	"quiver.target_partitions":                 {"3", "3", "1025"},
	"quiver.timezone":                          {"America/New_York", "America/New_York", "Mars/Olympus"},
}

// TestSettingsSQL sets every setting through SQL, reads it back with SHOW
// and SHOW ALL, and checks a bad value is refused naming the setting and
// the value and changes nothing; then a query runs with all of them set
// (on a standalone cluster: the scheduler and the executor accept them).
func TestSettingsSQL(t *testing.T) {
	ctx := context.Background()
	for _, st := range settings.All {
		if _, ok := settingCases[st.Name]; !ok {
			t.Errorf("setting %s has no case in settingCases", st.Name)
		}
	}
	for _, mode := range []struct {
		name string
		opts []quiver.Option
	}{{"local", []quiver.Option{quiver.WithLocalExecution()}}, {"standalone", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			s := newTPCHSession(t, mode.opts...)
			show := func(name string) string {
				t.Helper()
				rows := sqlRows(t, s, "SHOW "+name)
				if len(rows) != 1 || len(rows[0]) != 2 || rows[0][0] != name {
					t.Fatalf("SHOW %s: %v", name, rows)
				}
				return rows[0][1]
			}
			for _, st := range settings.All {
				c := settingCases[st.Name]
				before := show(st.Name)
				_, err := s.SQL(ctx, "SET "+st.Name+" = '"+c.bad+"'")
				if !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), "setting "+st.Name+": want ") || !strings.Contains(err.Error(), `"`+c.bad+`"`) {
					t.Errorf("SET %s = '%s': %v; want a planning error naming the setting and the value", st.Name, c.bad, err)
				}
				if got := show(st.Name); got != before {
					t.Errorf("a refused SET changed %s from %q to %q", st.Name, before, got)
				}
				sqlRows(t, s, "SET "+strings.ToUpper(st.Name)+" TO '"+c.good+"'")
				if got := show(st.Name); got != c.shown {
					t.Errorf("SHOW %s = %q after SET to %q, want %q", st.Name, got, c.good, c.shown)
				}
			}
			all := sqlRows(t, s, "SHOW ALL")
			if len(all) != len(settings.All) {
				t.Fatalf("SHOW ALL has %d rows, want %d: %v", len(all), len(settings.All), all)
			}
			for i, st := range settings.All {
				want := []string{st.Name, settingCases[st.Name].shown, st.DefaultText(), st.Scope.String(), st.Description}
				if strings.Join(all[i], "|") != strings.Join(want, "|") {
					t.Errorf("SHOW ALL row %d: %q, want %q", i, all[i], want)
				}
			}
			// Every setting set at once: a query still runs, and gives the
			// same answer as under the defaults.
			rows := sqlRows(t, s, "SELECT l_returnflag, count(*) FROM lineitem GROUP BY l_returnflag ORDER BY l_returnflag")
			if len(rows) != 3 || strings.Join(rows[0], "|") != "A|14876" {
				t.Errorf("query with every setting set: %v", rows)
			}
			if _, err := s.SQL(ctx, "SHOW quiver.nope"); !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), `unknown setting "quiver.nope"`) {
				t.Errorf("SHOW of an unknown setting: %v", err)
			}
		})
	}
}

// TestSettingsDefaultsShown: what SHOW prints for settings nobody set.
func TestSettingsDefaultsShown(t *testing.T) {
	ctx := context.Background()
	local, err := quiver.NewSession(ctx, quiver.WithLocalExecution())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	standalone, err := quiver.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer standalone.Close()
	for _, c := range []struct {
		s                *quiver.Session
		name, setting, v string
	}{
		// Under local execution the session applies the default itself.
		{local, "local", "quiver.target_partitions", strconv.Itoa(runtime.GOMAXPROCS(0))},
		// On a scheduler it is the scheduler's: its executors' cores.
		{standalone, "standalone", "quiver.target_partitions", "default"},
		{standalone, "standalone", "quiver.cache.ttl", "default"},
		{standalone, "standalone", "quiver.batch_size", strconv.Itoa(execop.DefaultBatchSize)},
		{standalone, "standalone", "quiver.memory_limit", "unlimited"},
		{standalone, "standalone", "quiver.shuffle_compression", "lz4"},
		{local, "local", "quiver.exchange_mode", "auto"},
	} {
		if got := sqlRows(t, c.s, "SHOW "+c.setting); got[0][1] != c.v {
			t.Errorf("%s: SHOW %s = %q, want %q", c.name, c.setting, got[0][1], c.v)
		}
	}
}

// TestTargetPartitionsDefault: a session that never sets
// quiver.target_partitions leaves the choice to the scheduler, whose
// default is its executors' cores in total, not the client's GOMAXPROCS.
// A standalone cluster's two executors have GOMAXPROCS cores each, so the
// job of a session that set nothing must be planned exactly like one with
// target_partitions = 2 × GOMAXPROCS, and differently from one with
// GOMAXPROCS (what the client used to send). The plan is seen through the
// job's task count: the aggregate's final stage has a task per partition.
func TestTargetPartitionsDefault(t *testing.T) {
	ctx := context.Background()
	s := newTPCHSession(t, quiver.WithStandaloneCluster(2))
	tasks := func() int {
		t.Helper()
		df, err := s.SQL(ctx, "SELECT l_returnflag, count(*) FROM lineitem GROUP BY l_returnflag")
		if err != nil {
			t.Fatal(err)
		}
		var last quiver.JobProgress
		info := &quiver.QueryInfo{OnProgress: func(p quiver.JobProgress) { last = p }}
		for b, err := range df.StreamInfo(ctx, info) {
			if err != nil {
				t.Fatal(err)
			}
			b.Release()
		}
		if last.TasksTotal == 0 || last.TasksDone != last.TasksTotal {
			t.Fatalf("job progress %+v", last)
		}
		return last.TasksTotal
	}
	unset := tasks()
	g := runtime.GOMAXPROCS(0)
	sqlRows(t, s, "SET quiver.target_partitions = "+strconv.Itoa(2*g))
	scheduler := tasks()
	sqlRows(t, s, "SET quiver.target_partitions = "+strconv.Itoa(g))
	client := tasks()
	if unset != scheduler || unset == client {
		t.Errorf("tasks: %d with target_partitions unset, %d with the executors' %d cores, %d with the client's %d: the unset session must get the scheduler's default",
			unset, scheduler, 2*g, client, g)
	}
}

// TestShuffleCompressionSetting: the setting reaches the shuffle files of
// a job cut into stages, and each compression gives the same answer.
func TestShuffleCompressionSetting(t *testing.T) {
	ctx := context.Background()
	s := newTPCHSession(t, quiver.WithStandaloneCluster(2), quiver.WithTargetPartitions(3))
	q := "SELECT o_orderpriority, count(*) FROM orders JOIN customer ON o_custkey = c_custkey GROUP BY o_orderpriority ORDER BY o_orderpriority"
	want := strings.Join(flat(sqlRows(t, s, q)), ",")
	for _, c := range []string{"zstd", "none", "LZ4"} {
		sqlRows(t, s, "SET quiver.shuffle_compression = '"+c+"'")
		if got := sqlRows(t, s, "SHOW quiver.shuffle_compression"); got[0][1] != strings.ToLower(c) {
			t.Errorf("SHOW after SET %s: %v", c, got)
		}
		if got := strings.Join(flat(sqlRows(t, s, q)), ","); got != want {
			t.Errorf("%s: rows %s, want %s", c, got, want)
		}
	}
	_, err := s.SQL(ctx, "SET quiver.shuffle_compression = 'snappy'")
	if !qerr.Is(err, qerr.Plan) || err.Error() != `planning error: setting quiver.shuffle_compression: want one of lz4, zstd, none, got "snappy"` {
		t.Errorf("SET a bad compression: %v", err)
	}
	if got := sqlRows(t, s, "SHOW quiver.shuffle_compression"); got[0][1] != "lz4" {
		t.Errorf("a refused SET changed the compression to %v", got)
	}
}

// TestSessionOptionsChecked: options go through the same checks as SET.
func TestSessionOptionsChecked(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opt  quiver.Option
		want string
	}{
		{quiver.WithTargetPartitions(5000), `setting quiver.target_partitions: want an integer from 1 to 1024, got "5000"`},
		{quiver.WithMemoryLimit(-1), `setting quiver.memory_limit: want a size`},
		{quiver.WithExchangeMode("fast"), `setting quiver.exchange_mode: want one of auto, shuffle, got "fast"`},
	} {
		s, err := quiver.NewSession(ctx, quiver.WithLocalExecution(), c.opt)
		if err == nil {
			s.Close()
		}
		if !qerr.Is(err, qerr.Plan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSession: %v; want %q", err, c.want)
		}
	}
}
