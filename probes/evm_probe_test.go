package probes

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

var balanceOf = "0x00000000000000000000000000000000000000aa"

func TestProbes_StaleEndpointExcludedWhileLaggingAndReadmittedAfterRecover(t *testing.T) {
	r := newRig(t, nil, sim.Config{ChainID: 1}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	r.waitHeads()
	if err := r.eng.InjectFault(engine.ActorAdmin, "s1", engine.FaultSpec{Mode: engine.FaultStale}); err != nil {
		t.Fatal(err)
	}
	lagging := r.waitEvent(10*time.Second, "s1 lagging", headEvent("s1", "lagging"))
	if !strings.Contains(lagging.Message, "chain.max_head_lag 20") {
		t.Errorf("lagging event: %q", lagging.Message)
	}
	if ep := r.endpoint("s1"); !ep.LagExcluded || ep.Lag <= 20 || ep.Routable {
		t.Fatalf("s1 while stale: lag_excluded=%v lag=%d routable=%v", ep.LagExcluded, ep.Lag, ep.Routable)
	}

	balances := r.sims[1].MethodCount("eth_getBalance")
	for range 20 {
		for _, rep := range []reply{r.call("eth_blockNumber"), r.call("eth_getBalance", balanceOf, "latest")} {
			r.mustAnswer(rep)
			if rep.endpoint == "s1" {
				t.Fatalf("a tip-dependent read went to the lagging s1: %s", rep.body)
			}
		}
	}
	if n := r.sims[1].MethodCount("eth_getBalance"); n != balances {
		t.Fatalf("s1 received %d eth_getBalance reads while lagging", n-balances)
	}
	if _, ok := r.event(headEvent("s1", "in-sync")); ok {
		t.Fatal("s1 readmitted while still stale")
	}

	if err := r.eng.ClearFault(engine.ActorAdmin, "s1"); err != nil {
		t.Fatal(err)
	}
	back := r.waitEvent(10*time.Second, "s1 in-sync", headEvent("s1", "in-sync"))
	if back.Seq < lagging.Seq || !strings.Contains(back.Message, "for 2 probes") {
		t.Errorf("readmission event %+v: want it after the lagging one, after probes.recover = 2 probes", back)
	}
	if ep := r.endpoint("s1"); ep.LagExcluded || !ep.Routable {
		t.Fatalf("s1 after readmission: lag_excluded=%v routable=%v", ep.LagExcluded, ep.Routable)
	}
}

func TestProbes_EndpointOnAnotherChainExcludedNamingBothChainIDs(t *testing.T) {
	// The odd one out is first in config order: the majority decides, not
	// whoever is listed or answers first.
	r := newRig(t, nil, sim.Config{ChainID: 5}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	ev := r.waitEvent(5*time.Second, "s0 excluded", headEvent("s0", engine.ExcludeWrongChain))
	const want = "on chain id 0x5 (5), pool is on 0x1 (1)"
	if !strings.Contains(ev.Message, want) {
		t.Fatalf("event %q does not say %q", ev.Message, want)
	}
	r.waitHeads2("s1", "s2")
	s0 := r.endpoint("s0")
	if s0.Routable || !slices.Contains(s0.Exclusions, engine.ExcludeWrongChain+": "+want) {
		t.Fatalf("s0: routable=%v exclusions=%q", s0.Routable, s0.Exclusions)
	}
	if s0.Head != 0 {
		t.Errorf("s0's head %d counted although it is on another chain", s0.Head)
	}
	for _, name := range []string{"s1", "s2"} {
		if ep := r.endpoint(name); len(ep.Exclusions) > 0 {
			t.Errorf("%s excluded: %q", name, ep.Exclusions)
		}
	}
	for range 20 {
		rep := r.call("eth_getBalance", balanceOf, "latest")
		r.mustAnswer(rep)
		if rep.endpoint == "s0" {
			t.Fatal("a read went to the endpoint on another chain")
		}
	}
	if n := r.sims[0].MethodCount("eth_getBalance"); n != 0 {
		t.Fatalf("s0 received %d client reads", n)
	}
}

// waitHeads2 waits until the named endpoints have a probed head.
func (r *rig) waitHeads2(names ...string) {
	r.t.Helper()
	for _, n := range names {
		testutil.WaitUntil(r.t, 5*time.Second, n+"'s first head", func() bool { return r.endpoint(n).Head > 0 })
	}
}

// switchProxy is a loopback reverse proxy whose upstream can be swapped, to
// stand for an endpoint whose URL starts leading to another node.
type switchProxy struct {
	url    string
	target atomic.Pointer[url.URL]
}

func startSwitchProxy(t *testing.T, to string) *switchProxy {
	t.Helper()
	p := &switchProxy{}
	p.point(to)
	tr := &http.Transport{}
	rp := &httputil.ReverseProxy{Transport: tr, Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(p.target.Load())
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
		tr.CloseIdleConnections()
	})
	p.url = "http://" + ln.Addr().String()
	return p
}

func (p *switchProxy) point(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	p.target.Store(u)
}

func TestProbes_WrongChainEndpointReadmittedWhenItReconnectsOnThePoolsChain(t *testing.T) {
	other := startSim(t, sim.Config{Name: "goerli", ChainID: 5})
	right := startSim(t, sim.Config{Name: "mainnet", ChainID: 1})
	p := startSwitchProxy(t, other.URL())
	r := newRig(t, func(c *engine.Config) {
		c.Endpoints = append(c.Endpoints, engine.EndpointConfig{Name: "flip", URL: p.url})
	}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})

	r.waitEvent(5*time.Second, "flip excluded", headEvent("flip", engine.ExcludeWrongChain))
	if err := r.eng.InjectFault(engine.ActorAdmin, "flip", engine.FaultSpec{Mode: engine.FaultError}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitUntil(t, 5*time.Second, "a failed probe of flip", func() bool { return r.endpoint("flip").Rates.Failures > 0 })
	p.point(right.URL())
	if err := r.eng.ClearFault(engine.ActorAdmin, "flip"); err != nil {
		t.Fatal(err)
	}
	ev := r.waitEvent(5*time.Second, "flip readmitted", func(ev engine.Event) bool {
		return ev.Type == engine.EventHead && ev.Endpoint == "flip" && ev.From == engine.ExcludeWrongChain
	})
	if !strings.Contains(ev.Message, "readmitted") {
		t.Errorf("readmission event: %q", ev.Message)
	}
	if n := right.MethodCount("eth_chainId"); n < 1 {
		t.Fatalf("the reconnect did not ask the chain id again (%d eth_chainId)", n)
	}
	testutil.WaitUntil(t, 5*time.Second, "flip's head", func() bool { return r.endpoint("flip").Head > 0 })
	if ep := r.endpoint("flip"); len(ep.Exclusions) > 0 {
		t.Fatalf("flip still excluded: %q", ep.Exclusions)
	}
}

// A node whose eth_blockNumber fails while its other reads answer gives no
// head to its probes. Its last head used to be carried forward at the pace
// for ever: lag 0, in sync, taking tip-dependent reads (and a third of the
// clients' eth_blockNumber calls got its error) with its head unknown for
// as long as it lasted.
func TestProbes_HeadProbeAnsweredWithoutAHeadIsLagNotInSync(t *testing.T) {
	r := newRig(t, nil, sim.Config{ChainID: 1}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	r.waitHeads()
	// An error its breaker does not count (the node answered): the lag
	// rule is all that can take it out of tip-dependent reads.
	r.sims[1].SetRPCError(-32000, "internal failure")
	r.sims[1].SetRPCErrorMethods([]string{"eth_blockNumber"})
	r.sims[1].SetMode(sim.ModeRPCError)

	r.waitEvent(10*time.Second, "s1 lagging", headEvent("s1", "lagging"))
	if ep := r.endpoint("s1"); !ep.LagExcluded || ep.Lag <= 20 || !strings.Contains(ep.LastError, "no head: JSON-RPC error -32000: internal failure") {
		t.Fatalf("s1 without a head: lag_excluded=%v lag=%d last error %q", ep.LagExcluded, ep.Lag, ep.LastError)
	}
	for range 20 {
		rep := r.call("eth_blockNumber")
		r.mustAnswer(rep)
		if rep.endpoint == "s1" {
			t.Fatalf("eth_blockNumber went to s1, whose head is unknown: %s", rep.body)
		}
	}

	r.sims[1].SetMode(sim.ModeNormal)
	r.waitEvent(10*time.Second, "s1 in-sync", headEvent("s1", "in-sync"))
	if ep := r.endpoint("s1"); ep.LagExcluded || !ep.Routable || ep.Lag > 20 {
		t.Fatalf("s1 with its head back: lag_excluded=%v routable=%v lag=%d", ep.LagExcluded, ep.Routable, ep.Lag)
	}
}
