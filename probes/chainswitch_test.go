package probes

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An endpoint moved to another chain while it goes on answering, never
// failing a probe, is found out by the probe loops on their own. Its chain
// id was asked only at start and on reconnect: 94 of 100 reads went to an
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
	// The next round of 20 ms: well inside the wait, on a loaded machine too.
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

// A client's own eth_chainId answered by an endpoint moved to another chain
// finds it out before its next identity probe (up to a probes.interval
// away, more with a larger probes.identity_every), and is not relayed: an
// audit's client got the other chain's id for 15 of 47 eth_chainId until
// the probe came.
func TestProbes_AClientsChainIdFromAnEndpointMovedToAnotherChainIsNotRelayed(t *testing.T) {
	right := startSim(t, sim.Config{Name: "mainnet", ChainID: 1})
	other := startSim(t, sim.Config{Name: "goerli", ChainID: 5})
	p := startSwitchProxy(t, right.URL())
	slow := sim.Latency{Median: 40 * time.Millisecond}
	r := newRig(t, func(c *engine.Config) {
		c.Probes.Interval = time.Hour // no identity probe after the first within the test
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "moved", URL: p.url})
	}, sim.Config{ChainID: 1, Latency: slow}, sim.Config{ChainID: 1, Latency: slow})
	r.waitHeads()
	for range 20 {
		r.mustAnswer(r.call("eth_getBalance", "0x00000000000000000000000000000000000000aa", "latest"))
	}
	p.point(other.URL())
	for i := range 10 {
		rep := r.call("eth_chainId")
		r.mustAnswer(rep)
		if !strings.Contains(string(rep.body), `"result":"0x1"`) {
			t.Fatalf("eth_chainId %d through rpcdash: %s from %s; the pool is on 0x1", i, rep.body, rep.endpoint)
		}
	}
	if other.MethodCount("eth_chainId") == 0 {
		t.Fatal("the moved endpoint was never asked: the test shows nothing")
	}
	if ep := r.endpoint("moved"); ep.Routable || !slices.ContainsFunc(ep.Exclusions, func(x string) bool { return strings.HasPrefix(x, engine.ExcludeWrongChain+": ") }) {
		t.Fatalf("moved to chain 5: exclusions %q, routable %v", ep.Exclusions, ep.Routable)
	}
}

// At the default probes.identity_every (1) an endpoint moved to another
// chain while it keeps answering is excluded by its next round of probes,
// and no client read reaches it after. Asked every 12th round, one such
// endpoint had 149 eth_getBalance answers of the other chain relayed in
// 53 s.
func TestProbes_AnEndpointMovedToAnotherChainIsExcludedByItsNextRound(t *testing.T) {
	right := startSim(t, sim.Config{Name: "mainnet", ChainID: 1})
	other := startSim(t, sim.Config{Name: "goerli", ChainID: 5})
	p := startSwitchProxy(t, right.URL())
	r := newSteppedRig(t, func(c *engine.Config) {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "moved", URL: p.url})
	}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	for range 3 { // past the identity asked at start
		r.round("moved")
	}
	if ep := r.endpoint("moved"); len(ep.Exclusions) > 0 || !ep.Routable {
		t.Fatalf("moved on the pool's chain: exclusions %q, routable %v", ep.Exclusions, ep.Routable)
	}

	p.point(other.URL())
	r.round("moved")
	ev, ok := r.event(headEvent("moved", engine.ExcludeWrongChain))
	if !ok {
		ep := r.endpoint("moved")
		t.Fatalf("one round after the move: not excluded (exclusions %q, routable %v), chain id asked %d times",
			ep.Exclusions, ep.Routable, other.MethodCount("eth_chainId"))
	}
	if !strings.Contains(ev.Message, "chain id 0x5 (5), pool is on 0x1 (1)") {
		t.Errorf("exclusion event: %q", ev.Message)
	}
	if n := other.MethodCount("eth_chainId"); n != 1 {
		t.Errorf("the moved endpoint was asked its chain id %d times in one round, want 1", n)
	}
	for i := range 20 {
		rep := r.call("eth_getBalance", balanceOf, "latest")
		r.mustAnswer(rep)
		if rep.endpoint == "moved" {
			t.Fatalf("read %d answered by moved, on chain 5: %s", i, rep.body)
		}
	}
	if n := other.MethodCount("eth_getBalance"); n != 0 {
		t.Fatalf("the moved endpoint was sent %d client reads", n)
	}
}
