package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// The deployment files (Dockerfile, docker-compose.yml, deploy/k8s) are
// checked against the binary: every flag and QUIVER_* variable they set
// exists on the subcommand they run, the ports they publish and probe are
// the ones those flags bind, and the probes ask /healthz.

const repoRoot = "../.."

// flagNames lists the flags of `quiver <sub>` from its --help.
func flagNames(t *testing.T, sub string) map[string]bool {
	t.Helper()
	code, _, errs := runCLI(t, "", sub, "--help")
	if code != 0 {
		t.Fatalf("%s --help: exit %d", sub, code)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(errs, "\n") {
		if name, ok := strings.CutPrefix(line, "  -"); ok {
			name, _, _ = strings.Cut(name, " ")
			out[name] = true
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s --help lists no flags", sub)
	}
	return out
}

// daemonConfig is what one container runs: a subcommand and its flags,
// from arguments and QUIVER_* variables.
type daemonConfig struct {
	where string
	sub   string
	flags map[string]string // flag → value ("" when set from elsewhere, e.g. a fieldRef)
}

// check fails the test unless every flag exists on the subcommand, and
// returns the port flag's value's port (0 when the flag is unset).
func (d daemonConfig) check(t *testing.T, known map[string]map[string]bool) {
	t.Helper()
	names := known[d.sub]
	if names == nil {
		t.Errorf("%s runs %q, not scheduler or executor", d.where, d.sub)
		return
	}
	for f := range d.flags {
		if !names[f] {
			t.Errorf("%s sets --%s (or $%s), which quiver %s does not have", d.where, f, envName(f), d.sub)
		}
	}
}

func (d daemonConfig) port(t *testing.T, flag string) int {
	t.Helper()
	v, ok := d.flags[flag]
	if !ok {
		return 0
	}
	_, p, err := net.SplitHostPort(v)
	if err != nil {
		t.Errorf("%s: --%s=%q is not host:port", d.where, flag, v)
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// parseDaemon reads a container's command line and environment.
func parseDaemon(t *testing.T, where string, args []string, env map[string]string) daemonConfig {
	t.Helper()
	d := daemonConfig{where: where, flags: map[string]string{}}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		d.sub, args = args[0], args[1:]
	}
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(strings.TrimPrefix(args[i], "-"), "-")
		if !ok && !strings.HasPrefix(args[i], "-") {
			t.Errorf("%s: unexpected argument %q", where, args[i])
			continue
		}
		if !ok {
			name = strings.TrimPrefix(args[i], "-")
		}
		if n, v, eq := strings.Cut(name, "="); eq {
			d.flags[n] = v
			continue
		}
		if i+1 < len(args) {
			d.flags[name] = args[i+1]
			i++
		}
	}
	for k, v := range env {
		name, ok := strings.CutPrefix(k, "QUIVER_")
		if !ok {
			continue
		}
		d.flags[strings.ToLower(strings.ReplaceAll(name, "_", "-"))] = v
	}
	return d
}

func readYAMLDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// dig walks maps and lists: keys are map keys or list indexes.
func dig(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func strs(v any) []string {
	var out []string
	for _, x := range asList(v) {
		out = append(out, str(x))
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

func TestKubernetesManifests(t *testing.T) {
	known := map[string]map[string]bool{"scheduler": flagNames(t, "scheduler"), "executor": flagNames(t, "executor")}
	dir := filepath.Join(repoRoot, "deploy", "k8s")
	kust := readYAMLDocs(t, filepath.Join(dir, "kustomization.yaml"))
	if len(kust) != 1 || kust[0]["kind"] != "Kustomization" {
		t.Fatalf("kustomization.yaml: %v", kust)
	}
	var docs []map[string]any
	for _, f := range strs(kust[0]["resources"]) {
		docs = append(docs, readYAMLDocs(t, filepath.Join(dir, f))...)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "kustomization.yaml" && !slices.Contains(strs(kust[0]["resources"]), e.Name()) {
			t.Errorf("%s is not in kustomization.yaml's resources", e.Name())
		}
	}

	byKind := map[string][]map[string]any{}
	for _, d := range docs {
		k := str(d["kind"])
		if str(d["apiVersion"]) == "" || k == "" || str(dig(d, "metadata", "name")) == "" {
			t.Errorf("document without apiVersion, kind or name: %v", d)
		}
		byKind[k] = append(byKind[k], d)
	}
	for kind, n := range map[string]int{"Namespace": 1, "Deployment": 1, "StatefulSet": 1, "Service": 2, "ServiceMonitor": 1} {
		if len(byKind[kind]) != n {
			t.Errorf("%d %s, want %d", len(byKind[kind]), kind, n)
		}
	}
	if len(byKind["Deployment"]) != 1 || len(byKind["StatefulSet"]) != 1 {
		t.FailNow()
	}

	// Each workload: its container runs the right subcommand with known
	// flags, declares the ports those flags bind, probes /healthz on the
	// HTTP port, and asks for resources. Named ports are collected for the
	// Services' and ServiceMonitor's checks.
	podPorts := map[string]map[string]int{} // app name → port name → number
	type workload struct {
		doc       map[string]any
		sub       string
		probePort string // the flag whose port serves /healthz
	}
	var schedDaemon daemonConfig
	for _, w := range []workload{{byKind["Deployment"][0], "scheduler", "rest"}, {byKind["StatefulSet"][0], "executor", "metrics-bind"}} {
		name := str(dig(w.doc, "metadata", "name"))
		app := str(dig(w.doc, "spec", "template", "metadata", "labels", "app.kubernetes.io/name"))
		if sel := str(dig(w.doc, "spec", "selector", "matchLabels", "app.kubernetes.io/name")); sel != app || app == "" {
			t.Errorf("%s: selector %q does not match the pod label %q", name, sel, app)
		}
		ctr := dig(w.doc, "spec", "template", "spec", "containers", 0)
		env := map[string]string{}
		for _, e := range asList(dig(ctr, "env")) {
			env[str(dig(e, "name"))] = str(dig(e, "value"))
		}
		d := parseDaemon(t, name, append(strs(dig(ctr, "command")), strs(dig(ctr, "args"))...), env)
		if d.sub != w.sub {
			t.Errorf("%s runs %q, want %s", name, d.sub, w.sub)
		}
		d.check(t, known)
		if w.sub == "scheduler" {
			schedDaemon = d
		}
		ports := map[string]int{}
		for _, p := range asList(dig(ctr, "ports")) {
			n, _ := strconv.Atoi(str(dig(p, "containerPort")))
			ports[str(dig(p, "name"))] = n
		}
		podPorts[app] = ports
		var declared []int
		for _, n := range ports {
			declared = append(declared, n)
		}
		for _, f := range []string{"bind", "rest", "metrics-bind"} {
			if p := d.port(t, f); p != 0 && !slices.Contains(declared, p) {
				t.Errorf("%s: --%s binds port %d, which the container does not declare (%v)", name, f, p, ports)
			}
		}
		httpPort := d.port(t, w.probePort)
		if httpPort == 0 {
			t.Errorf("%s: --%s is not set, so nothing serves /healthz", name, w.probePort)
		}
		for _, probe := range []string{"readinessProbe", "livenessProbe"} {
			get := dig(ctr, probe, "httpGet")
			if str(dig(get, "path")) != "/healthz" {
				t.Errorf("%s %s: path %q, want /healthz", name, probe, str(dig(get, "path")))
			}
			port := str(dig(get, "port"))
			n, err := strconv.Atoi(port)
			if err != nil {
				n = ports[port]
			}
			if n != httpPort {
				t.Errorf("%s %s: port %q is %d, but /healthz is served on %d (--%s)", name, probe, port, n, httpPort, w.probePort)
			}
		}
		for _, r := range []string{"cpu", "memory"} {
			if str(dig(ctr, "resources", "requests", r)) == "" {
				t.Errorf("%s: no %s request", name, r)
			}
		}
		if u := str(dig(w.doc, "spec", "template", "spec", "securityContext", "runAsUser")); u == "" || u == "0" {
			t.Errorf("%s runs as user %q, want non-root", name, u)
		}
		if w.sub == "executor" {
			// The work dir is a volume from the claim template.
			claim := str(dig(w.doc, "spec", "volumeClaimTemplates", 0, "metadata", "name"))
			mounted := false
			for _, m := range asList(dig(ctr, "volumeMounts")) {
				if str(dig(m, "name")) == claim && str(dig(m, "mountPath")) == d.flags["work-dir"] {
					mounted = true
				}
			}
			if claim == "" || !mounted {
				t.Errorf("%s: the work dir %q is not the claim template's volume %q", name, d.flags["work-dir"], claim)
			}
			if _, ok := env["QUIVER_ADVERTISE_HOST"]; !ok {
				t.Errorf("%s does not advertise a host other pods can reach", name)
			}
		}
	}

	// Services select a workload's pods and target its named ports; the
	// executors reach the scheduler through its Service.
	svcPorts := map[string][]string{} // service name → its port names
	for _, svc := range byKind["Service"] {
		name := str(dig(svc, "metadata", "name"))
		app := str(dig(svc, "spec", "selector", "app.kubernetes.io/name"))
		ports, ok := podPorts[app]
		if !ok {
			t.Errorf("service %s selects %q, no workload", name, app)
			continue
		}
		for _, p := range asList(dig(svc, "spec", "ports")) {
			target := str(dig(p, "targetPort"))
			if _, ok := ports[target]; !ok {
				t.Errorf("service %s targets port %q, which %s does not name", name, target, app)
			}
			svcPorts[name] = append(svcPorts[name], str(dig(p, "name")))
		}
	}
	execEnv := map[string]string{}
	for _, e := range asList(dig(byKind["StatefulSet"][0], "spec", "template", "spec", "containers", 0, "env")) {
		execEnv[str(dig(e, "name"))] = str(dig(e, "value"))
	}
	host, port, err := net.SplitHostPort(execEnv["QUIVER_SCHEDULER"])
	if err != nil || len(svcPorts[host]) == 0 || port != strconv.Itoa(schedDaemon.port(t, "bind")) {
		t.Errorf("executors reach the scheduler at %q; want the scheduler Service and its --bind port %d", execEnv["QUIVER_SCHEDULER"], schedDaemon.port(t, "bind"))
	}
	if sn := str(dig(byKind["StatefulSet"][0], "spec", "serviceName")); len(svcPorts[sn]) == 0 {
		t.Errorf("the StatefulSet's serviceName %q is not a Service", sn)
	}

	// The ServiceMonitor scrapes /metrics on a named port of each Service.
	sm := byKind["ServiceMonitor"][0]
	scraped := map[string]bool{}
	for _, ep := range asList(dig(sm, "spec", "endpoints")) {
		if str(dig(ep, "path")) != "/metrics" {
			t.Errorf("ServiceMonitor endpoint path %q", str(dig(ep, "path")))
		}
		scraped[str(dig(ep, "port"))] = true
	}
	for svc, names := range svcPorts {
		hit := false
		for _, n := range names {
			hit = hit || scraped[n]
		}
		if !hit {
			t.Errorf("the ServiceMonitor scrapes no port of service %s (%v)", svc, names)
		}
	}
	if want := str(dig(sm, "spec", "selector", "matchLabels", "app.kubernetes.io/part-of")); want != "quiver" {
		t.Errorf("ServiceMonitor selects part-of=%q", want)
	}
}

func TestDockerCompose(t *testing.T) {
	known := map[string]map[string]bool{"scheduler": flagNames(t, "scheduler"), "executor": flagNames(t, "executor")}
	docs := readYAMLDocs(t, filepath.Join(repoRoot, "docker-compose.yml"))
	if len(docs) != 1 {
		t.Fatalf("docker-compose.yml has %d documents", len(docs))
	}
	services, _ := docs[0]["services"].(map[string]any)
	var sched daemonConfig
	var execs []daemonConfig
	for name, svc := range services {
		env := map[string]string{}
		if m, ok := dig(svc, "environment").(map[string]any); ok {
			for k, v := range m {
				env[k] = str(v)
			}
		}
		d := parseDaemon(t, "compose service "+name, strs(dig(svc, "command")), env)
		switch d.sub {
		case "scheduler":
			d.check(t, known)
			sched = d
			published := strs(dig(svc, "ports"))
			for _, f := range []string{"bind", "rest"} {
				p := strconv.Itoa(d.port(t, f))
				if !slices.Contains(published, p+":"+p) {
					t.Errorf("scheduler --%s port %s is not published (%v)", f, p, published)
				}
			}
		case "executor":
			d.check(t, known)
			execs = append(execs, d)
			if d.flags["advertise-host"] != name {
				t.Errorf("%s advertises %q, not its service name", name, d.flags["advertise-host"])
			}
		case "":
			if !slices.Contains(strs(dig(svc, "profiles")), "tools") {
				t.Errorf("service %s runs neither daemon and is not a tool", name)
			}
		default:
			t.Errorf("service %s runs %q", name, d.sub)
		}
	}
	if sched.sub == "" || len(execs) != 2 {
		t.Fatalf("compose has scheduler %v and %d executors, want one and two", sched.sub != "", len(execs))
	}
	for _, e := range execs {
		if want := "scheduler:" + strconv.Itoa(sched.port(t, "bind")); e.flags["scheduler"] != want {
			t.Errorf("%s reaches the scheduler at %q, want %s", e.where, e.flags["scheduler"], want)
		}
		if e.flags["metrics-bind"] == "" || e.flags["work-dir"] == "" {
			t.Errorf("%s: no metrics port or work dir", e.where)
		}
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(text, -1)
	if len(froms) < 2 {
		t.Fatalf("%d FROM lines: want a build stage and a runtime stage", len(froms))
	}
	final := text[strings.LastIndex(text, "\nFROM "):]
	if !strings.Contains(text, "CGO_ENABLED=0") || !strings.Contains(text, "./cmd/quiver") {
		t.Error("the binary is not built static from ./cmd/quiver")
	}
	user := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(final)
	if user == nil || user[1] == "0" || strings.HasPrefix(user[1], "root") || strings.HasPrefix(user[1], "0:") {
		t.Errorf("the image runs as %v, want a non-root user", user)
	}
	for _, p := range []string{"50050", "8080", "50051", "9090"} {
		if !regexp.MustCompile(`(?m)^EXPOSE .*\b` + p + `\b`).MatchString(final) {
			t.Errorf("port %s is not exposed", p)
		}
	}
	if !strings.Contains(final, `ENTRYPOINT ["/usr/local/bin/quiver"]`) {
		t.Error("the entry point is not the quiver binary")
	}
}

// TestDockerBuild builds the image when a Docker daemon answers.
func TestDockerBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Docker image")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker command: the image build is checked where Docker exists")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info").CombinedOutput(); err != nil {
		t.Skipf("no Docker daemon answers (the image build is checked where one does): %v: %s", err, firstLine(out))
	}
	bctx, bcancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer bcancel()
	tag := "quiver-test:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	build := exec.CommandContext(bctx, "docker", "build", "-t", tag, repoRoot)
	if out, err := build.CombinedOutput(); err != nil {
		if registryUnreachable(out) {
			// The Dockerfile is checked above; building needs its base
			// images, which a machine without access to their registry
			// cannot pull.
			t.Skipf("the base images cannot be pulled from here: %s", firstLine(out))
		}
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	defer exec.Command("docker", "rmi", "-f", tag).Run()
	out, err := exec.CommandContext(bctx, "docker", "run", "--rm", tag, "scheduler", "--help").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("QUIVER_BIND")) {
		t.Errorf("docker run %s scheduler --help: %v\n%s", tag, err, out)
	}
	user, err := exec.CommandContext(bctx, "docker", "image", "inspect", "-f", "{{.Config.User}}", tag).Output()
	if err != nil || strings.TrimSpace(string(user)) == "" || strings.HasPrefix(string(user), "0") || strings.HasPrefix(string(user), "root") {
		t.Errorf("image user %q (%v), want non-root", user, err)
	}
}

// registryUnreachable reports whether docker build's output says it could
// not reach an image registry.
func registryUnreachable(out []byte) bool {
	for _, sign := range []string{"failed to resolve source metadata", "no such host", "dial tcp", "i/o timeout", "TLS handshake timeout", "connection refused", "failed to do request"} {
		if bytes.Contains(out, []byte(sign)) {
			return true
		}
	}
	return false
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}
