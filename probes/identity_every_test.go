package probes

import (
	"slices"
	"strconv"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// probes.identity_every is the rounds between identity probes: every round
// by default, every third at 3 (the first round, at start, asks it too);
// the head is asked every round either way.
func TestProbes_IdentityEveryIsTheRoundsBetweenIdentityProbes(t *testing.T) {
	for _, tc := range []struct {
		every int   // 0: the default
		asked []int // the rounds after the first that ask the chain id
	}{
		{0, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{3, []int{3, 6, 9}},
	} {
		t.Run("identity_every "+strconv.Itoa(tc.every), func(t *testing.T) {
			r := newSteppedRig(t, func(c *engine.Config) {
				if tc.every != 0 {
					c.Probes.IdentityEvery = tc.every
				}
			}, sim.Config{ChainID: 1})
			s := r.sims[0]
			if n := s.MethodCount("eth_chainId"); n != 1 {
				t.Fatalf("the first round asked the chain id %d times, want 1", n)
			}
			var asked []int
			for round := 1; round <= 9; round++ {
				before := s.MethodCount("eth_chainId")
				r.round("s0")
				if s.MethodCount("eth_chainId") > before {
					asked = append(asked, round)
				}
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("chain id asked in rounds %v, want %v", asked, tc.asked)
			}
			if n := s.MethodCount("eth_blockNumber"); n != 10 {
				t.Errorf("head asked %d times in 10 rounds", n)
			}
		})
	}
}
