package quiver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/auth"
)

// The token file of the tenant tests: the cluster's token and two tenants.
const (
	aliceSecret = "alice-secret-0123456789"
	bobSecret   = "bob-secret-0123456789"
)

// writeTenantTokens writes the token file of a cluster token and the
// tenants alice and bob, and returns its path.
func writeTenantTokens(t *testing.T) string {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("cluster-secret-0123456789\n"+aliceSecret+" alice\n"+bobSecret+" bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return tokens
}

// addTokenExecutor starts an executor of c that authenticates with the
// cluster token of tokens, and waits until it has registered.
func (c *testCluster) addTokenExecutor(t *testing.T, tokens string) *proc {
	t.Helper()
	dir := t.TempDir()
	c.workDirs = append(c.workDirs, dir)
	ex := startProc(t, fmt.Sprintf("executor-%d", len(c.executors)), quiverBinary(t), "executor", "--scheduler", c.addr,
		"--bind", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--work-dir", dir, "--vcores", "2", "--heartbeat", "200ms", "--auth-token-file", tokens)
	c.executors = append(c.executors, ex)
	waitFor(t, "the executor to register", func() bool { return strings.Contains(ex.output(), "listening on") })
	return ex
}

// connectAs opens a session on c with a tenant's secret.
func (c *testCluster) connectAs(t *testing.T, secret string) *quiver.Session {
	t.Helper()
	tok, err := auth.New(secret)
	if err != nil {
		t.Fatal(err)
	}
	return c.connect(t, quiver.WithAuthToken(tok))
}
