package probes

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/internal/testutil"
	"github.com/rpcdash/rpcdash/sim"
)

// rig is an engine on loopback ports in front of real sim upstreams, with a
// Runner probing them, driven by a real HTTP client.
type rig struct {
	t      testing.TB
	sims   []*sim.Upstream
	eng    *engine.Engine
	run    *Runner
	rpc    string
	client *http.Client
}

// fastBlocks makes sim heads advance quickly, so lag builds up in a test's
// time; all sims with one block time share one true head.
const fastBlocks = 20 * time.Millisecond

// rigConfig probes every 20ms. The lag bound of 20 blocks (400ms) keeps a
// healthy endpoint whose probe a loaded machine delays from looking stale.
func rigConfig() engine.Config {
	c := engine.Default()
	c.Server.Listen = "127.0.0.1:0"
	c.Server.Admin = "127.0.0.1:0"
	c.Server.RequestTimeout = 5 * time.Second
	c.Hedge.Enabled = false
	c.Breaker.Cooldown = time.Second
	c.Chain.MaxHeadLag = 20
	c.Probes.Interval = 20 * time.Millisecond
	c.Probes.Timeout = time.Second
	c.Probes.Recover = 2
	c.Probes.IndependenceInterval = time.Hour
	c.Probes.ASN = "off"
	return c
}

// startSim starts a sim on loopback, closed when the test ends.
func startSim(t testing.TB, sc sim.Config) *sim.Upstream {
	t.Helper()
	if sc.BlockTime == 0 {
		sc.BlockTime = fastBlocks
	}
	u := sim.New(sc)
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	return u
}

// newRig starts sims (named s0, s1, … unless named), an engine with one
// endpoint per sim, and a started Runner; mut edits the config first.
func newRig(t testing.TB, mut func(*engine.Config), sims ...sim.Config) *rig {
	t.Helper()
	r := newUnstartedRig(t, mut, sims...)
	r.run.Start()
	return r
}

// newUnstartedRig is newRig with the Runner not started: no probe loop
// runs, and the test runs rounds itself (newSteppedRig).
func newUnstartedRig(t testing.TB, mut func(*engine.Config), sims ...sim.Config) *rig {
	t.Helper()
	r := &rig{t: t, client: clientFor(t)}
	cfg := rigConfig()
	for i, sc := range sims {
		if sc.Name == "" {
			sc.Name = "s" + strconv.Itoa(i)
		}
		if sc.Seed == 0 {
			sc.Seed = int64(i + 1)
		}
		u := startSim(t, sc)
		r.sims = append(r.sims, u)
		cfg.Endpoints = append(cfg.Endpoints, engine.EndpointConfig{Name: sc.Name, URL: u.URL(),
			Provider: "p" + strconv.Itoa(i), Region: "r" + strconv.Itoa(i)})
	}
	if mut != nil {
		mut(&cfg)
	}
	eng, err := engine.New(cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	r.eng = eng
	r.rpc = "http://" + eng.RPCAddr()
	t.Cleanup(func() {
		if err := eng.Close(); err != nil {
			t.Errorf("engine close: %v", err)
		}
	})
	run, err := NewRunner(eng, eng.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.run = run
	t.Cleanup(run.Close)
	return r
}

type reply struct {
	status   int
	body     []byte
	endpoint string
}

func (r *rig) call(method string, params ...any) reply {
	r.t.Helper()
	if params == nil {
		params = []any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := r.client.Post(r.rpc, "application/json", strings.NewReader(string(b)))
	if err != nil {
		r.t.Fatalf("POST %s: %v", method, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, body: body, endpoint: resp.Header.Get(engine.HeaderEndpoint)}
}

// mustAnswer fails unless the reply is a JSON-RPC result.
func (r *rig) mustAnswer(rep reply) {
	r.t.Helper()
	if rep.status != http.StatusOK || !strings.Contains(string(rep.body), `"result"`) {
		r.t.Fatalf("want a result, got HTTP %d %s", rep.status, rep.body)
	}
}

func (r *rig) endpoint(name string) engine.EndpointSnapshot {
	r.t.Helper()
	for _, ep := range r.eng.Snapshot().Endpoints {
		if ep.Name == name {
			return ep
		}
	}
	r.t.Fatalf("no endpoint %s", name)
	return engine.EndpointSnapshot{}
}

// event returns the first event matching cond, if any.
func (r *rig) event(cond func(engine.Event) bool) (engine.Event, bool) {
	for _, ev := range r.eng.Events(0) {
		if cond(ev) {
			return ev, true
		}
	}
	return engine.Event{}, false
}

// waitEvent waits for an event matching cond and returns it.
func (r *rig) waitEvent(limit time.Duration, what string, cond func(engine.Event) bool) engine.Event {
	r.t.Helper()
	var found engine.Event
	testutil.WaitUntil(r.t, limit, what, func() bool {
		ev, ok := r.event(cond)
		found = ev
		return ok
	})
	return found
}

// waitHeads waits until every endpoint has a probed head.
func (r *rig) waitHeads() {
	r.t.Helper()
	testutil.WaitUntil(r.t, 5*time.Second, "every endpoint's first head", func() bool {
		for _, ep := range r.eng.Snapshot().Endpoints {
			if ep.Head == 0 {
				return false
			}
		}
		return true
	})
}

func headEvent(name, to string) func(engine.Event) bool {
	return func(ev engine.Event) bool {
		return ev.Type == engine.EventHead && ev.Endpoint == name && ev.To == to
	}
}

// clientFor is an HTTP client whose idle connections close with the test.
func clientFor(t testing.TB) *http.Client {
	c := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(c.CloseIdleConnections)
	return c
}
