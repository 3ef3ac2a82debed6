package cache

import "testing"

func TestScopeOption(t *testing.T) {
	for _, c := range []struct {
		opts   map[string]string
		want   string
		global bool
		bad    bool
	}{
		{nil, ScopeSession, false, false},
		{map[string]string{ScopeOption: "session"}, ScopeSession, false, false},
		{map[string]string{ScopeOption: "GLOBAL"}, ScopeGlobal, true, false},
		{map[string]string{ScopeOption: "cluster"}, "", false, true},
	} {
		got, err := Scope(c.opts)
		if got != c.want || (err != nil) != c.bad || IsGlobal(c.opts) != c.global {
			t.Errorf("Scope(%v) = %q, %v; IsGlobal %v", c.opts, got, err, IsGlobal(c.opts))
		}
		if check := Options[ScopeOption]; (check(c.opts) != nil) != c.bad {
			t.Errorf("Options[scope](%v) = %v", c.opts, check(c.opts))
		}
	}
	gs := GlobalSession("alice")
	if tenant, ok := GlobalTenant(gs); !ok || tenant != "alice" {
		t.Errorf("GlobalTenant(%q) = %q, %v", gs, tenant, ok)
	}
	if _, ok := GlobalTenant("6f1c2a7e-0b1d-4c55-9a43-1f0e2d3c4b5a"); ok {
		t.Error("a session id is taken for a global name space")
	}
}
