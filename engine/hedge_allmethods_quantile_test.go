package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/engine"
	"github.com/rpcdash/rpcdash/sim"
)

// An all-methods update of the delay (the console's + - a on "(all
// methods)") clears the live per-method delays only: a method's live auto
// quantile, set from the tuning view, is not what it sets and stays.
func TestHedge_AllMethodsDelayKeepsALiveMethodQuantile(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{}, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	for _, body := range []string{
		`{"method":"eth_getBalance","delay":"auto","quantile":0.8}`,
		`{"delay":"100ms","all_methods":true}`,
	} {
		if code, b := h.adminDo("PUT", "/v1/hedge", body); code != 200 {
			t.Fatalf("%s: %d %s", body, code, b)
		}
	}
	code, b := h.adminDo("GET", "/v1/methods/eth_getBalance/distribution", "")
	if code != 200 {
		t.Fatalf("distribution: %d %s", code, b)
	}
	var d struct {
		Hedge struct {
			Quantile float64 `json:"quantile"`
		} `json:"hedge"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Hedge.Quantile != 0.8 {
		t.Fatalf("the method's live quantile 0.8 became %v after an all-methods delay update", d.Hedge.Quantile)
	}
}

// The event of an all-methods update names the methods whose live
// settings it cleared as the client spelt them (eth_getBalance), not as
// the engine files them (eth_getbalance: no node knows that name).
func TestHedge_AllMethodsEventNamesTheClearedMethodAsSpelt(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hedge.Enabled = true }, sim.Config{}, sim.Config{})
	mustOK(t, h.call(1, "eth_getBalance", addr, "latest"))
	for _, body := range []string{`{"method":"eth_getBalance","delay":"60ms"}`, `{"delay":"100ms","all_methods":true}`} {
		if code, b := h.adminDo("PUT", "/v1/hedge", body); code != 200 {
			t.Fatalf("%s: %d %s", body, code, b)
		}
	}
	evs := h.events()
	if last := evs[len(evs)-1].Message; !strings.Contains(last, "live overrides cleared: eth_getBalance)") {
		t.Fatalf("last event %q: want the cleared method named eth_getBalance", last)
	}
}
