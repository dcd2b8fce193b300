package engine_test

import (
	"strings"
	"testing"

	"github.com/rpcdash/rpcdash/sim"
)

// A fault injected over another says which it replaced, as clearing one
// does: /v1/events showed "to latency" with no "from" while an error fault
// had been in force.
func TestEventLog_AFaultReplacingAnotherSaysWhich(t *testing.T) {
	h := newHarness(t, nil, sim.Config{Latency: fixed(0)})
	for _, body := range []string{`{"mode":"error","rate":0.1}`, `{"mode":"latency","latency":"100ms"}`} {
		if code, b := h.adminDo("POST", "/v1/endpoints/s0/fault", body); code != 200 {
			t.Fatalf("%s: HTTP %d %s", body, code, b)
		}
	}
	evs := h.events()
	first, second := evs[len(evs)-2], evs[len(evs)-1]
	if first.From != "" || first.To != "error" {
		t.Errorf("the first fault: from %q to %q, want from nothing to error", first.From, first.To)
	}
	if second.From != "error" || second.To != "latency" || !strings.Contains(second.Message, "replaces the error fault") {
		t.Errorf("the second fault: from %q to %q %q, want from error to latency, saying so", second.From, second.To, second.Message)
	}
}
