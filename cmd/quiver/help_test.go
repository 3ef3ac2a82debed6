package main

import (
	"strings"
	"testing"
)

func TestHelpAndVersion(t *testing.T) {
	code, out, errs := runCLI(t, "", "--help")
	if code != 0 || errs != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, errs)
	}
	for name := range subcommands {
		if !strings.Contains(out, "\n  "+name+" ") {
			t.Errorf("--help does not list %s:\n%s", name, out)
		}
	}
	if code, out, _ := runCLI(t, "", "--version"); code != 0 || !strings.HasPrefix(out, "quiver ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI(t, "", "version"); code != 0 || !strings.HasPrefix(out, "quiver ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	if code, _, errs := runCLI(t, "", "help", "tpch"); code != 0 || !strings.Contains(errs, "-sf") {
		t.Errorf("help tpch: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "help", "scheduler"); code != 0 || !strings.Contains(errs, "-bind") {
		t.Errorf("help scheduler: exit %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "help", "nosuch"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("help nosuch: exit %d, %q", code, errs)
	}
}

func TestBadFormatIsUsageError(t *testing.T) {
	code, _, errs := runCLI(t, "", "--format", "xml", "-c", "SELECT 1")
	if code != 2 || strings.Contains(errs, "planning error") || !strings.Contains(errs, "--format") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
