package main

import (
	"flag"
	"strings"
	"testing"
	"time"
)

// TestFlagsFromEnv: a variable sets its flag, the command line wins over
// it, and a bad value is refused naming the variable.
func TestFlagsFromEnv(t *testing.T) {
	env := map[string]string{
		"QUIVER_BIND":              "10.0.0.1:1",
		"QUIVER_HEARTBEAT_TIMEOUT": "3s",
		"QUIVER_REST":              "from-env:1",
	}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	bind := fs.String("bind", "127.0.0.1:50050", "")
	rest := fs.String("rest", "", "")
	hb := fs.Duration("heartbeat-timeout", 10*time.Second, "")
	policy := fs.String("policy", "bias", "")
	if err := flagsFromEnv(fs, getenv); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--rest", "from-args:2"}); err != nil {
		t.Fatal(err)
	}
	if *bind != "10.0.0.1:1" || *hb != 3*time.Second || *rest != "from-args:2" || *policy != "bias" {
		t.Errorf("bind %q heartbeat %s rest %q policy %q", *bind, *hb, *rest, *policy)
	}
	if u := fs.Lookup("heartbeat-timeout").Usage; !strings.HasSuffix(u, "[$QUIVER_HEARTBEAT_TIMEOUT]") {
		t.Errorf("usage %q does not name its variable", u)
	}

	env["QUIVER_HEARTBEAT_TIMEOUT"] = "soon"
	fs2 := flag.NewFlagSet("t", flag.ContinueOnError)
	fs2.Duration("heartbeat-timeout", 0, "")
	err := flagsFromEnv(fs2, getenv)
	if err == nil || !strings.Contains(err.Error(), `$QUIVER_HEARTBEAT_TIMEOUT="soon"`) {
		t.Errorf("bad value: %v", err)
	}
}

// TestDaemonCommandsReadEnv runs the real subcommands: every flag of both
// is documented with its variable, a bad variable stops the command with
// its name, and a flag on the command line overrides the variable.
func TestDaemonCommandsReadEnv(t *testing.T) {
	for _, cmd := range []string{"scheduler", "executor"} {
		code, _, errs := runCLI(t, "", cmd, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		n := 0
		for _, line := range strings.Split(errs, "\n") {
			if name, ok := strings.CutPrefix(strings.TrimSpace(line), "-"); ok {
				name, _, _ = strings.Cut(name, " ")
				n++
				if !strings.Contains(errs, "[$"+envName(name)+"]") {
					t.Errorf("%s --%s: usage does not name $%s", cmd, name, envName(name))
				}
			}
		}
		if n < 8 {
			t.Errorf("%s --help lists %d flags:\n%s", cmd, n, errs)
		}
	}

	t.Setenv("QUIVER_LOG_LEVEL", "loud")
	code, _, errs := runCLI(t, "", "scheduler", "--bind", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errs, `--log-level "loud"`) {
		t.Errorf("QUIVER_LOG_LEVEL=loud: exit %d: %s", code, errs)
	}
	// The command line wins: the bad level is overridden, so what fails now
	// is the policy given the same way.
	t.Setenv("QUIVER_POLICY", "nearest")
	code, _, errs = runCLI(t, "", "scheduler", "--bind", "127.0.0.1:0", "--log-level", "warn")
	if code != 2 || !strings.Contains(errs, `unknown placement policy "nearest"`) || strings.Contains(errs, "loud") {
		t.Errorf("QUIVER_POLICY=nearest with --log-level warn: exit %d: %s", code, errs)
	}
	t.Setenv("QUIVER_VCORES", "many")
	code, _, errs = runCLI(t, "", "executor", "--log-level", "warn")
	if code != 2 || !strings.Contains(errs, `$QUIVER_VCORES="many"`) {
		t.Errorf("QUIVER_VCORES=many: exit %d: %s", code, errs)
	}
}

func TestLogOptions(t *testing.T) {
	var b strings.Builder
	l, err := logOptions{format: "json", level: "warn"}.logger(&b)
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hidden")
	l.Warn("shown", "job", "j1")
	if got := b.String(); strings.Contains(got, "hidden") || !strings.Contains(got, `"msg":"shown","job":"j1"`) {
		t.Errorf("json at warn: %q", got)
	}
	if _, err := (logOptions{format: "xml", level: "info"}).logger(&b); err == nil || !strings.Contains(err.Error(), "text or json") {
		t.Errorf("xml format: %v", err)
	}
}
