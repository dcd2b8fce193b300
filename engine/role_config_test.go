package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
)

func share(v float64) *float64 { return &v }

// [[endpoints]] share: a canary's or a shadow's, in (0, 1]; set on a
// primary or a standby it stops start-up naming endpoints[i].share.
func TestConfig_ShareOnlyForCanaryAndShadowInRange(t *testing.T) {
	cases := []struct {
		role  string
		share *float64
		want  string // "" = valid
	}{
		{"canary", nil, ""},
		{"canary", share(0.1), ""},
		{"canary", share(1), ""},
		{"shadow", share(0.5), ""},
		{"canary", share(0), "endpoints[1].share: must be in (0, 1], got 0"},
		{"shadow", share(1.5), "endpoints[1].share: must be in (0, 1], got 1.5"},
		{"canary", share(-0.1), "endpoints[1].share: must be in (0, 1]"},
		{"primary", share(0.1), `endpoints[1].share: only a "canary" or "shadow" endpoint takes a share, this one is "primary"`},
		{"", share(0.1), `endpoints[1].share: only a "canary" or "shadow" endpoint takes a share, this one is "primary"`},
		{"standby", share(0.1), `endpoints[1].share: only a "canary" or "shadow" endpoint takes a share, this one is "standby"`},
	}
	for _, tc := range cases {
		c := engine.Default()
		c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1"},
			{Name: "b", URL: "http://127.0.0.1:2", Role: tc.role, Share: tc.share}}
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("role %q share %v: %v, want valid", tc.role, tc.share, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("role %q share %v: %v, want %q", tc.role, tc.share, err, tc.want)
		}
	}
}

// The role's default share: 0.05 for a canary, 1 for a shadow, as the
// status shows it.
func TestConfig_ShareDefaultsByRole(t *testing.T) {
	for role, want := range map[string]float64{"canary": 0.05, "shadow": 1, "primary": 0, "standby": 0} {
		c := engine.EndpointConfig{Role: role}
		if got := c.ShareOrDefault(); got != want {
			t.Errorf("%s: share %v, want %v", role, got, want)
		}
	}
}

// A pool of shadows only could answer nobody: a start-up error.
func TestConfig_AllShadowsIsAnError(t *testing.T) {
	c := engine.Default()
	c.Endpoints = []engine.EndpointConfig{{Name: "a", URL: "http://127.0.0.1:1", Role: "shadow"},
		{Name: "b", URL: "http://127.0.0.1:2", Role: "shadow"}}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), `endpoints: every endpoint has role = "shadow"`) {
		t.Fatalf("all shadows: %v", err)
	}
	c.Endpoints[1].Role = "canary"
	if err := c.Validate(); err != nil {
		t.Fatalf("a shadow and a canary: %v", err)
	}
}
