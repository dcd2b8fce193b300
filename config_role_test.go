package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
)

// [[endpoints]] role and share load from config.toml; a share on a primary,
// a share out of range and a pool of shadows only are start-up errors
// naming the key.
func TestLoadConfig_RoleAndShare(t *testing.T) {
	ok := loopbackServer + `[[endpoints]]
name = "old"
url = "http://127.0.0.1:9"
[[endpoints]]
name = "new"
url = "http://127.0.0.1:10"
role = "canary"
share = 0.1
[[endpoints]]
name = "next"
url = "http://127.0.0.1:11"
role = "shadow"
`
	cfg, err := loadConfig(writeConfig(t, ok))
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Endpoints[1]; c.Role != "canary" || c.ShareOrDefault() != 0.1 {
		t.Fatalf("canary: %+v", c)
	}
	if c := cfg.Endpoints[2]; c.Role != "shadow" || c.Share != nil || c.ShareOrDefault() != 1 {
		t.Fatalf("shadow: %+v", c)
	}
	for body, want := range map[string]string{
		"[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:9\"\nshare = 0.5\n":                      "endpoints[0].share",
		"[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:9\"\nrole = \"canary\"\nshare = 2\n":     "endpoints[0].share: must be in (0, 1], got 2",
		"[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:9\"\nrole = \"canary\"\nshare = \"x\"\n": "endpoints[0].share",
		"[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:9\"\nrole = \"shadow\"\n":                `endpoints: every endpoint has role = "shadow"`,
		"[[endpoints]]\nname = \"a\"\nurl = \"http://127.0.0.1:9\"\nrole = \"mirror\"\n":                "endpoints[0].role",
	} {
		_, err := loadConfig(writeConfig(t, loopbackServer+body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %q", body, err, want)
		}
	}
}

// rpcdash status shows each endpoint's role, with a canary's share, and a
// shadow's comparison.
func TestStatus_ShowsRolesAndShadowFigures(t *testing.T) {
	s := engine.Snapshot{Routable: 2, Endpoints: []engine.EndpointSnapshot{
		{Name: "old", Role: engine.RoleStandby},
		{Name: "new", Role: engine.RoleCanary, Share: 0.05},
		{Name: "next", Role: engine.RoleShadow, Share: 1, Shadow: &engine.ShadowSnapshot{Mirrored: 10, Compared: 10, Match: 9, Mismatch: 1,
			MatchRate: 0.9, LastMismatch: &engine.ShadowMismatch{Method: "eth_call", At: time.Unix(0, 0).UTC()}}},
		{Name: "main", Role: engine.RolePrimary},
	}}
	var out bytes.Buffer
	printStatus(&out, s, 120)
	got := out.String()
	for name, role := range map[string]string{"old": "standby", "new": "canary 5%", "next": "shadow", "main": "primary"} {
		if !regexp.MustCompile(`(?m)^` + name + ` .* ` + role + `$`).MatchString(got) {
			t.Errorf("status has no row of %s whose notes are %q:\n%s", name, role, got)
		}
	}
	for _, want := range []string{"2/3 endpoints routable (+1 shadow)", "shadow next: mirrored 10, compared 10: match 9, mismatch 1", "match rate 90.0%", "last mismatch eth_call"} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
}

// The comparison of an endpoint that was a shadow is kept (a promotion
// rests on it), but its line must not read as if it still were one: the
// audit promoted shadow b to primary and `rpcdash status` went on printing
// "shadow b: mirrored 358, …" under a table whose NOTES said primary.
func TestStatus_AFormerShadowsComparisonSaysItsRoleNow(t *testing.T) {
	kept := &engine.ShadowSnapshot{Mirrored: 358, Compared: 358, Match: 358, MatchRate: 1}
	s := engine.Snapshot{Routable: 1, Endpoints: []engine.EndpointSnapshot{
		{Name: "b", Role: engine.RolePrimary, Shadow: kept},
		{Name: "c", Role: engine.RoleCanary, Share: 0.05, Shadow: kept},
		{Name: "sh", Role: engine.RoleShadow, Share: 1, Shadow: kept},
	}}
	var out bytes.Buffer
	printStatus(&out, s, 120)
	got := out.String()
	for _, want := range []string{
		"shadow b: mirrored 358, compared 358: match 358, mismatch 0, tip 0, errors 0, dropped 0; match rate 100.0%; p50/p95 0.0/0.0 ms (answering 0.0/0.0 ms); no longer a shadow: primary now\n",
		"; no longer a shadow: canary 5% now\n",
		"shadow sh: mirrored 358, compared 358: match 358, mismatch 0, tip 0, errors 0, dropped 0; match rate 100.0%; p50/p95 0.0/0.0 ms (answering 0.0/0.0 ms)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
}
