package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"sort"
)

// subcommandLines is each subcommand's one-line description for --help.
var subcommandLines = map[string]string{
	"scheduler": "run a cluster's scheduler",
	"executor":  "run a cluster executor that registers with a scheduler",
	"tpch":      "tpch gen: generate the TPC-H tables as Parquet or CSV",
	"bench":     "bench tpch, bench tpcds: time the TPC-H or TPC-DS queries; bench compare: compare two runs",
	"help":      "help CMD: the usage of a subcommand",
	"version":   "print the version",
}

// subcommandHelp is the argument list that makes each subcommand print its
// usage.
var subcommandHelp = map[string][]string{
	"scheduler": {"--help"},
	"executor":  {"--help"},
	"tpch":      {"gen", "--help"},
	"bench":     {},
}

// printUsage is `quiver --help`: how to run the shell and the subcommands.
func printUsage(w io.Writer, flags func()) {
	fmt.Fprintf(w, "usage: quiver [--demo] [-c SQL | -f FILE] [--format table|csv|tsv|json|ndjson] [--scheduler ADDR]\n")
	fmt.Fprintf(w, "       quiver COMMAND [ARGS]\n\n")
	fmt.Fprintf(w, "Without a command quiver runs SQL: the interactive shell, -c, -f or standard input.\n\ncommands:\n")
	names := make([]string, 0, len(subcommandLines))
	for n := range subcommandLines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, subcommandLines[n])
	}
	fmt.Fprintf(w, "\nflags:\n")
	flags()
}

// helpCommand is `quiver help [CMD]`.
func helpCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return run([]string{"--help"}, stdin, stdout, stderr)
	}
	if len(args) > 1 {
		fmt.Fprintln(stderr, "usage: quiver help [COMMAND]")
		return 2
	}
	if args[0] == "version" {
		fmt.Fprintln(stdout, "usage: quiver version (or quiver --version): print the version")
		return 0
	}
	helpArgs, ok := subcommandHelp[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "quiver help: unknown command %q (see quiver --help)\n", args[0])
		return 2
	}
	code := subcommands[args[0]](helpArgs, stdin, stdout, stderr)
	if code == 2 && len(helpArgs) == 0 {
		return 0 // a usage line printed on purpose
	}
	return code
}

// version is the module version the binary was built from (with the VCS
// revision when built from a checkout).
func version() string {
	v, rev, dirty := "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev
		if dirty {
			v += "+dirty"
		}
	}
	return v
}

func versionCommand(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: quiver version")
		return 2
	}
	fmt.Fprintln(stdout, "quiver", version())
	return 0
}

func init() {
	subcommands["help"] = helpCommand
	subcommands["version"] = versionCommand
}
