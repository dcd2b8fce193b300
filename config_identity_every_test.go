package main

import (
	"strings"
	"testing"
)

// probes.identity_every is read from the file and the environment under
// its own name, and a value that is not a positive number of rounds stops
// start-up naming it.
func TestLoadConfig_ProbesIdentityEvery(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, loopbackServer+"[probes]\nidentity_every = 3\n"+validEndpoint))
	if err != nil || cfg.Probes.IdentityEvery != 3 {
		t.Fatalf("identity_every = 3: got %d, %v", cfg.Probes.IdentityEvery, err)
	}
	cfg, err = loadConfig(writeConfig(t, loopbackServer+validEndpoint))
	if err != nil || cfg.Probes.IdentityEvery != 1 {
		t.Fatalf("unset: got %d, %v; want the default 1", cfg.Probes.IdentityEvery, err)
	}
	for body, want := range map[string]string{
		"[probes]\nidentity_every = 0\n":   "probes.identity_every: must be at least 1, got 0",
		"[probes]\nidentity_every = 1.5\n": "probes.identity_every: 1.5 is not a whole number",
	} {
		_, err := loadConfig(writeConfig(t, loopbackServer+body+validEndpoint))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %q", body, err, want)
		}
	}
	t.Setenv("RPCDASH_PROBES_IDENTITY_EVERY", "0")
	_, err = loadConfig(writeConfig(t, loopbackServer+validEndpoint))
	if err == nil || !strings.Contains(err.Error(), "probes.identity_every (from RPCDASH_PROBES_IDENTITY_EVERY)") {
		t.Errorf("RPCDASH_PROBES_IDENTITY_EVERY=0: %v", err)
	}
}
