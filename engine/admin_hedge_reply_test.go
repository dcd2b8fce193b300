package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// PUT /v1/hedge with a method answered only the pool's settings: setting
// eth_getBalance to 100ms (or its quantile to 0.9) answered "delay": "auto"
// and "quantile": 0.95, as if the change had not applied. The answer now
// carries the method's settings beside the pool's, which stay as they were.
func TestAdmin_PutHedgeForAMethodAnswersTheMethodsSettings(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{Latency: fixed(0)})
	for _, c := range []struct {
		body     string
		delayMS  float64
		source   string
		quantile float64
	}{
		{`{"method":"eth_getBalance","delay":"100ms"}`, 100, "live", 0},
		{`{"method":"eth_getBalance","delay":"auto","quantile":0.9}`, -1, "", 0.9},
	} {
		code, body := h.send("PUT", h.admin+"/v1/hedge", c.body, nil)
		if code != 200 {
			t.Fatalf("%s: HTTP %d %s", c.body, code, body)
		}
		var got struct {
			Delay       string `json:"delay"`
			Quantile    float64
			Method      string `json:"method"`
			MethodHedge *struct {
				Enabled     bool    `json:"enabled"`
				DelayMS     float64 `json:"delay_ms"`
				DelaySource string  `json:"delay_source"`
				Quantile    float64 `json:"quantile"`
			} `json:"method_hedge"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("%s: %v in %s", c.body, err, body)
		}
		if got.Delay != "auto" || got.Quantile != 0.95 {
			t.Errorf("%s: pool delay %q quantile %v; want the pool's auto at 0.95 unchanged", c.body, got.Delay, got.Quantile)
		}
		m := got.MethodHedge
		if got.Method != "eth_getBalance" || m == nil || !m.Enabled {
			t.Fatalf("%s: method %q, method_hedge %+v; want eth_getBalance's settings: %s", c.body, got.Method, m, body)
		}
		if c.delayMS >= 0 && (m.DelayMS != c.delayMS || m.DelaySource != c.source) {
			t.Errorf("%s: method delay %vms (%s); want %vms (%s)", c.body, m.DelayMS, m.DelaySource, c.delayMS, c.source)
		}
		if c.quantile != 0 && m.Quantile != c.quantile {
			t.Errorf("%s: method quantile %v; want %v", c.body, m.Quantile, c.quantile)
		}
	}
}
