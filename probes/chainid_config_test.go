package probes

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func TestProbes_ConfiguredChainIDBeatsTheMajority(t *testing.T) {
	r := newRig(t, func(c *engine.Config) { c.Chain.ChainID = 5 },
		sim.Config{ChainID: 5}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	for _, name := range []string{"s1", "s2"} {
		ev := r.waitEvent(5*time.Second, name+" excluded", headEvent(name, engine.ExcludeWrongChain))
		if want := "on chain id 0x1 (1), chain.chain_id is 0x5 (5)"; !strings.Contains(ev.Message, want) {
			t.Fatalf("event %q does not say %q", ev.Message, want)
		}
	}
	r.waitHeads2("s0")
	for range 10 {
		rep := r.call("eth_getBalance", balanceOf, "latest")
		r.mustAnswer(rep)
		if rep.endpoint != "s0" {
			t.Fatalf("read answered by %s, which is on another chain", rep.endpoint)
		}
	}
}
