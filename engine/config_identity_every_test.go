package engine_test

import (
	"strconv"
	"strings"
	"testing"
)

// probes.identity_every counts probe rounds: 1 (every round) by default,
// and a value below 1 is a start-up error naming the key and the value.
func TestConfig_ProbesIdentityEveryIsAPositiveNumberOfRounds(t *testing.T) {
	if c := validBase(); c.Probes.IdentityEvery != 1 {
		t.Fatalf("default probes.identity_every %d, want 1", c.Probes.IdentityEvery)
	}
	for _, n := range []int{0, -3} {
		c := validBase()
		c.Probes.IdentityEvery = n
		err := c.Validate()
		want := "probes.identity_every: must be at least 1, got " + strconv.Itoa(n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("identity_every %d: %v\nwant a line containing %q", n, err, want)
		}
	}
	c := validBase()
	c.Probes.IdentityEvery = 12
	if err := c.Validate(); err != nil {
		t.Errorf("identity_every 12 refused: %v", err)
	}
}
