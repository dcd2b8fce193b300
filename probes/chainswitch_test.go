package probes

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint moved to another chain while it goes on answering, never
// failing a probe, is found out within identityEvery rounds. Its chain id
// was asked only at start and on reconnect: 94 of 100 reads went to an
// endpoint on chain 5 beside a pool on chain 1.
func TestProbes_AnEndpointMovedToAnotherChainWithoutFailingIsExcluded(t *testing.T) {
	right := startSim(t, sim.Config{Name: "mainnet", ChainID: 1})
	other := startSim(t, sim.Config{Name: "goerli", ChainID: 5})
	p := startSwitchProxy(t, right.URL())
	r := newRig(t, func(c *engine.Config) {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "moved", URL: p.url})
	}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	r.waitHeads()
	if ep := r.endpoint("moved"); len(ep.Exclusions) > 0 || !ep.Routable {
		t.Fatalf("moved on the pool's chain: exclusions %q, routable %v", ep.Exclusions, ep.Routable)
	}

	asked := other.MethodCount("eth_chainId")
	p.point(other.URL())
	// 12 rounds of 20 ms: well inside the wait, on a loaded machine too.
	ev := r.waitEvent(10*time.Second, "moved excluded", headEvent("moved", engine.ExcludeWrongChain))
	if !strings.Contains(ev.Message, "chain id 0x5 (5), pool is on 0x1 (1)") {
		t.Errorf("exclusion event: %q", ev.Message)
	}
	if other.MethodCount("eth_chainId") == asked {
		t.Fatal("excluded without asking the moved endpoint its chain id")
	}
	if ep := r.endpoint("moved"); ep.Routable {
		t.Fatalf("moved to chain 5 and still routable: exclusions %q", ep.Exclusions)
	}
	for status, n := range other.Counters().ByStatus {
		if status != 200 {
			t.Fatalf("the moved endpoint answered %d requests HTTP %d: the case is one that never fails", n, status)
		}
	}
}
