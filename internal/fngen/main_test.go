package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFileIsCurrent: the committed functions_gen.go is what the
// registry makes now, so every SQL function has its Go counterpart.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../functions_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("functions_gen.go is out of date with the function registry: run go generate in the repository root")
	}
}

func TestGoName(t *testing.T) {
	for name, want := range map[string]string{"date_trunc": "DateTrunc", "upper": "Upper", "md5": "MD5", "log10": "Log10", "bool_and": "BoolAnd"} {
		if got := goName(name); got != want {
			t.Errorf("goName(%q) = %q, want %q", name, got, want)
		}
	}
}
