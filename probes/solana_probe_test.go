package probes

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

const solanaKey = "11111111111111111111111111111111"

func solanaPool(t *testing.T, ids ...uint64) *rig {
	t.Helper()
	cfgs := make([]sim.Config, len(ids))
	for i, id := range ids {
		cfgs[i] = sim.Config{Chain: sim.ChainSolana, ChainID: id}
	}
	return newRig(t, func(c *engine.Config) { c.Chain.Kind = "solana" }, cfgs...)
}

func TestProbes_SolanaUnhealthyNodeOutUntilHealthyAgain(t *testing.T) {
	r := solanaPool(t, 7, 7, 7)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, u := range r.sims {
		for _, m := range []string{"getGenesisHash", "getSlot", "getHealth"} {
			if err := u.WaitMethod(ctx, m, 1); err != nil {
				t.Fatalf("%s never probed with %s: %v", u.Name(), m, err)
			}
		}
	}
	r.waitHeads()

	r.sims[1].SetUnhealthy(true)
	const reason = "unhealthy: getHealth: Node is unhealthy (code -32005"
	testutil.WaitUntil(t, 5*time.Second, "s1 excluded as unhealthy", func() bool {
		ex := r.endpoint("s1").Exclusions
		return len(ex) == 1 && strings.HasPrefix(ex[0], reason)
	})
	if r.endpoint("s1").Routable {
		t.Fatal("s1 routable while unhealthy")
	}
	balances := r.sims[1].MethodCount("getBalance")
	for range 20 {
		for _, rep := range []reply{r.call("getSlot"), r.call("getBalance", solanaKey)} {
			r.mustAnswer(rep)
			if rep.endpoint == "s1" {
				t.Fatalf("a read went to the unhealthy s1: %s", rep.body)
			}
		}
	}
	if n := r.sims[1].MethodCount("getBalance"); n != balances {
		t.Fatalf("s1 received %d getBalance reads while unhealthy", n-balances)
	}

	r.sims[1].SetUnhealthy(false)
	testutil.WaitUntil(t, 5*time.Second, "s1 readmitted", func() bool { return len(r.endpoint("s1").Exclusions) == 0 })
	ev, ok := r.event(func(ev engine.Event) bool {
		return ev.Type == engine.EventHead && ev.Endpoint == "s1" && ev.From == engine.ExcludeUnhealthy
	})
	if !ok || !strings.Contains(ev.Message, "readmitted") {
		t.Fatalf("no readmission event for s1: %+v", ev)
	}
	if !r.endpoint("s1").Routable {
		t.Fatal("s1 not routable once healthy")
	}
}

// A node or a gateway without getHealth answers it -32601, which says
// nothing against the node: it was excluded as unhealthy for good, and with
// every endpoint so the pool routed in panic.
func TestProbes_SolanaNodeWithoutGetHealthIsNotUnhealthy(t *testing.T) {
	r := solanaPool(t, 7, 7, 7)
	r.waitHeads()
	r.sims[1].SetUnhealthy(true)
	testutil.WaitUntil(t, 5*time.Second, "s1 excluded as unhealthy", func() bool { return len(r.endpoint("s1").Exclusions) == 1 })
	// Now it has no getHealth, nor have the others.
	for _, u := range r.sims {
		u.SetRPCError(-32601, "Method not found")
		u.SetRPCErrorMethods([]string{"getHealth"})
		u.SetMode(sim.ModeRPCError)
	}
	testutil.WaitUntil(t, 5*time.Second, "s1 readmitted", func() bool { return len(r.endpoint("s1").Exclusions) == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, u := range r.sims {
		if err := u.WaitMethod(ctx, "getHealth", u.MethodCount("getHealth")+3); err != nil {
			t.Fatalf("%s not probed with getHealth 3 more times: %v", u.Name(), err)
		}
	}
	for _, name := range []string{"s0", "s1", "s2"} {
		if ep := r.endpoint(name); !ep.Routable || len(ep.Exclusions) > 0 {
			t.Fatalf("%s answering getHealth -32601: routable %v, exclusions %q", name, ep.Routable, ep.Exclusions)
		}
	}
	for range 10 {
		r.mustAnswer(r.call("getBalance", solanaKey))
	}
	if s := r.eng.Snapshot(); s.Panic {
		t.Fatalf("panic routing with every endpoint answering getHealth -32601: %s", s.PanicReason)
	}
}

func TestProbes_SolanaEndpointWithAnotherGenesisExcludedNamingBothHashes(t *testing.T) {
	r := solanaPool(t, 7, 8, 7)
	ev := r.waitEvent(5*time.Second, "s1 excluded", headEvent("s1", engine.ExcludeWrongChain))
	got, want := genesisOf(t, r.sims[1]), genesisOf(t, r.sims[0])
	msg := "on genesis hash " + shortHash(got) + ", pool is on " + shortHash(want)
	if !strings.Contains(ev.Message, msg) {
		t.Fatalf("event %q does not say %q", ev.Message, msg)
	}
	if ex := r.endpoint("s1").Exclusions; !slices.Contains(ex, engine.ExcludeWrongChain+": "+msg) {
		t.Fatalf("s1 exclusions: %q", ex)
	}
	r.waitHeads2("s0", "s2")
	for range 10 {
		rep := r.call("getSlot")
		r.mustAnswer(rep)
		if rep.endpoint == "s1" {
			t.Fatal("getSlot went to the endpoint on another chain")
		}
	}
}

// genesisOf asks a sim directly for its genesis hash.
func genesisOf(t *testing.T, u *sim.Upstream) string {
	t.Helper()
	r := &rig{t: t, rpc: u.URL(), client: clientFor(t)}
	rep := r.call("getGenesisHash")
	h, ok := resultString(rep.body)
	if !ok || len(h) < 20 {
		t.Fatalf("genesis hash of %s: %s", u.Name(), rep.body)
	}
	return h
}
