package probes

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"go.uber.org/goleak"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

func TestProbes_RTTFeedsEndpointLatencyWithoutClientTraffic(t *testing.T) {
	r := newRig(t, nil, sim.Config{ChainID: 1, Latency: sim.Latency{Median: 2 * time.Millisecond}}, sim.Config{ChainID: 1})
	testutil.WaitUntil(t, 5*time.Second, "five probes of s0", func() bool {
		return r.endpoint("s0").Methods["eth_blockNumber"].Latency.Count >= 5
	})
	ep := r.endpoint("s0")
	if ep.Latency.Count < 5 || ep.Latency.P50 < 2 {
		t.Errorf("s0 latency %+v: want probe RTTs of at least the sim's 2ms", ep.Latency)
	}
	// One identity probe a round (probes.identity_every 1), sent before the
	// round's head probe: one more than the heads while a round is between
	// the two.
	if id, heads := ep.Methods["eth_chainId"].Rates.Successes, ep.Methods["eth_blockNumber"].Rates.Successes; id != heads && id != heads+1 {
		t.Errorf("eth_chainId probed %d times beside %d eth_blockNumber, want one a round", id, heads)
	}
	if n := r.eng.Snapshot().Totals.Requests; n != 0 {
		t.Fatalf("%d client requests counted; probes are not client traffic", n)
	}
}

func TestProbes_InjectedFaultSeenByProbesOpensBreaker(t *testing.T) {
	for _, mode := range []engine.FaultMode{engine.FaultTimeout, engine.FaultError} {
		t.Run(string(mode), func(t *testing.T) {
			r := newRig(t, func(c *engine.Config) { c.Probes.Timeout = 100 * time.Millisecond },
				sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
			r.waitHeads()
			if err := r.eng.InjectFault(engine.ActorAdmin, "s0", engine.FaultSpec{Mode: mode}); err != nil {
				t.Fatal(err)
			}
			// Counted from the first probe the fault failed: a probe sent
			// just before the fault may reach the sim after it (1 of 40
			// CI runs), and an endpoint's probes never overlap, so none
			// sent before is still on its way then.
			testutil.WaitUntil(t, 5*time.Second, "a probe of s0 failed by the fault", func() bool {
				return r.endpoint("s0").Rates.Failures >= 1
			})
			before := r.sims[0].Counters().Total
			testutil.WaitUntil(t, 5*time.Second, "s0's breaker open", func() bool {
				return r.endpoint("s0").Breaker.State == engine.BreakerOpen
			})
			ep := r.endpoint("s0")
			if ep.Rates.Failures < 3 || !strings.HasPrefix(ep.LastError, "probe: ") {
				t.Errorf("s0 after probes failed: failures=%d last_error=%q", ep.Rates.Failures, ep.LastError)
			}
			if mode == engine.FaultTimeout && ep.Rates.Timeouts == 0 {
				t.Errorf("timeouts not counted: %+v", ep.Rates)
			}
			if n := r.eng.Snapshot().Totals.Requests; n != 0 {
				t.Fatalf("%d client requests: the breaker must have opened on probes alone", n)
			}
			if n := r.sims[0].Counters().Total - before; n != 0 {
				t.Errorf("%d requests reached s0 through an injected %s fault", n, mode)
			}
		})
	}
}

func TestProbes_SlowProbeDelaysTheNextInsteadOfOverlapping(t *testing.T) {
	r := newRig(t, func(c *engine.Config) {
		c.Probes.Interval = 10 * time.Millisecond
		c.Probes.Timeout = time.Minute
	}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})
	r.waitHeads()
	hung := r.sims[1]
	hung.SetMode(sim.ModeHang)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Wait for a probe held by the hang, not one answered normally just
	// before the mode changed.
	if err := hung.WaitFor(ctx, func(c sim.Counters) bool { return c.Hanging == 1 && c.InFlight == 1 }); err != nil {
		t.Fatal(err)
	}
	sent := hung.Counters().Total
	// Ten more rounds of s0 are ten intervals in which s1 got nothing new.
	if err := r.sims[0].WaitMethod(ctx, "eth_blockNumber", r.sims[0].MethodCount("eth_blockNumber")+10); err != nil {
		t.Fatal(err)
	}
	if c := hung.Counters(); c.Total != sent || c.Hanging != 1 {
		t.Fatalf("s1 got %d more probes while one hung (%d in flight)", c.Total-sent, c.InFlight)
	}
}

