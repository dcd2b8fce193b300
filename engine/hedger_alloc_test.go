package engine

import (
	"testing"
	"time"
)

// The hedge delay is asked for on every hedgeable read: looking it up,
// overrides included, must not allocate.
func TestHedger_DelayForDoesNotAllocate(t *testing.T) {
	cfg := Default()
	cfg.Hedge.Methods = map[string]HedgeMethodConfig{"eth_call": {Delay: "30ms"}}
	h := newHedger(cfg.Hedge, time.Minute, time.Now, func(Event) {})
	for _, m := range []string{"eth_getBalance", "eth_call", "ETH_CALL"} {
		h.observePrimary(m, 10*time.Millisecond, false)
		if a := testing.AllocsPerRun(100, func() { h.delayFor(m) }); a != 0 {
			t.Errorf("delayFor(%s) allocates %.0f times", m, a)
		}
	}
	if d := h.delayFor("ETH_CALL"); d.Delay != 30*time.Millisecond {
		t.Errorf("override for eth_call not found under ETH_CALL: %+v", d)
	}
}
