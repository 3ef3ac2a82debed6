package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the commands, run in-process here, leave no
// goroutine running when they return: their sessions, standalone clusters
// and connections must all be closed.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runCLI runs the command line in-process.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const people = "../../testdata/slt/data/people.csv"

func createPeople() string {
	return "CREATE EXTERNAL TABLE people (id BIGINT, name VARCHAR, age INT, city VARCHAR, score DECIMAL(5,2)) STORED AS CSV LOCATION '" + people + "'; "
}

func TestCommandFormats(t *testing.T) {
	query := createPeople() + "SET quiver.target_partitions = 1; SELECT id, name, score FROM people WHERE id <= 3 ORDER BY id"
	cases := map[string]string{
		"csv":    "id,name,score\n1,alice,10.50\n2,bob,7.25\n3,carol,\n",
		"tsv":    "id\tname\tscore\n1\talice\t10.50\n2\tbob\t7.25\n3\tcarol\t\n",
		"ndjson": "{\"id\":1,\"name\":\"alice\",\"score\":10.50}\n{\"id\":2,\"name\":\"bob\",\"score\":7.25}\n{\"id\":3,\"name\":\"carol\",\"score\":null}\n",
		"json":   "[{\"id\":1,\"name\":\"alice\",\"score\":10.50},{\"id\":2,\"name\":\"bob\",\"score\":7.25},{\"id\":3,\"name\":\"carol\",\"score\":null}]\n",
	}
	for format, want := range cases {
		t.Run(format, func(t *testing.T) {
			code, out, errs := runCLI(t, "", "--format", format, "-c", query)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			// DDL and SET print nothing in machine formats: the output is the query's alone.
			if out != want {
				t.Errorf("got:\n%s\nwant:\n%s", out, want)
			}
			if format == "json" {
				var v []map[string]any
				if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 3 {
					t.Errorf("not a JSON array of 3 objects: %v", err)
				}
			}
		})
	}
}

func TestCommandTable(t *testing.T) {
	code, out, errs := runCLI(t, "", "-c", createPeople()+"SELECT name FROM people WHERE id = 1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"│ name  │", "│ alice │"} {
		if !strings.Contains(out, want) {
			t.Errorf("table output lacks %q:\n%s", want, out)
		}
	}
}

func TestCommandFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "script.sql")
	script := createPeople() + "\n-- a comment; with a semicolon\nSELECT count(*) AS n FROM people;\nSELECT max(age) AS oldest FROM people;\n"
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "--format", "csv", "-f", f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != "n\n5\noldest\n41\n" {
		t.Errorf("got %q", out)
	}
	// -f - and a non-terminal stdin read the statements from standard input.
	for _, args := range [][]string{{"--format", "csv", "-f", "-"}, {"--format", "csv"}} {
		code, out, errs = runCLI(t, script, args...)
		if code != 0 || out != "n\n5\noldest\n41\n" {
			t.Errorf("%v: exit %d, out %q, err %s", args, code, out, errs)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stderr string
		stdout string // must be exactly this
	}{
		// the first error stops the script: the statements before it printed, the ones after did not
		{[]string{"--format", "csv", "-c", "SELECT 1 AS a; SELECT nope FROM nowhere; SELECT 2 AS b"}, 1, `table "nowhere" not found`, "a\n1\n"},
		{[]string{"-c", "SELECT FROM"}, 1, "line 1, column", ""},
		{[]string{"--format", "csv", "-c", "SELECT 1 AS a -- one", "-c", "SELECT 2 AS b"}, 0, "", "a\n1\nb\n2\n"},
		{[]string{"-c", "SELECT 1/0"}, 1, "division by zero", ""},
		{[]string{"--format", "xml", "-c", "SELECT 1"}, 2, "unknown format", ""},
		{[]string{"-f", "/no/such/file.sql"}, 1, "no such file", ""},
		{[]string{"-c", "SELECT 1", "-f", "x.sql"}, 2, "not both", ""},
		{[]string{"stray"}, 2, "unexpected argument", ""},
		// the scheduler's setting defaults are parsed as SET parses them, before anything starts
		{[]string{"scheduler", "--bind", "127.0.0.1:0", "--cache-max-bytes", "lots"}, 2, `invalid value "lots" for flag -cache-max-bytes: want a size`, ""},
		{[]string{"scheduler", "--bind", "127.0.0.1:0", "--cache-ttl", "-1m"}, 2, `invalid value "-1m" for flag -cache-ttl: want a non-negative duration`, ""},
		{[]string{"-c", "SET quiver.shuffle_compression = 'gzip'"}, 1, `setting quiver.shuffle_compression: want one of lz4, zstd, none, got "gzip"`, ""},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.stderr) || out != c.stdout {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q), stdout %q (want %q)", c.args, code, c.code, errs, c.stderr, out, c.stdout)
		}
	}
}

func TestCommandDemo(t *testing.T) {
	code, out, errs := runCLI(t, "", "--demo", "--format", "csv", "-c", "SELECT count(*) AS n FROM lineitem; SELECT count(*) AS n FROM region")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != "n\n60175\nn\n5\n" {
		t.Errorf("got %q", out)
	}
}
