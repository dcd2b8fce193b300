package engine

import (
	"github.com/rpcdash/rpcdash/engine/internal/jsonrpc"
)

// hedgeSetting is what a method's hedging is set to, as opposed to what
// its window makes of it: an auto delay is the rule (auto at its quantile),
// not the value the rule gives now, which moves with every primary. Two
// settings are equal when the method hedges the same way under both.
type hedgeSetting struct {
	enabled  bool
	delay    int64   // AutoDelay for auto, else the fixed delay
	quantile float64 // the auto delay's; 0 for a fixed delay
	budget   float64 // hedge.budget: pool-wide, but it caps each method's hedges
}

// settingOf is method's hedge setting in force now (delayFor's rules).
func (h *hedger) settingOf(method string) hedgeSetting {
	h.mu.RLock()
	s := h.settingLocked(method)
	h.mu.RUnlock()
	s.budget, _, _ = h.budget.state()
	return s
}

func (h *hedger) settingLocked(method string) hedgeSetting {
	s := hedgeSetting{enabled: h.enabled, delay: int64(h.delay), quantile: h.quantile}
	if o, ok := jsonrpc.LookupFold(h.overrides, method); ok {
		if o.enabled != nil {
			s.enabled = *o.enabled
		}
		if o.delay != nil {
			s.delay = int64(*o.delay)
		}
		if o.quantile > 0 {
			s.quantile = o.quantile
		}
	}
	if s.delay != int64(AutoDelay) {
		s.quantile = 0
	}
	return s
}

// settingsNow is every tracked method's setting, taken at one instant.
func (h *hedger) settingsNow() map[string]hedgeSetting {
	budget, _, _ := h.budget.state()
	out := map[string]hedgeSetting{}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for k := range h.methods.all() {
		s := h.settingLocked(k)
		s.budget = budget
		out[k] = s
	}
	return out
}
