package auth

import (
	"strings"
	"testing"
)

func TestParseTenants(t *testing.T) {
	tok, err := Parse("# comment\n\ncluster-secret-0123456789\nalice-secret-0123456789 alice\n  bob-secret-0123456789   bob  \n")
	if err != nil {
		t.Fatal(err)
	}
	if tok.secret != "cluster-secret-0123456789" {
		t.Errorf("sends %q, want the first cluster token", tok.secret)
	}
	if tok, err := Parse("alice-secret-0123456789 alice\ncluster-secret-0123456789\n"); err != nil || tok.secret != "cluster-secret-0123456789" {
		t.Errorf("a file with a tenant's token first sends %q (%v), want the cluster token", tok.secret, err)
	}
	if tok, err := Parse("alice-secret-0123456789 alice\n"); err != nil || tok.secret != "alice-secret-0123456789" {
		t.Errorf("a client's file of a tenant's token sends %q (%v)", tok.secret, err)
	}
	for _, c := range []struct {
		presented string
		want      Identity
		ok        bool
	}{
		{"Bearer cluster-secret-0123456789", Identity{Tenant: DefaultTenant, Cluster: true}, true},
		{"Bearer alice-secret-0123456789", Identity{Tenant: "alice"}, true},
		{"Bearer bob-secret-0123456789", Identity{Tenant: "bob"}, true},
		{"Bearer carol-secret-0123456789", Identity{}, false},
		{"alice-secret-0123456789", Identity{}, false},
	} {
		id, ok := tok.identify(c.presented)
		if ok != c.ok || id != c.want {
			t.Errorf("%q: %+v %v, want %+v %v", c.presented, id, ok, c.want, c.ok)
		}
	}
	alice := Identity{Tenant: "alice"}
	if !alice.CanSee("alice") || alice.CanSee("bob") || alice.CanSee(DefaultTenant) || !Anonymous.CanSee("bob") {
		t.Error("CanSee: a tenant sees only its own; a cluster token everything")
	}
	for text, want := range map[string]string{
		"":                                    "no token",
		"# only a comment\n":                  "no token",
		"short alice":                         "at least 16 bytes",
		"alice-secret-0123456789 al/ice":      "tenant",
		"alice-secret-0123456789 alice extra": "fields",
		"alice-secret-0123456789 alice\nalice-secret-0123456789 bob": "listed twice",
	} {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want an error saying %q", text, err, want)
		}
	}
}
