package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// quickPace and slowPace are two endpoints' models. The quick one's p95
// is 1.64 × its median (σ 0.3), so that a quick canary measured while the
// machine is busier than when the primary was (its median up by tens of
// milliseconds) is still within the primary's p95 and 5 ms; the slow one's
// every answer is far past it.
var (
	quickPace = sim.Latency{Median: 50 * time.Millisecond, Sigma: 0.3}
	slowPace  = sim.Latency{Median: 300 * time.Millisecond, Sigma: 0.1}
)

// The seeds audit's G5: a canary six times slower than the primary, with a
// clean error rate, was promoted. Its median above the primary's p95 on
// the same method refuses the promotion (409 naming both figures) unless
// forced; a canary as quick as the primary is promoted, the answer saying
// its latency was judged and passed. With hedging on, the slow canary's
// attempts lose to hedges and are cut short: counted as censored, they
// still refuse it.
func TestRoleAPI_ACanaryFarSlowerThanThePrimariesIsNotPromoted(t *testing.T) {
	t.Parallel() // mostly waiting on 300 ms answers
	for _, hedging := range []bool{false, true} {
		name := map[bool]string{false: "hedging off", true: "hedging on"}[hedging]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) {
				c.Hedge.Enabled = hedging
				c.Endpoints[1].Role, c.Endpoints[2].Role = engine.RoleStandby, engine.RoleStandby
			}, sim.Config{Name: "alpha", Latency: quickPace}, sim.Config{Name: "beta", Latency: slowPace},
				sim.Config{Name: "gamma", Latency: quickPace})
			readsFrom(h, 0, 25, 5) // alpha's own pace
			if code, out := h.putRole("beta", `{"role": "canary", "share": 1}`); code != 200 {
				t.Fatalf("standby → canary: HTTP %d %v", code, out)
			}
			readsFrom(h, 100, 25, 5)
			code, out := h.putRole("beta", `{"role": "primary"}`)
			msg, _ := out["error"].(string)
			p, _ := out["promotion"].(map[string]any)
			l, _ := p["latency"].(map[string]any)
			if code != 409 || l["verdict"] != "fail" || l["source"] != "attempts" || l["method"] != "eth_getBalance" || l["primary"] != "alpha" ||
				l["attempts"].(float64) < 20 || l["primary_attempts"].(float64) < 20 || l["p50_ms"].(float64) <= l["primary_p95_ms"].(float64)+5 {
				t.Fatalf("slow canary → primary: HTTP %d %v", code, out)
			}
			if !strings.HasPrefix(msg, "canary beta: latency of eth_getBalance p50 ") || !strings.Contains(msg, " attempts against alpha's p95 ") ||
				!strings.HasSuffix(msg, `surely slower (its median above that p95 and 5ms more); promote with "force": true to override`) {
				t.Fatalf("refusal %q does not name the latencies", msg)
			}
			if r, _ := p["error_rate"].(map[string]any); r["verdict"] == "fail" {
				t.Fatalf("the slow canary's error rate failed too: %v", r)
			}
			if ep := h.endpoint("beta"); ep.Role != engine.RoleCanary {
				t.Fatalf("after the refusal beta is a %s", ep.Role)
			}

			// gamma, as quick as alpha, made the canary in beta's place.
			h.replaceCanary("beta", "gamma", 25, 200)
			code, out = h.putRole("gamma", `{"role": "primary"}`)
			p, _ = out["promotion"].(map[string]any)
			l, _ = p["latency"].(map[string]any)
			ev, _ := p["evidence"].(string)
			if code != 200 || l["verdict"] != "pass" || p["judged"] != true || !strings.Contains(ev, "latency of eth_getBalance p50 ") || !strings.Contains(ev, "not surely slower") {
				t.Fatalf("quick canary → primary: HTTP %d %v", code, out)
			}

			code, out = h.putRole("beta", `{"role": "primary", "force": true}`)
			p, _ = out["promotion"].(map[string]any)
			if code != 200 || p["forced"] != true || p["refused"] != true {
				t.Fatalf("forced slow standby → primary: HTTP %d %v", code, out)
			}
			evs := h.roleEvents("beta")
			if last := evs[len(evs)-1]; !strings.Contains(last.Message, "promoted with force over a failed check: ") || !strings.Contains(last.Message, "surely slower") {
				t.Fatalf("forced promotion's event %+v", last)
			}
		})
	}
}

// A shadow promoted straight to primary is judged on its answers to
// mirrored reads against the client's answering attempts for the same
// requests: six times slower, it is refused though every answer matched.
func TestRoleAPI_AShadowFarSlowerOnItsMirrorsIsNotPromoted(t *testing.T) {
	t.Parallel()
	h := shadowHarness(t, nil, sim.Config{Latency: quickPace}, sim.Config{Latency: slowPace})
	const n = 25
	for i := 0; i < n; i++ {
		mustOK(t, h.call(i, "eth_getBalance", addr, "0x10"))
	}
	if sh := h.settledShadow("beta", n); sh.Match != n || sh.Answered != n {
		t.Fatalf("shadow figures %+v, want %d matches answered", *sh, n)
	}
	code, out := h.putRole("beta", `{"role": "primary"}`)
	msg, _ := out["error"].(string)
	p, _ := out["promotion"].(map[string]any)
	l, _ := p["latency"].(map[string]any)
	c, _ := p["comparison"].(map[string]any)
	if code != 409 || c["verdict"] != "pass" || l["verdict"] != "fail" || l["source"] != "mirrors" || l["attempts"] != float64(n) {
		t.Fatalf("slow shadow → primary: HTTP %d %v", code, out)
	}
	if !strings.HasPrefix(msg, "shadow beta: latency on mirrored reads p50 ") || !strings.Contains(msg, " over 25 against the answering attempts' p95 ") {
		t.Fatalf("refusal %q does not name the mirrors' latencies", msg)
	}
}
