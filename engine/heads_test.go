package engine_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

func resultString(t testing.TB, r reply) string {
	t.Helper()
	var m struct{ Result json.RawMessage }
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	return string(m.Result)
}

func TestHeads_BlockNumberNeverGoesBackwards(t *testing.T) {
	fast := sim.Latency{Median: time.Millisecond}
	h := newHarness(t, func(c *engine.Config) {
		c.Chain.MaxHeadLag = 20               // well above the 3-block lag, so a loaded machine does not exclude s1
		c.Router.LagPenalty = time.Nanosecond // spread traffic over the lagging endpoint too
	},
		sim.Config{Latency: fast, BlockTime: 50 * time.Millisecond},
		sim.Config{Latency: fast, BlockTime: 50 * time.Millisecond, HeadLag: 3},
		sim.Config{Latency: fast, BlockTime: 50 * time.Millisecond})
	// Every other run of 50 calls has only the lagging endpoint routable, so
	// answers switch between in-sync and lagging endpoints whatever the
	// latencies on this machine.
	setDrained := func(drain bool) {
		verb := map[bool]string{true: "drain", false: "undrain"}[drain]
		for _, name := range []string{"s0", "s2"} {
			if code, b := h.adminDo("POST", "/v1/endpoints/"+name+"/"+verb, ""); code != 200 {
				t.Fatalf("%s %s: %d %s", verb, name, code, b)
			}
		}
	}
	var last int64
	lagging := 0
	for i := 0; i < 1000; i++ {
		onlyLagging := i/50%2 == 1
		if i%50 == 0 {
			setDrained(onlyLagging)
		}
		r := h.call(i, "eth_blockNumber")
		mustOK(t, r)
		v, err := strconv.ParseInt(strings.Trim(resultString(t, r), `"`)[2:], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if v < last {
			t.Fatalf("call %d: head went back from %d to %d (answered by %s)", i, last, v, r.endpoint)
		}
		if r.endpoint == "s1" {
			lagging++
		}
		last = v
		// The newest block is there, whoever is asked.
		if i%10 == 0 && !onlyLagging {
			b := h.call(i, "eth_getBlockByNumber", "0x"+strconv.FormatInt(v, 16), false)
			mustOK(t, b)
			if resultString(t, b) == "null" {
				t.Fatalf("block %d came back null from %s", v, b.endpoint)
			}
		}
	}
	if lagging < 500 {
		t.Fatalf("the lagging endpoint answered %d calls, want at least the 500 when it was alone", lagging)
	}
	t.Logf("lagging endpoint answered %d of 1000 eth_blockNumber calls", lagging)
}

// chain.pin = "off" pins nothing, as unset: a read without a tag goes
// upstream as the client sent it.
func TestPin_OffSendsReadsAsGiven(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Chain.Pin = "off" }, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr))
	if got := h.sims[0].Requests("eth_getBalance"); len(got) != 1 || strings.Contains(string(got[0]), "off") || strings.Contains(string(got[0]), "finalized") {
		t.Fatalf("params seen upstream: %s", got)
	}
}

func TestPin_FinalizedAddedOnlyWhereNoTagWasGiven(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Chain.Pin = "finalized" }, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr))
	mustOK(t, h.call(2, "eth_getBalance", addr, "latest"))
	mustOK(t, h.call(3, "eth_call", map[string]string{"to": addr, "data": "0x"}))
	got := h.sims[0].Requests("eth_getBalance")
	if len(got) != 2 || !strings.Contains(string(got[0]), `"finalized"`) || !strings.Contains(string(got[1]), `"latest"`) || strings.Contains(string(got[1]), "finalized") {
		t.Fatalf("params seen upstream: %s", got)
	}
	if c := h.sims[0].Requests("eth_call"); len(c) != 1 || !strings.Contains(string(c[0]), `"finalized"`) {
		t.Fatalf("eth_call params upstream: %s", c)
	}
}
