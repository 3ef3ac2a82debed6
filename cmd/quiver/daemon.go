package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/quiverdb/quiver/auth"
)

// What `quiver scheduler` and `quiver executor` share: flags from the
// environment, and the structured log.

// envName is the environment variable that sets flag name:
// QUIVER_ + the name upper-cased with dashes as underscores
// (--heartbeat-timeout ← QUIVER_HEARTBEAT_TIMEOUT).
func envName(name string) string {
	return "QUIVER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flagsFromEnv sets every flag of fs whose variable getenv has (call it
// before fs.Parse, so that a flag given on the command line wins). A value
// the flag refuses is an error naming the variable. It also appends the
// variable's name to each flag's usage.
func flagsFromEnv(fs *flag.FlagSet, getenv func(string) (string, bool)) error {
	var errs []string
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		f.Usage += " [$" + env + "]"
		v, ok := getenv(env)
		if !ok {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Sprintf("$%s=%q: %v", env, v, err))
		}
	})
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("invalid value in the environment: %s", strings.Join(errs, "; "))
	}
	return nil
}

// authTokenFlag is --auth-token-file, shared by the daemons and the shell.
func authTokenFlag(fs *flag.FlagSet) *string {
	return fs.String("auth-token-file", "", "`PATH` of a file holding the cluster's shared secret, required on every call and sent on every call (default: no authentication)")
}

// tlsFlags are --tls-cert, --tls-key and --tls-ca, shared by the daemons
// and the shell.
type tlsFlags struct{ cert, key, ca string }

func (f *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert", "", "`PEM` certificate to serve TLS with and to present to peers (with --tls-key)")
	fs.StringVar(&f.key, "tls-key", "", "`PEM` private key of --tls-cert")
	fs.StringVar(&f.ca, "tls-ca", "", "`PEM` CA that signs every party's certificate: peers are verified against it and gRPC requires client certificates (mutual TLS)")
}

func (f tlsFlags) load() (auth.TLS, error) { return auth.LoadTLS(f.cert, f.key, f.ca) }

// logOptions are --log-format and --log-level.
type logOptions struct {
	format, level string
}

func (o *logOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.format, "log-format", "text", "log line `FORMAT`: text (key=value) or json")
	fs.StringVar(&o.level, "log-level", "info", "least `LEVEL` logged: debug, info, warn or error")
}

// logger builds the daemon's logger writing to w.
func (o logOptions) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", o.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch o.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", o.format)
}

// parseDaemonFlags reads the environment, then args, into fs.
func parseDaemonFlags(fs *flag.FlagSet, args []string) error {
	if err := flagsFromEnv(fs, os.LookupEnv); err != nil {
		fmt.Fprintf(fs.Output(), "%s: %v\n", fs.Name(), err)
		return err
	}
	return fs.Parse(args)
}

// daemonFlags are the flags every daemon has: the auth token, TLS and the
// log. register them beside the daemon's own, then start parses the lot.
type daemonFlags struct {
	tokenFile *string
	tls       tlsFlags
	log       logOptions
}

func (d *daemonFlags) register(fs *flag.FlagSet) {
	d.tokenFile = authTokenFlag(fs)
	d.tls.register(fs)
	d.log.register(fs)
}

// daemonSetup is what the shared flags configure.
type daemonSetup struct {
	logger *slog.Logger
	token  auth.Token
	tls    auth.TLS
}

// start parses the environment and args into fs (which holds d's flags),
// refuses positional arguments and loads the token, the TLS material and
// the logger. When it returns ok == false the daemon exits with code: 0
// for --help, 2 for a usage error (already written to stderr).
func (d *daemonFlags) start(fs *flag.FlagSet, args []string, stderr io.Writer) (_ daemonSetup, code int, ok bool) {
	if err := parseDaemonFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return daemonSetup{}, 0, false
		}
		return daemonSetup{}, 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return daemonSetup{}, 2, false
	}
	var (
		s   daemonSetup
		err error
	)
	if s.logger, err = d.log.logger(stderr); err == nil {
		if s.token, err = auth.Load(*d.tokenFile); err == nil {
			s.tls, err = d.tls.load()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return daemonSetup{}, 2, false
	}
	return s, 0, true
}