func TestRunner_CloseCancelsHungProbesAndLeavesNoGoroutines(t *testing.T) {
	u := startSim(t, sim.Config{Name: "s0", ChainID: 1})
	cfg := rigConfig()
	cfg.Probes.Timeout = time.Minute
	cfg.Endpoints = []engine.EndpointConfig{{Name: "s0", URL: u.URL()}}
	eng, err := engine.New(cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	run, err := NewRunner(eng, eng.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	run.Start()
	testutil.WaitUntil(t, 5*time.Second, "a head", func() bool { return eng.Snapshot().MaxHead > 0 })
	u.SetMode(sim.ModeHang)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := u.WaitFor(ctx, func(c sim.Counters) bool { return c.Hanging == 1 }); err != nil {
		t.Fatal(err)
	}

	closed := make(chan struct{})
	go func() { run.Close(); close(closed) }()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return while a probe hung (probes.timeout is a minute)")
	}
	if stacks := goroutineStacks(); strings.Contains(stacks, "probes.(*prober)") || strings.Contains(stacks, "probes.(*Runner)") {
		t.Fatalf("runner goroutines outlived Close:\n%s", stacks)
	}
	run.Close()
	run.Start() // after Close: must not start anything
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t)
}

func goroutineStacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

func TestRunner_IndependenceAtStartAndEveryInterval(t *testing.T) {
	f := startFakeDNS(t)
	f.a("localhost", "127.0.0.1")
	r := newRig(t, func(c *engine.Config) {
		c.Probes.Resolver = f.addr
		c.Probes.ASN = "cymru"
		c.Probes.IndependenceInterval = time.Second // the least probes.independence_interval takes
		c.Endpoints[0].URL = strings.Replace(c.Endpoints[0].URL, "127.0.0.1", "localhost", 1)
	}, sim.Config{ChainID: 1}, sim.Config{ChainID: 1})

	testutil.WaitUntil(t, 5*time.Second, "two independence checks", func() bool { return f.count("localhost", dns.TypeA) >= 2 })
	snap := r.eng.Snapshot()
	s0, s1 := snap.Endpoints[0], snap.Endpoints[1]
	if s0.Independence == nil || s1.Independence == nil {
		t.Fatalf("independence not in the snapshot: %+v %+v", s0.Independence, s1.Independence)
	}
	for _, ep := range []engine.EndpointSnapshot{s0, s1} {
		in := ep.Independence
		if !slices.Equal(in.IPs, []string{"127.0.0.1"}) || !slices.Equal(in.ASNs, []string{"unknown"}) || in.CheckedAt.IsZero() {
			t.Errorf("%s: %+v", ep.Name, in)
		}
	}
	if s0.Domain == "" || s0.Domain != s1.Domain {
		t.Errorf("domains %q and %q: endpoints on one IP are one failure domain", s0.Domain, s1.Domain)
	}
	want := []engine.Warning{
		{Endpoints: []string{"s0", "s1"}, Reason: "ip", Text: "s0 and s1 resolve to the same IP 127.0.0.1"},
		{Reason: "pool", Text: "only one failure domain"},
	}
	for _, w := range want {
		if !slices.ContainsFunc(snap.Warnings, func(got engine.Warning) bool {
			return strings.Contains(got.Text, w.Text) && got.Reason == w.Reason && (w.Endpoints == nil || slices.Equal(got.Endpoints, w.Endpoints))
		}) {
			t.Errorf("warnings %+v lack %+v", snap.Warnings, w)
		}
	}
}

func TestNewRunner_RejectsWhatItCannotRun(t *testing.T) {
	u := startSim(t, sim.Config{ChainID: 1})
	base := rigConfig()
	base.Endpoints = []engine.EndpointConfig{{Name: "s0", URL: u.URL()}}
	eng, err := engine.New(base, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*engine.Config){
		"chain kind":     func(c *engine.Config) { c.Chain.Kind = "bitcoin" },
		"interval":       func(c *engine.Config) { c.Probes.Interval = 0 },
		"identity_every": func(c *engine.Config) { c.Probes.IdentityEvery = 0 },
		"asn database":   func(c *engine.Config) { c.Probes.ASN, c.Probes.ASNDB = "db", t.TempDir()+"/missing.mmdb" },
	} {
		cfg := eng.Config()
		mut(&cfg)
		if _, err := NewRunner(eng, cfg, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewRunner(nil, base, nil); err == nil {
		t.Error("nil engine: no error")
	}
}
