package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTPCHGenArguments(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"tpch", "gen", "--sf", "0.0015", "--out", dir}, "in thousandths"},
		{[]string{"tpch", "gen", "--sf", "0", "--out", dir}, "in thousandths"},
		{[]string{"tpch", "gen", "--sf", "1.5", "--out", dir}, "an integer from 1"},
		{[]string{"tpch", "gen", "--sf", "x", "--out", dir}, "not a number"},
		{[]string{"tpch", "gen", "--sf", "1"}, "--out DIR is required"},
		{[]string{"tpch", "build"}, "usage: quiver tpch gen"},
	} {
		code, _, stderr := runCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.msg) {
			t.Errorf("quiver %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr, c.msg)
		}
	}
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	code, _, stderr := runCLI(t, "", "tpch", "gen", "--sf", "1", "--out", dir)
	if code != 1 || !strings.Contains(stderr, "--force") {
		t.Errorf("gen into a non-empty folder: exit %d, stderr %q", code, stderr)
	}
}

// TestTPCHGenFraction: `quiver tpch gen --sf 0.01` writes the SF 0.01
// tables and prints their row counts beside the spec's.
func TestTPCHGenFraction(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "", "tpch", "gen", "--sf", "0.01", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"TPC-H SF 0.01 written", "orders            15000        15000", "partsupp           8000         8000", "nation               25           25"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "lineitem.parquet")); err != nil {
		t.Error(err)
	}
}

func TestBenchCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, path := range []string{a, b} {
		code, stdout, stderr := runCLI(t, "", "bench", "tpch", "--data", "../../tpch/sf0.01", "--queries", "6,q14",
			"--iterations", "1", "--verify", "../../tpch/answers", "--json", path)
		if code != 0 {
			t.Fatalf("bench: exit %d\n%s", code, stderr)
		}
		if !strings.Contains(stdout, "q06") || !strings.Contains(stdout, "q14") || !strings.Contains(stdout, "geomean") {
			t.Errorf("bench output:\n%s", stdout)
		}
	}
	code, stdout, stderr := runCLI(t, "", "bench", "compare", a, b)
	if code != 0 || !strings.Contains(stdout, "B/A") || !strings.Contains(stdout, "q14") {
		t.Errorf("compare: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bench", "tpch", "--data", "../../tpch/sf0.01", "--scheduler", "h:1"}, 1, "scheduler h:1"},
		{[]string{"bench", "tpch", "--data", "../../tpch/sf0.01", "--queries", "1,99"}, 2, "unknown query"},
		{[]string{"bench", "tpch", "--data", filepath.Join(dir, "none")}, 1, "data folder"},
		{[]string{"bench", "compare", a}, 2, "usage"},
		{[]string{"bench", "compare", a, filepath.Join(dir, "none.json")}, 1, "none.json"},
	} {
		code, _, stderr := runCLI(t, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("quiver %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.msg)
		}
	}
}
